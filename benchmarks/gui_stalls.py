"""The worst GUI-thread stall over a scripted lecture: a training run shown in the other panels,
Stop, then the whole tour.

The real main window runs offscreen. A 10 ms timer on the GUI thread stamps each tick; a
watchdog thread notes every gap over the threshold and samples the GUI thread's Python stack
while the gap lasts, so a stall is reported with the code that caused it, not only its length.

    .venv/bin/python benchmarks/gui_stalls.py [--train-seconds 20] [--scene-seconds 2] [--threshold-ms 200]

Prints per phase `stall_ms[PHASE]: worst`, then `worst_stall_ms:` and `stalls_over_threshold:`,
then the stack of the worst stall when one passed the threshold. Goal: no stall over 200 ms.
"""
from __future__ import annotations

import argparse
import faulthandler
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("TRANSFORMER_EXPLORER_DATA", tempfile.mkdtemp(prefix="gui-stalls-bench-"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--train-seconds", type=float, default=20.0, help="how long the lecture preset trains")
    p.add_argument("--scene-seconds", type=float, default=2.0, help="time on each tour scene")
    p.add_argument("--threshold-ms", type=float, default=200.0)
    p.add_argument("--size", default="1280x720")
    return p.parse_args(argv)


class StallWatch:
    """GUI-thread ticks every 10 ms; a watchdog thread measures the gaps and samples the stack."""

    def __init__(self, threshold_ms: float):
        from PySide6.QtCore import Qt, QTimer

        self.threshold = threshold_ms / 1000
        self.gui_id = threading.get_ident()
        self.last = time.perf_counter()
        self.phase = "start"
        self.worst: dict[str, float] = {}
        self.stalls: list[tuple[float, str, str]] = []  # (seconds, phase, stack)
        self.timer = QTimer()
        self.timer.setTimerType(Qt.PreciseTimer)
        self.timer.timeout.connect(self._tick)
        self.timer.start(10)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _tick(self) -> None:
        now = time.perf_counter()
        gap = now - self.last
        self.last = now
        self.worst[self.phase] = max(self.worst.get(self.phase, 0.0), gap)

    def _watch(self) -> None:
        seen_for = None
        stack = ""
        while not self._stop.wait(0.02):
            gap = time.perf_counter() - self.last
            if gap > self.threshold:
                if seen_for != self.last:  # a new stall: sample its stack once it passes the threshold
                    seen_for = self.last
                    stack = self._gui_stack()
                    self.stalls.append((gap, self.phase, stack))
                else:
                    self.stalls[-1] = (gap, self.phase, self.stalls[-1][2])
            else:
                seen_for = None

    def _gui_stack(self) -> str:
        """The GUI thread's stack, written by faulthandler (no Python frame object is held here:
        dropping one on this thread could free the GUI thread's Qt objects from the wrong thread)."""
        with tempfile.TemporaryFile("w+") as out:
            faulthandler.dump_traceback(out, all_threads=True)
            out.seek(0)
            text = out.read()
        mine = f"Thread 0x{self.gui_id:016x}"
        for block in text.split("\n\n"):
            if mine in block:
                return "\n".join(block.splitlines()[:16])
        return text

    def stop(self) -> None:
        self._stop.set()
        self.timer.stop()


def spin(seconds: float) -> None:
    from PySide6.QtWidgets import QApplication

    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        QApplication.processEvents()
        time.sleep(0.005)


def spin_until(condition, timeout: float) -> bool:
    from PySide6.QtWidgets import QApplication

    end = time.perf_counter() + timeout
    while time.perf_counter() < end:
        QApplication.processEvents()
        if condition():
            return True
        time.sleep(0.005)
    return False


def main(argv=None) -> int:
    args = parse_args(argv)
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from explorer import style
    from explorer.app import collect_on_gui_thread
    from explorer.launch import parse_size
    from explorer.main_window import MainWindow
    from explorer.runner import Runner
    from explorer.scene_files import TOUR_PATH
    from explorer.state import SessionState

    app = QApplication.instance() or QApplication(sys.argv[:1])
    style.apply_app_style(app)
    state = SessionState()
    runner = Runner(state)
    settings = QSettings(str(Path(tempfile.mkdtemp()) / "settings.ini"), QSettings.IniFormat)
    window = MainWindow(state, runner, settings=settings, restore=False)
    window.resize(*parse_size(args.size))
    window.show()
    collector = collect_on_gui_thread()
    runner.load_default(then_run="attention")
    spin_until(lambda: state.result is not None, 120)
    watch = StallWatch(args.threshold_ms)

    watch.phase = "train"
    window.focus_panel("training")
    panel = window.panels["training"]
    panel.probe.show_others.setChecked(True)
    panel.start()
    spin(args.train_seconds)
    watch.phase = "stop"
    panel.stop()
    spin_until(lambda: panel.run is None, 60)
    spin(2.0)

    watch.phase = "tour"
    window.lecture.deck.open(TOUR_PATH)
    spin(args.scene_seconds)
    deck = window.lecture.deck
    for index in range(1, len(deck.tour.scenes)):
        watch.phase = f"scene {index + 1}"
        deck.go(index)
        spin(args.scene_seconds)
    watch.phase = "end"
    spin(0.5)
    watch.stop()
    collector.timer.stop()

    for phase, worst in watch.worst.items():
        print(f"stall_ms[{phase}]: {worst * 1000:.0f}")
    worst = max(watch.worst.values(), default=0.0)
    print(f"worst_stall_ms: {worst * 1000:.0f}")
    print(f"stalls_over_threshold: {len(watch.stalls)}")
    if watch.stalls:
        gap, phase, stack = max(watch.stalls)
        print(f"--- worst stall: {gap * 1000:.0f} ms during {phase}; the GUI thread was in:\n{stack}")
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
