"""The model package is GUI-free (napari's rule for its core): importing it loads no Qt at all,
so training and tests run on a headless machine."""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = ("PySide6", "pyqtgraph", "shiboken6", "explorer")

PROBE = f"""
import importlib, json, pkgutil, sys
import model
names = sorted(m.name for m in pkgutil.walk_packages(model.__path__, "model.") if not m.name.endswith("__main__"))
for name in names:
    importlib.import_module(name)
loaded = sorted(m for m in sys.modules if m.split(".")[0] in {FORBIDDEN!r})
print(json.dumps({{"modules": names, "gui": loaded}}))
"""


def test_importing_every_model_module_loads_no_qt():
    result = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    # the probe really imported the package's modules, not an empty or foreign `model`
    assert {"model.nn.attention", "model.nn.hooks", "model.inference.decoding", "model.nn.transformer"} <= set(report["modules"])
    assert report["gui"] == [], f"model/ pulled in GUI modules: {report['gui']}"


def test_probe_detects_a_gui_import():
    """The check itself works: the same probe reports PySide6 once something imports it."""
    probe = "import PySide6.QtCore\n" + PROBE
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "PySide6.QtCore" in json.loads(result.stdout.strip().splitlines()[-1])["gui"]
