"""The worst GUI-thread stall over a scripted lecture: a training run shown in the other panels,
Stop, then the whole tour.

The real main window runs offscreen. A 10 ms timer on the GUI thread stamps each tick; a
watchdog thread notes every gap over the threshold and samples the GUI thread's Python stack
while the gap lasts, so a stall is reported with the code that caused it, not only its length.

    .venv/bin/python benchmarks/gui_stalls.py [--train-seconds 20] [--scene-seconds 2] [--threshold-ms 200] [--report N]
    [--scenes 15-17]

Prints per phase `stall_ms[PHASE]: worst`, then `worst_stall_ms:`, `stalls_over_threshold:` and
`stalled_s:` (their total), `turn_cpu_ms:` (per phase, the GUI thread's own CPU time between two
ticks at worst: what our code costs a turn, apart from the machine's load and other threads),
`gui_cpu_s:` (the GUI thread's CPU time in all, while training, over the scenes, in the whole run),
the longest garbage-collection pass of each generation, how many replaced models are still alive
(and, where any are, whether a reference keeps them after unfreezing, and what refers to them),
then, for the N longest stalls, the project's frames seen most often in their stack samples.
`--scenes A-B` plays only those tour scenes (numbered as the phases are) and `--train-seconds 0`
skips the training run: a quick look at one stall, before and after a change.
Goal: no stall over 200 ms.
"""
from __future__ import annotations

import argparse
import faulthandler
import gc
import os
import sys
import tempfile
import threading
import time
import weakref
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
    p.add_argument("--report", type=int, default=1, help="how many of the longest stalls to profile")
    p.add_argument("--switch-interval-ms", type=float, default=None,
                   help="sys.setswitchinterval for this run (how soon a thread waiting for the GIL gets it)")
    p.add_argument("--scenes", type=scene_range, default=None, help="only these tour scenes: N or A-B (from 2)")
    return p.parse_args(argv)


def scene_range(text: str) -> range:
    """"15-17" or "16" → the tour's scene indices (0-based) whose phases are named "scene 15" … "scene 17"."""
    first, _, last = text.partition("-")
    try:
        first_n, last_n = int(first), int(last or first)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a scene number or a range such as 15-17") from None
    if not 2 <= first_n <= last_n:
        raise argparse.ArgumentTypeError(f"{text!r}: scenes are numbered from 2 (the first is the tour's start), "
                                         "and a range goes up")
    return range(first_n - 1, last_n)


IDLE_FRAMES = ("threading.py", "queue.py", "selectors.py", "in _worker")  # a thread waiting for work


class StallWatch:
    """GUI-thread ticks every 10 ms; a watchdog thread measures the gaps and samples the stack."""

    def __init__(self, threshold_ms: float):
        from PySide6.QtCore import Qt, QTimer

        self.threshold = threshold_ms / 1000
        self.gui_id = threading.get_ident()
        self.last = time.perf_counter()
        self.last_cpu = time.thread_time()
        self.phase = "start"
        self.worst: dict[str, float] = {}
        self.worst_cpu: dict[str, float] = {}  # the GUI thread's own CPU time in its longest turn
        self.total_cpu: dict[str, float] = {}  # … and in all its turns
        self.stalls: list[list] = []  # [seconds, phase, [GUI stack samples], [busy threads' samples]]
        self.timer = QTimer()
        self.timer.setTimerType(Qt.PreciseTimer)
        self.timer.timeout.connect(self._tick)
        self.timer.start(10)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        self.gc_worst: dict[int, float] = {}
        self._gc_started: float | None = None
        gc.callbacks.append(self._on_gc)

    def _tick(self) -> None:
        now = time.perf_counter()
        gap = now - self.last
        self.last = now
        self.worst[self.phase] = max(self.worst.get(self.phase, 0.0), gap)
        cpu = time.thread_time()
        self.worst_cpu[self.phase] = max(self.worst_cpu.get(self.phase, 0.0), cpu - self.last_cpu)
        self.total_cpu[self.phase] = self.total_cpu.get(self.phase, 0.0) + cpu - self.last_cpu
        self.last_cpu = cpu

    def _watch(self) -> None:
        """While a gap lasts past the threshold, sample the GUI thread's stack every 20 ms: a
        stall is then reported with where it spent its time, not one instant of it."""
        seen_for = None
        while not self._stop.wait(0.02):
            gap = time.perf_counter() - self.last
            if gap <= self.threshold:
                seen_for = None
                continue
            stack, others = self._stacks()
            if seen_for != self.last:  # a new stall
                seen_for = self.last
                self.stalls.append([gap, self.phase, [stack], others])
            else:
                self.stalls[-1][0] = gap
                self.stalls[-1][2].append(stack)
                self.stalls[-1][3].extend(others)

    def _stacks(self) -> tuple[str, list[str]]:
        """The GUI thread's stack, and those of the other threads that are busy (not waiting on a
        lock or a queue): a GUI thread stalled in a cheap call waits for the interpreter lock,
        and a busy thread's stack says who holds it. Written by faulthandler (no Python frame
        object is held here: dropping one on this thread could free the GUI thread's Qt objects
        from the wrong thread)."""
        with tempfile.TemporaryFile("w+") as out:
            faulthandler.dump_traceback(out, all_threads=True)
            out.seek(0)
            text = out.read()
        mine = f"Thread 0x{self.gui_id:016x}"
        gui, others = text, []
        for block in text.split("\n\n"):
            lines = block.strip().splitlines()
            if not lines or lines[0].startswith("Current thread"):
                continue
            if mine in lines[0]:
                gui = "\n".join(lines[:40])
            elif len(lines) > 1 and not any(idle in lines[1] for idle in IDLE_FRAMES):
                others.append("\n".join(lines[:40]))
        return gui, others

    def stop(self) -> None:
        self._stop.set()
        self.timer.stop()
        gc.callbacks.remove(self._on_gc)

    def _on_gc(self, when: str, info: dict) -> None:
        """The longest collection of each generation (they run on the GUI thread: a stall's share)."""
        if when == "start":
            self._gc_started = time.perf_counter()
        elif self._gc_started is not None:
            gen = info["generation"]
            self.gc_worst[gen] = max(self.gc_worst.get(gen, 0.0), time.perf_counter() - self._gc_started)
            self._gc_started = None


def own_frames(samples: list[str]) -> list[tuple[str, int]]:
    """A stall's stack samples by the innermost project frame (explorer/, model/) and the
    innermost frame of all, most often seen first: what took the time, and in which library."""
    counts: dict[str, int] = {}
    root = str(Path(__file__).resolve().parent.parent) + "/"
    for sample in samples:
        lines = [line.strip() for line in sample.splitlines()[1:] if line.strip().startswith("File")]
        own = next((line for line in lines if root in line and "/benchmarks/" not in line), "?")
        key = own.replace(root, "") + ("" if not lines or lines[0] == own else f"  ← {lines[0].split('/')[-1]}")
        counts[key] = counts.get(key, 0) + 1
    return sorted(counts.items(), key=lambda kv: -kv[1])


def spin(seconds: float) -> None:
    """Run the event loop for `seconds`, as the app's own loop runs (it sleeps when idle)."""
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    QTimer.singleShot(int(seconds * 1000), loop.quit)
    loop.exec()


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
    if args.switch_interval_ms is not None:
        sys.setswitchinterval(args.switch_interval_ms / 1000)
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from explorer import style
    from explorer.gui_collector import collect_on_gui_thread
    from explorer.launch import parse_size
    from explorer.main_window import MainWindow
    from explorer.runner import Runner
    from explorer.state import SessionState
    from model.io.scenes import TOUR_PATH

    app = QApplication.instance() or QApplication(sys.argv[:1])
    style.apply_app_style(app)
    state = SessionState()
    runner = Runner(state)
    settings = QSettings(str(Path(tempfile.mkdtemp()) / "settings.ini"), QSettings.IniFormat)
    window = MainWindow(state, runner, settings=settings, restore=False)
    window.resize(*parse_size(args.size))
    window.show()
    collector = collect_on_gui_thread()
    models: list = []  # a weak reference to each model the window showed: a replaced one must be freed
    state.bundleChanged.connect(lambda bundle: models.append(weakref.ref(bundle.model)) if bundle else None)
    runner.load_default(then_run="attention")
    spin_until(lambda: state.result is not None, 120)
    watch = StallWatch(args.threshold_ms)

    if args.train_seconds > 0:
        watch.phase = "train"
        window.focus_panel("training")
        panel = window.panels["training"]
        spin(0.5)  # a lecturer's click on Start comes after the panel is shown, not in the turn that builds it
        panel.controls.show_others.setChecked(True)
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
    played = range(1, len(deck.tour.scenes)) if args.scenes is None else args.scenes
    for index in played:
        if index >= len(deck.tour.scenes):
            break
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
    print(f"stalled_s: {sum(stall[0] for stall in watch.stalls):.1f}")  # the time those stalls took together
    print("turn_cpu_ms: " + " ".join(f"{phase}={cpu * 1000:.0f}" for phase, cpu in watch.worst_cpu.items())
          + f" (worst {max(watch.worst_cpu.values(), default=0.0) * 1000:.0f})")
    tour = sum(cpu for phase, cpu in watch.total_cpu.items() if phase.startswith("scene"))
    print(f"gui_cpu_s: train={watch.total_cpu.get('train', 0.0):.2f} scenes={tour:.2f} "
          f"all={sum(watch.total_cpu.values()):.2f}")
    for gen, took in sorted(watch.gc_worst.items()):
        print(f"gc_ms[generation {gen}]: {took * 1000:.0f}")  # the longest collection of that generation
    started = time.perf_counter()
    gc.collect()
    full_gc_ms = (time.perf_counter() - started) * 1000
    current = state.bundle.model if state.bundle is not None else None
    alive = [i + 1 for i, ref in enumerate(models) if ref() is not None and ref() is not current]
    print(f"replaced_models_alive: {len(alive)} of {len(models) - 1} (shown {alive})")  # frozen cycles stay
    if alive:  # kept by a reference, or only in a frozen cycle (freed once the collector unfreezes)?
        gc.unfreeze()
        gc.collect()
        held = [i + 1 for i, ref in enumerate(models) if ref() is not None and ref() is not current]
        print(f"replaced_models_referenced: {len(held)} (alive after unfreezing and a full collection: {held})")
        for i in held:
            kinds = [type(r).__name__ for r in gc.get_referrers(models[i - 1]())][:8]
            print(f"  model {i} referrers: {kinds}")
    print(f"full_gc_ms_at_end: {full_gc_ms:.0f} "
          f"({len(gc.get_objects())} objects tracked, {gc.get_freeze_count()} frozen)")
    for gap, phase, samples, others in sorted(watch.stalls, key=lambda st: -st[0])[:args.report]:
        print(f"--- {gap * 1000:.0f} ms during {phase}; {len(samples)} samples, where our code was:")
        for line, count in own_frames(samples)[:6]:
            print(f"  {count:3d}× {line}")
        if others:
            print("  meanwhile, busy threads were in:")
            for line, count in own_frames(others)[:4]:
                print(f"  {count:3d}× {line}")
    from explorer.launch import close_window
    close_window(app, window)  # as the app closes: its workers finish before the interpreter does
    return 0


if __name__ == "__main__":
    sys.exit(main())
