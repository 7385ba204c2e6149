"""The package as a user gets it: an sdist built from this tree, a wheel built from that sdist,
installed into a fresh venv (offline, no source tree on sys.path, run from an empty folder),
must find its bundled checkpoints, tour and icon (the top-level assets/ folder, shipped as
model/assets/) and show the trained `reverse` model's real output. An editable install of the
tree must find the same files in assets/ itself."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SKIP = (".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis", "runs", "out",
        "tests", "docs", "benchmarks")

pytestmark = pytest.mark.slow


def _fresh_venv(env_dir: Path, env, cwd) -> Path:
    """A venv that borrows this interpreter's site-packages (torch, Qt…) through a .pth: a plain
    path line, so the editable install's own .pth there is not processed."""
    venv.create(env_dir, with_pip=False)
    py = env_dir / "bin" / "python"
    site = _run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd, env).strip()
    borrowed = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    Path(site, "borrowed.pth").write_text("\n".join(sorted(borrowed)) + "\n")
    return py


def _clean_env(tmp: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INDEX="1", QT_QPA_PLATFORM="offscreen",
               HOME=str(tmp / "home"), XDG_CONFIG_HOME=str(tmp / "home" / ".config"))
    return env


FIND_ASSETS = ("import model, explorer\n"
               "from explorer.runner import load_bundle, bundled_checkpoints\n"
               "from model.io.scenes import TOUR_PATH\n"
               "from explorer.app import ICON_PATH\n"
               "print(model.__file__); print(explorer.__file__)\n"
               "print(sorted(bundled_checkpoints()))\n"
               "print(TOUR_PATH.is_file(), ICON_PATH.is_file())\n"
               "print('OUTPUT', load_bundle('reverse').translate('attention'))\n")


def _run(cmd, cwd, env, timeout=300) -> str:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{cmd} exited {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv folder, environment, empty working folder) with the freshly built wheel installed."""
    tmp = tmp_path_factory.mktemp("wheel")
    env = _clean_env(tmp)
    src = tmp / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(*SKIP))
    # sdist first, then the wheel from the unpacked sdist: proves both carry the package data.
    sdist = _run([sys.executable, "-c", "from setuptools import build_meta as b; print(b.build_sdist('dist'))"],
                 src, env).strip().splitlines()[-1]
    with tarfile.open(src / "dist" / sdist) as tar:
        names = tar.getnames()
        assert any(n.endswith("/assets/checkpoints/reverse/model.safetensors") for n in names)
        assert any(n.endswith("/setup.py") for n in names)
        extra = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        tar.extractall(tmp / "sdist", **extra)
    unpacked = next((tmp / "sdist").iterdir())
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
          "-w", str(tmp / "wheels"), str(unpacked)], tmp, env)
    wheel = next((tmp / "wheels").glob("transformer_explorer-*.whl"))
    env_dir = tmp / "venv"
    py = _fresh_venv(env_dir, env, tmp)
    _run([str(py), "-m", "pip", "install", "--no-deps", "--no-index", "--ignore-installed", str(wheel)], tmp, env)
    work = tmp / "work"
    work.mkdir()
    return env_dir, env, work, wheel


def test_wheel_carries_the_bundled_models_tour_and_icon(installed):
    env_dir, env, work, wheel = installed
    import zipfile
    names = zipfile.ZipFile(wheel).namelist()
    for name in ("reverse", "addition", "dates", "translation", "bert-facts", "gpt-facts"):
        assert f"model/assets/checkpoints/{name}/model.safetensors" in names
        assert f"model/assets/checkpoints/{name}/config.json" in names
    assert "model/assets/scenes/tour.json" in names
    assert "model/assets/icons/transformer-explorer.svg" in names
    assert "model/assets/icons/check-dark.svg" in names
    assert not any(n.startswith(("tests/", "assets/")) for n in names)  # no top-level `assets` in site-packages


def test_installed_wheel_runs_the_trained_reverse_model_without_the_source_tree(installed):
    env_dir, env, work, _ = installed
    out = _run([str(env_dir / "bin" / "python"), "-c", FIND_ASSETS], work, env).splitlines()
    assert out[0].startswith(str(env_dir)) and out[1].startswith(str(env_dir)), out  # the installed copy
    assert out[2] == str(["addition", "bert-facts", "dates", "gpt-facts", "reverse", "translation"])
    assert out[3] == "True True"
    assert out[4] == "OUTPUT noitnetta"


def test_installed_console_script_version_and_screenshot(installed):
    env_dir, env, work, _ = installed
    from model import __version__
    script = env_dir / "bin" / "transformer-explorer"
    assert _run([str(script), "--version"], work, env).strip() == f"transformer-explorer {__version__}"
    assert _run([str(env_dir / "bin" / "python"), "-m", "explorer", "--version"], work, env).strip() \
        == f"transformer-explorer {__version__}"
    out = _run([str(script), "--checkpoint", "reverse", "--input", "attention", "--panel", "attention",
                "--screenshot", "fig.png", "--size", "900x600"], work, env)
    assert "model reverse, output 'noitnetta'" in out
    assert (work / "fig.png").stat().st_size > 10_000


def test_editable_install_finds_the_assets_in_the_source_tree(tmp_path):
    env = _clean_env(tmp_path)
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(*SKIP))
    py = _fresh_venv(tmp_path / "venv", env, tmp_path)
    _run([str(py), "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index", "-e", str(src)],
         tmp_path, env)
    work = tmp_path / "work"
    work.mkdir()
    out = _run([str(py), "-c", FIND_ASSETS + "from model.io.assets import assets_root; print(assets_root())\n"],
               work, env).splitlines()
    assert out[0].startswith(str(src / "model")), out  # the source tree's code, not a copy
    assert out[2] == str(["addition", "bert-facts", "dates", "gpt-facts", "reverse", "translation"])
    assert out[3] == "True True"
    assert out[4] == "OUTPUT noitnetta"
    assert out[5] == str((src / "assets").resolve())
