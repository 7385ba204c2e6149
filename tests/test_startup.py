"""Start-up: a window is on screen before torch is imported, and the main window takes its place."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

DRIVER = """
import json, sys
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtGui import QWindow
from PySide6.QtWidgets import QApplication

app = QApplication(sys.argv[:1])
seen = {}

class Probe(QObject):
    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Expose and isinstance(obj, QWindow) and obj.isExposed():
            seen.setdefault("first_title", obj.title())
            seen.setdefault("torch_loaded_at_first_window", "torch" in sys.modules)
        return False

probe = Probe()
app.installEventFilter(probe)

def check():
    windows = [w for w in QApplication.topLevelWidgets() if w.inherits("QMainWindow") and w.isVisible()]
    if windows and windows[0].state.result is not None:
        seen["visible"] = sorted(type(w).__name__ for w in QApplication.topLevelWidgets() if w.isVisible())
        windows[0].close()
        app.quit()
    else:
        QTimer.singleShot(50, check)

QTimer.singleShot(0, check)
QTimer.singleShot(60000, app.quit)
from explorer.app import run_app
code = run_app(["--panel", "attention"])
print("RESULT", json.dumps(dict(seen, code=code)))
"""


@pytest.mark.slow
def test_a_window_shows_before_torch_is_imported_then_the_main_window_replaces_it(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", DRIVER], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=120)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stderr[-2000:]
    seen = json.loads(lines[-1][len("RESULT "):])
    assert seen["code"] == 0
    assert seen["torch_loaded_at_first_window"] is False
    assert seen["first_title"].startswith("Transformer Explorer")
    assert seen["visible"] == ["MainWindow"]  # the start-up window is gone


def test_panel_names_known_without_importing_the_panels_match_the_panels():
    from explorer.launch import PANEL_NAMES
    from explorer.panels import panel_classes
    assert tuple(cls.panel_name for cls in panel_classes()) == PANEL_NAMES


def test_import_in_background_reraises_in_the_gui_thread(qapp):
    from explorer.startup import import_in_background
    with pytest.raises(ModuleNotFoundError, match="no_such_module_for_the_test"):
        import_in_background("json", "no_such_module_for_the_test")
