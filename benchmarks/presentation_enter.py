"""How long the GUI thread is busy when a lecturer first presses F11.

Entering presentation builds every panel not built yet (they are built at the normal scale,
then scaled like the rest), re-polishes the application for the larger fonts and shows one
panel. Each run is a fresh process: the main window offscreen at 1280×720 with the bundled
reverse model and one input, then `presentation.enter()` and the events it queued (deferred
refreshes, a panel's first show) until the event loop has been idle for 50 ms. Prints the
median of --runs.

    .venv/bin/python benchmarks/presentation_enter.py [--runs 3]

Last line: `first_f11_ms: X` (the GUI thread's wall time from the key to idle).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

PROBE = r"""
import json, os, time
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6.QtCore import QElapsedTimer, QSettings
from PySide6.QtWidgets import QApplication
app = QApplication([])
from explorer import style
style.apply_app_style(app)
from explorer.main_window import MainWindow
from explorer.runner import Runner, load_bundle
from explorer.state import SessionState
import tempfile
state = SessionState()
runner = Runner(state, synchronous=True)
ini = os.path.join(tempfile.mkdtemp(), "s.ini")
window = MainWindow(state, runner, settings=QSettings(ini, QSettings.IniFormat), restore=False, persist=False)
window.resize(1280, 720)
window.show()
runner.set_bundle(load_bundle("reverse"), then_run="attention")
for _ in range(50):
    app.processEvents()
    time.sleep(0.01)

def until_idle() -> None:
    quiet = time.perf_counter()
    while time.perf_counter() - quiet < 0.05:
        start = time.perf_counter()
        app.processEvents()
        if time.perf_counter() - start > 0.002:  # it did something: idle starts again
            quiet = time.perf_counter()
        time.sleep(0.001)

start, cpu = time.perf_counter(), time.thread_time()
window.lecture.presentation.enter(full_screen=False)
entered = time.perf_counter()
until_idle()
done = time.perf_counter() - 0.05  # (the idle tail is not the key's)
print(json.dumps({"enter_ms": (entered - start) * 1000, "to_idle_ms": (done - start) * 1000,
                  "cpu_ms": (time.thread_time() - cpu) * 1000}))
"""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), str(root)])))
    runs = []
    for _ in range(args.runs):
        out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, check=True)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    for key in ("enter_ms", "cpu_ms"):
        print(f"{key} (median of {args.runs}): {statistics.median(r[key] for r in runs):.0f}")
    print(f"first_f11_ms: {statistics.median(r['to_idle_ms'] for r in runs):.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
