"""Does watching a training run slow it down, and does training freeze the window?

Measured in one process, offscreen, in alternating blocks (GUI, headless, GUI, …) so that
drifts in machine load hit both alike:

* GUI: the training panel runs a real training of the tiny reverse model (its worker thread,
  snapshots on and published, curves drawn, held-out evaluation) while the Qt event loop
  runs for N seconds.
* headless: the same `Trainer.step()` loop, same request and config, same seconds, no GUI.

Both runs are started once and stay alive (the GUI run is paused while the headless one
trains), so the blocks compare steady training rather than model building and start-up.

Throughput is optimisation steps per second (both runs draw the same seeded batches, so
steps/s is proportional to tokens/s). Event-loop latency: a 10 ms precise `QTimer` on the GUI
thread records how late each tick fires, in a third block per round (GUI again): its 100
Python callbacks a second contend for the GIL themselves, so they are kept out of the
throughput blocks.

    .venv/bin/python benchmarks/training_gui.py [--seconds 5] [--rounds 6] [--batch 64] [--window]

`--window` runs the whole main window (every panel following the snapshots) instead of the
panel alone. Last lines: `event_loop_p99_ms: Y` and `training_gui_ratio: X` (GUI ÷ headless);
targets X ≥ 0.9, Y ≤ 50.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("TRANSFORMER_EXPLORER_DATA", tempfile.mkdtemp(prefix="training-gui-bench-"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seconds", type=float, default=5.0, help="length of each block")
    p.add_argument("--rounds", type=int, default=6, help="GUI + headless block pairs")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--threads", type=int, default=None, help="torch threads (default: cores − 1)")
    p.add_argument("--window", action="store_true", help="the whole main window, not the panel alone")
    return p.parse_args(argv)


def percentile(values: list[float], q: float) -> float:
    import numpy as np

    return float(np.percentile(np.asarray(values), q)) if values else float("nan")


class LatencyProbe:
    """A 10 ms timer on the GUI thread; each tick's lateness in ms."""

    def __init__(self, interval_ms: int = 10):
        from PySide6.QtCore import Qt, QTimer

        self.interval = interval_ms / 1000
        self.late: list[float] = []
        self.timer = QTimer()
        self.timer.setTimerType(Qt.PreciseTimer)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self._tick)
        self._last = None

    def start(self) -> None:
        self._last = time.perf_counter()
        self.timer.start()

    def stop(self) -> None:
        self.timer.stop()

    def _tick(self) -> None:
        now = time.perf_counter()
        self.late.append(max(0.0, (now - self._last - self.interval) * 1000))
        self._last = now


def pump(app, seconds: float) -> None:
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    QTimer.singleShot(int(seconds * 1000), loop.quit)
    loop.exec()


def gui_block(app, panel, seconds: float, probe: LatencyProbe | None) -> tuple[int, float]:
    """Resume the panel's run, let the event loop run `seconds`, pause it: (steps, seconds)."""
    trainer = panel.run.trainer
    panel.resume()
    while panel.phase != "running":
        app.processEvents()
    s0, t0 = trainer.step_count, time.perf_counter()
    if probe is not None:
        probe.start()
    pump(app, seconds)
    if probe is not None:
        probe.stop()
    steps, elapsed = trainer.step_count - s0, time.perf_counter() - t0
    panel.pause()
    while panel.phase != "paused":
        app.processEvents()
    return steps, elapsed


def headless_block(trainer, seconds: float, threads: int) -> tuple[int, float]:
    """The same Trainer loop on this thread, nothing else running: (steps, seconds)."""
    import torch

    torch.set_num_threads(threads)
    s0, t0 = trainer.step_count, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        trainer.step()
    return trainer.step_count - s0, time.perf_counter() - t0


def main(argv=None) -> int:
    args = parse_args(argv)
    import torch
    from PySide6.QtWidgets import QApplication

    from explorer import style
    from explorer.panels.training.panel import TrainingPanel
    from explorer.runner import Runner, random_bundle
    from explorer.state import SessionState
    from model.train.request import worker_threads

    threads = args.threads or worker_threads()
    torch.set_num_threads(threads)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    style.apply_app_style(app)
    state = SessionState()
    state.set_bundle(random_bundle("reverse"))
    if args.window:
        from PySide6.QtCore import QSettings

        from explorer.main_window import MainWindow

        window = MainWindow(state, Runner(state), settings=QSettings(), restore=False, persist=False)
        window.resize(1280, 800)
        window.show()
        window.focus_panel("training")
        panel = window.panels["training"]
    else:
        panel = TrainingPanel(state)
        panel.resize(1280, 720)
        panel.show()
    c = panel.controls
    c.steps_spin.setValue(1_000_000)
    c.warmup_spin.setValue(400)
    c.batch_spin.setValue(args.batch)
    request = panel.request()
    request.threads = threads
    app.processEvents()

    from model.train.request import build_trainer

    # Both runs start once and stay alive, so the blocks measure steady training, not start-up;
    # the GUI run is paused (its worker asleep) while the headless one trains, and vice versa.
    panel.start(request)
    while panel.phase != "running":
        app.processEvents()
    pump(app, 1.0)
    headless = build_trainer(request)
    for _ in range(3):
        headless.step()
    probe = LatencyProbe()
    gui, head = [], []
    print(f"tiny reverse model, batch {args.batch}, {threads} torch thread(s), {args.rounds} × "
          f"({args.seconds:.0f} s GUI + {args.seconds:.0f} s headless + {args.seconds:.0f} s GUI timing latency), "
          f"{'main window' if args.window else 'training panel'}, {os.cpu_count()} cores")
    timed = []
    for r in range(args.rounds):
        gui.append(gui_block(app, panel, args.seconds, None))
        head.append(headless_block(headless, args.seconds, threads))
        timed.append(gui_block(app, panel, args.seconds, probe))  # latency; its own 100 ticks/s perturb throughput
        print(f"  round {r + 1}: GUI {gui[-1][0] / gui[-1][1]:7.2f} steps/s   "
              f"headless {head[-1][0] / head[-1][1]:7.2f} steps/s   "
              f"(GUI with the 10 ms latency timer: {timed[-1][0] / timed[-1][1]:.2f} steps/s)")
    snaps = len(panel.timeline)
    run = panel.run
    panel.stop()
    run.join()
    for _ in range(5):
        app.processEvents()
    gui_steps, head_steps = [g for g, _ in gui], [h for h, _ in head]
    gui_rate = sum(gui_steps) / sum(t for _, t in gui)
    head_rate = sum(head_steps) / sum(t for _, t in head)
    tokens = mean_tokens_per_batch(request)
    ratio = gui_rate / head_rate if head_rate else float("nan")
    print(f"GUI attached:  {gui_rate:.2f} steps/s ≈ {gui_rate * tokens:,.0f} tokens/s "
          f"(timeline: {snaps} snapshots kept, curves and probe live)")
    print(f"headless:      {head_rate:.2f} steps/s ≈ {head_rate * tokens:,.0f} tokens/s")
    print(f"per-round ratios: {', '.join(f'{(g / tg) / (h / th):.3f}' for (g, tg), (h, th) in zip(gui, head) if h)}")
    print(f"event loop lateness over {len(probe.late)} ticks of 10 ms: p50 {percentile(probe.late, 50):.1f} ms, "
          f"p99 {percentile(probe.late, 99):.1f} ms, max {max(probe.late, default=float('nan')):.1f} ms")
    print(f"event_loop_p99_ms: {percentile(probe.late, 99):.1f}")
    print(f"training_gui_ratio: {ratio:.3f}")
    panel.shutdown()
    return 0


def mean_tokens_per_batch(request, n: int = 50) -> float:
    """Source + target tokens (no padding) per batch of the seeded stream both runs draw."""
    from model.data.tokenizers import PAD_ID
    from model.train.request import build_trainer

    trainer = build_trainer(request)
    total = 0
    for _ in range(n):
        b = trainer.next_batch()
        total += int((b.src != PAD_ID).sum()) + int((b.tgt_out != PAD_ID).sum())
    return total / n


if __name__ == "__main__":
    sys.exit(main())
