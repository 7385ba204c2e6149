"""Faults around checkpoints (issue 16): a foreign --out folder, a full disk, a kill in the middle of
the atomic swap, absurd sizes in config.json, a deeply nested config, unreadable files and
folders, NaN weights. Each ends in a message naming the file or field, and nothing is lost."""
from __future__ import annotations

import json
import os
import pathlib
import resource
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import torch

from model.cli import train_main
from model.io.checkpoints import (
    CheckpointError,
    CheckpointWarning,
    load_checkpoint,
    random_bundle,
    recover_interrupted_save,
    save_checkpoint,
)

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def bundle():
    torch.manual_seed(0)
    return random_bundle("reverse", d_model=32, d_ff=64, max_len=32)


def edit_config(folder: Path, change) -> None:
    data = json.loads((folder / "config.json").read_text())
    change(data)
    (folder / "config.json").write_text(json.dumps(data))


# 1 -- a foreign folder holding a config.json ---------------------------------------------------
def test_train_refuses_a_foreign_folder_holding_a_config_json(tmp_path, capsys):
    project = tmp_path / "someones-project"
    (project / "src").mkdir(parents=True)
    (project / "config.json").write_text('{"name": "my app", "debug": true}')
    (project / "src" / "main.py").write_text("print('precious')\n")
    code = train_main(["--task", "reverse", "--out", str(project), "--steps", "1", "--quiet"])
    assert code == 1
    err = capsys.readouterr().err
    assert str(project) in err and "not a checkpoint" in err and "refusing to overwrite" in err
    assert (project / "src" / "main.py").read_text() == "print('precious')\n"
    assert sorted(p.name for p in project.iterdir()) == ["config.json", "src"]


def test_save_refuses_our_checkpoint_folder_with_other_files_in_it(tmp_path, bundle):
    path = save_checkpoint(bundle, tmp_path / "ck")
    (path / "notes.txt").write_text("my notes")
    with pytest.raises(CheckpointError, match=r"also holds notes.txt, which saving would delete"):
        save_checkpoint(bundle, path)
    assert (path / "notes.txt").read_text() == "my notes"


# 2 -- a full disk while saving -----------------------------------------------------------------
def test_full_disk_while_saving_is_a_clear_message_and_keeps_the_previous_checkpoint(tmp_path, bundle):
    path = save_checkpoint(bundle, tmp_path / "ck", metrics={"v": 1})
    before = (path / "model.safetensors").read_bytes()
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (16_384, hard))  # `ulimit -f 16`: Python ignores SIGXFSZ
    try:
        with pytest.raises(CheckpointError) as caught:
            save_checkpoint(bundle, path, metrics={"v": 2})
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    message = str(caught.value)
    assert str(path) in message and "writing model.safetensors failed" in message
    assert "size limit" in message and "previous checkpoint, if any, is unchanged" in message
    assert (path / "model.safetensors").read_bytes() == before
    assert load_checkpoint(path).metrics == {"v": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["ck"]  # no half-written temp folder left


def test_save_fsyncs_the_weights_the_config_and_the_folders(tmp_path, bundle, monkeypatch):
    synced = []
    real_fsync = os.fsync

    def spy(fd):
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        return real_fsync(fd)

    monkeypatch.setattr(os, "fsync", spy)
    save_checkpoint(bundle, tmp_path / "ck")
    names = [Path(p).name for p in synced]
    assert "model.safetensors" in names and "config.json" in names
    assert any(Path(p).name.startswith(".ck.saving-") for p in synced)  # the new folder's entries
    assert str(tmp_path) in synced  # the rename into place


# 3 -- a kill between the two renames of the swap -----------------------------------------------
KILL_BETWEEN_RENAMES = textwrap.dedent("""
    import os, signal, sys, torch
    from model.io.checkpoints import random_bundle, save_checkpoint
    path = sys.argv[1]
    torch.manual_seed(0)
    bundle = random_bundle("reverse", d_model=32, d_ff=64, max_len=32)
    real_replace, calls = os.replace, []
    def replace(src, dst):
        calls.append(dst)
        if len(calls) == 2:  # the old checkpoint is aside, the new one not yet in place
            os.kill(os.getpid(), signal.SIGKILL)
        return real_replace(src, dst)
    os.replace = replace
    save_checkpoint(bundle, path, metrics={"v": 2})
""")


@pytest.fixture
def killed_mid_swap(tmp_path, bundle):
    path = save_checkpoint(bundle, tmp_path / "ck", metrics={"v": 1})
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", KILL_BETWEEN_RENAMES, str(path)], env=env, timeout=120)
    assert done.returncode == -9
    assert not path.exists()  # what the issue saw: no --out at all
    names = sorted(p.name for p in tmp_path.iterdir())
    assert any(n.startswith(".ck.old-") for n in names) and any(n.startswith(".ck.saving-") for n in names)
    return path


@pytest.mark.slow
def test_a_kill_between_the_renames_is_recovered_by_the_next_load(killed_mid_swap):
    path = killed_mid_swap
    with pytest.warns(CheckpointWarning, match="restored the previous checkpoint"):
        assert load_checkpoint(path).metrics == {"v": 1}
    assert sorted(p.name for p in path.parent.iterdir()) == ["ck"]  # .old-* and .saving-* cleaned up


@pytest.mark.slow
def test_a_kill_between_the_renames_is_recovered_by_the_next_save(killed_mid_swap, bundle):
    path = killed_mid_swap
    save_checkpoint(bundle, path, metrics={"v": 3})
    assert load_checkpoint(path).metrics == {"v": 3}
    assert sorted(p.name for p in path.parent.iterdir()) == ["ck"]


def test_leftover_temp_folders_are_cleaned_without_touching_others(tmp_path, bundle):
    path = save_checkpoint(bundle, tmp_path / "ck")
    for name in (".ck.saving-abc", ".ck.old-def", ".other.old-ghi", "keep"):
        (tmp_path / name).mkdir()
    assert recover_interrupted_save(path) is False  # nothing to restore: ck exists
    assert sorted(p.name for p in tmp_path.iterdir()) == [".other.old-ghi", "ck", "keep"]


# 4, 5 -- absurd sizes in config.json and on the command line -----------------------------------
@pytest.mark.parametrize("field, value", [("n_encoder_layers", 10**9), ("max_len", 10**12), ("d_ff", 10**11),
                                          ("src_vocab_size", 10**10)])
def test_absurd_sizes_are_refused_quickly_naming_the_field(tmp_path, bundle, field, value):
    path = save_checkpoint(bundle, tmp_path / "ck")
    edit_config(path, lambda d: d["model"].update({field: value}))
    start = time.perf_counter()
    with pytest.raises(CheckpointError, match=rf"config.json: {field} is {value:,}; at most"):
        load_checkpoint(path)
    assert time.perf_counter() - start < 5


def test_train_refuses_a_billion_layers(tmp_path, capsys):
    code = train_main(["--task", "reverse", "--out", str(tmp_path / "ck"), "--layers", "1000000000", "--quiet"])
    assert code == 1
    assert "n_encoder_layers is 1,000,000,000; at most 1,024" in capsys.readouterr().err
    assert not (tmp_path / "ck").exists()


def test_config_is_checked_against_the_weights_before_the_model_is_built(tmp_path, bundle, monkeypatch):
    path = save_checkpoint(bundle, tmp_path / "ck")
    edit_config(path, lambda d: d["model"].update(d_model=4096, n_heads=4, d_ff=16384))  # fits the bounds
    import model.io.checkpoints as ck
    built = []
    real = ck.Transformer

    def spy(config):
        built.append(torch.get_default_device().type)
        return real(config)

    monkeypatch.setattr(ck, "Transformer", spy)
    with pytest.raises(CheckpointError, match=r"model.safetensors: tensor 'src_embed.lut.weight' has shape "
                                              r"\(\d+, 32\) but config.json describes \(\d+, 4096\)"):
        load_checkpoint(path)
    assert built == ["meta"]  # only the shape check's model, which allocates nothing


# 6 -- a deeply nested config / tour ------------------------------------------------------------
def test_a_deeply_nested_config_is_a_checkpoint_error(tmp_path, bundle):
    path = save_checkpoint(bundle, tmp_path / "ck")
    (path / "config.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(CheckpointError, match=r"config.json: nested too deeply"):
        load_checkpoint(path)


def test_a_deeply_nested_tour_is_a_scene_error(tmp_path):
    from model.io.scenes import SceneError, load_tour
    tour = tmp_path / "tour.json"
    tour.write_text('{"scenes": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(SceneError, match=r"tour.json: nested too deeply"):
        load_tour(tour)


# 7, 8 -- unreadable files and folders (root reads everything, so there the OS's answer is simulated)
def _deny(monkeypatch, target: Path) -> None:
    if os.geteuid() != 0:
        os.chmod(target, 0)
        return
    real_open, real_is_file = open, pathlib.Path.is_file

    def denied(path):
        raise PermissionError(13, "Permission denied", str(path))

    import model.io.checkpoints as ck
    monkeypatch.setattr(ck, "open", lambda file, *a, **k: denied(file) if Path(file) == target
                        else real_open(file, *a, **k), raising=False)
    monkeypatch.setattr(pathlib.Path, "is_file", lambda self: denied(self) if self.parent == target
                        else real_is_file(self))


def test_an_unreadable_weights_file_is_named(tmp_path, bundle, monkeypatch):
    path = save_checkpoint(bundle, tmp_path / "ck")
    _deny(monkeypatch, path / "model.safetensors")
    try:
        with pytest.raises(CheckpointError, match=r"ck/model.safetensors: cannot read it \(Permission denied\)"):
            load_checkpoint(path)
    finally:
        os.chmod(path / "model.safetensors", 0o644)


def test_an_unreadable_folder_is_named(tmp_path, bundle, monkeypatch):
    path = save_checkpoint(bundle, tmp_path / "ck")
    _deny(monkeypatch, path)
    try:
        with pytest.raises(CheckpointError, match=r"ck/config.json: cannot read it \(Permission denied\)"):
            load_checkpoint(path)
    finally:
        os.chmod(path, 0o755)


def test_nan_weights_load_with_a_warning(tmp_path, bundle):
    import copy
    nan = copy.deepcopy(bundle)
    with torch.no_grad():
        for p in nan.model.parameters():
            p.fill_(float("nan"))
    path = save_checkpoint(nan, tmp_path / "ck")
    with pytest.warns(CheckpointWarning, match=r"model.safetensors: \d+ of \d+ weight tensors hold NaN"):
        load_checkpoint(path)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", CheckpointWarning)
        load_checkpoint(save_checkpoint(bundle, tmp_path / "fine"))  # finite weights: no warning


def _gui_runner(qtbot):
    from explorer.runner import Runner
    from explorer.state import SessionState
    state = SessionState()
    messages: list[tuple[str, str]] = []
    state.message.connect(lambda level, text: messages.append((level, text)))
    return Runner(state, synchronous=True), state, messages


def test_the_gui_shows_the_nan_warning(qtbot, tmp_path, bundle):
    import copy
    nan = copy.deepcopy(bundle)
    with torch.no_grad():
        for p in nan.model.parameters():
            p.fill_(float("nan"))
    path = save_checkpoint(nan, tmp_path / "ck")
    runner, state, messages = _gui_runner(qtbot)
    runner.load(str(path))  # (the job's worker takes the Python warning; the window says it)
    assert state.bundle is not None and state.bundle.path == str(path)
    warned = [text for level, text in messages if level == "warning"]
    assert warned and "NaN" in warned[0] and "model.safetensors" in warned[0]


def test_the_gui_restores_a_checkpoint_a_killed_save_moved_aside(qtbot, tmp_path, bundle):
    """The state a kill between the two renames leaves (tested for real, with a kill, above):
    `ck` gone, the previous checkpoint in `.ck.old-*`. Opening `ck` in the GUI restores it."""
    path = save_checkpoint(bundle, tmp_path / "ck", metrics={"v": 2})
    os.replace(path, tmp_path / ".ck.old-abc123")
    runner, state, messages = _gui_runner(qtbot)
    runner.load(str(path))  # (the job's worker takes the Python warning; the window says it)
    assert state.bundle is not None and state.bundle.metrics == {"v": 2}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ck"]
    assert any(level == "warning" and "restored the previous checkpoint" in text for level, text in messages)
