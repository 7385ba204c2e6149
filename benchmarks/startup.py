"""Start-up time of the window: process start → window exposed → first attention map drawn.

`startup_window_s` is the first window on screen (the start-up window with its progress bar,
explorer/startup.py), `startup_main_window_s` the main window, `startup_first_map_s` the first
attention map painted.

Each run is a cold start of a fresh Python process (`transformer-explorer --panel attention
--reset-layout`, the bundled reverse model and its example input) with a probe: an application
event filter that records the first Expose of a top-level window and the first paint inside the
attention panel once it holds a result, then quits. Times are from just before the process is
spawned, so interpreter start-up and every import count. Prints the median of --runs (5).

    python benchmarks/startup.py [--runs 5] [--platform offscreen|xcb]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

PROBE = r"""
import json, sys, time
T0 = float(sys.argv[1])
marks = {}
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtGui import QWindow
from PySide6.QtWidgets import QApplication, QWidget

app = QApplication(sys.argv[:1])

def attention_panel_of(widget):
    while widget is not None:
        if type(widget).__name__ == "AttentionPanel":
            return widget
        widget = widget.parentWidget()
    return None

class Probe(QObject):
    def eventFilter(self, obj, event):
        kind = event.type()
        if kind == QEvent.Type.Expose and isinstance(obj, QWindow) and obj.isExposed():
            marks.setdefault("window", time.time() - T0)  # the first window, whichever it is
            if "main_window" not in marks and any(w.windowHandle() is obj for w in app.topLevelWidgets()
                                                  if w.inherits("QMainWindow")):
                marks["main_window"] = time.time() - T0
        elif kind == QEvent.Type.Paint and "first_map" not in marks and isinstance(obj, QWidget):
            panel = attention_panel_of(obj)
            if panel is not None and getattr(panel, "data", None) is not None and obj.isVisible():
                marks["first_map"] = time.time() - T0
                QTimer.singleShot(0, app.quit)
        return False

probe = Probe()
app.installEventFilter(probe)
QTimer.singleShot(120_000, app.quit)  # never hang a benchmark
from explorer.app import run_app
run_app(["--panel", "attention", "--reset-layout"])
print("PROBE " + json.dumps(marks), flush=True)
"""


def one_run(platform: str, env: dict) -> dict:
    t0 = time.time()
    done = subprocess.run([sys.executable, "-c", PROBE, repr(t0)], env=dict(env, QT_QPA_PLATFORM=platform),
                          capture_output=True, text=True, timeout=180)
    for line in done.stdout.splitlines():
        if line.startswith("PROBE "):
            return json.loads(line[6:])
    raise RuntimeError(f"no probe line (exit {done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--platform", default=os.environ.get("QT_QPA_PLATFORM", "offscreen"))
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as home:  # no saved layout or theme from a real session
        env = dict(os.environ, XDG_CONFIG_HOME=home)
        runs = [one_run(args.platform, env) for _ in range(args.runs)]
    for i, r in enumerate(runs, 1):
        print(f"run {i}: window {r.get('window', float('nan')):.2f} s, main window {r.get('main_window', float('nan')):.2f} s, "
              f"first map {r.get('first_map', float('nan')):.2f} s")
    print(f"startup_window_s: {statistics.median(r['window'] for r in runs):.2f}")
    print(f"startup_main_window_s: {statistics.median(r['main_window'] for r in runs):.2f}")
    print(f"startup_first_map_s: {statistics.median(r['first_map'] for r in runs):.2f}")


if __name__ == "__main__":
    main()
