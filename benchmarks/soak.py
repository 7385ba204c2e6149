"""Soak test: the whole window with live training for N minutes — does memory creep, does
anything crash?

A lecture lasts an hour; a leak of a few MB per minute (a plot item created per redraw, a
snapshot list that never shrinks, tensors kept by a stale signal) would end it in swap. This
runs the real main window offscreen, starts a training run in the training panel (snapshots
published to every panel, curves drawn), and meanwhile does what a lecturer does every few
seconds: types a new input and runs it, steps through the forward pass, switches heads. It
samples the resident memory (VmRSS from /proc/self/status) every 10 s.

Memory growth is measured after a warm-up (default: the first third of the run, at least
60 s, and until the training panel's bounded snapshot timeline has filled and thinned once
when that happens a minute before the end: allocator arenas, pyqtgraph caches and the
timeline fill up first), as the median of the last three samples minus the median of the
first three after warm-up.
Anything that crashed (an exception reaching Qt's event loop, a training error message) is
counted and printed.

    .venv/bin/python benchmarks/soak.py [--minutes 10] [--sample 10] [--batch 32]

Last line: `soak_rss_growth_mb: X` (target ≤ 50).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import traceback
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("TRANSFORMER_EXPLORER_DATA", tempfile.mkdtemp(prefix="soak-"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

INPUTS = ("attention", "transformer", "abcdef", "lecture", "softmax", "queries")


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--minutes", type=float, default=10.0)
    p.add_argument("--sample", type=float, default=10.0, help="seconds between memory samples")
    p.add_argument("--warmup", type=float, default=None, help="seconds of warm-up (default: a third, ≥ 60 s)")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--threads", type=int, default=1, help="torch threads")
    p.add_argument("--no-actions", action="store_true", help="training only (to tell where growth comes from)")
    p.add_argument("--no-training", action="store_true", help="lecturer actions only")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    from PySide6.QtCore import QSettings, QTimer
    from PySide6.QtWidgets import QApplication

    from explorer import style, training_worker
    from explorer.main_window import MainWindow
    from explorer.runner import Runner, random_bundle
    from explorer.state import SessionState

    crashes: list[str] = []

    def hook(kind, value, tb):  # an exception that reached Qt's event loop
        crashes.append("".join(traceback.format_exception(kind, value, tb))[-400:])
        print(f"CRASH: {crashes[-1]}", file=sys.stderr)

    sys.excepthook = hook
    training_worker.worker_threads = lambda: args.threads
    app = QApplication.instance() or QApplication([])
    style.apply_app_style(app)
    state = SessionState()
    runner = Runner(state)
    settings = QSettings(str(Path(os.environ["TRANSFORMER_EXPLORER_DATA"]) / "soak.ini"), QSettings.IniFormat)
    window = MainWindow(state, runner, settings=settings, restore=False, persist=False)
    window.resize(1280, 800)
    window.show()
    errors: list[str] = []
    state.message.connect(lambda level, text: errors.append(text) if level == "error" else None)
    runner.set_bundle(random_bundle("reverse"), then_run="attention")

    panel = window.panels["training"]
    panel.controls.steps_spin.setValue(panel.controls.steps_spin.maximum())
    panel.controls.batch_spin.setValue(args.batch)
    if not args.no_training:
        panel.start()

    total = args.minutes * 60.0
    warmup = args.warmup if args.warmup is not None else max(60.0, total / 3)
    start = time.monotonic()
    samples: list[tuple[float, float]] = []
    tick = {"n": 0}

    timeline_samples: list[float] = []
    timeline_counts: list[int] = []

    def timeline_mb() -> float:
        """Bytes held on purpose by the training panel's bounded snapshot timeline (≤ 200 traces)."""
        total = 0
        for i in range(len(panel.timeline)):
            total += sum(s.tensor.numel() * s.tensor.element_size() for s in panel.timeline[i][1].result.trace.steps)
        return total / 2**20

    def sample() -> None:
        t = time.monotonic() - start
        samples.append((t, rss_mb()))
        timeline_samples.append(timeline_mb())
        timeline_counts.append(len(panel.timeline))
        print(f"t={t:6.0f}s rss={samples[-1][1]:8.1f} MB step={panel.step:,} phase={panel.phase} "
              f"timeline={len(panel.timeline)} snapshots, {timeline_samples[-1]:.1f} MB", flush=True)

    def lecture_action() -> None:  # what a lecturer does meanwhile
        tick["n"] += 1
        n = tick["n"]
        try:
            if n % 3 == 0:
                window.input_bar.source.setText(INPUTS[n % len(INPUTS)])
                window.input_bar.run()
            elif state.n_steps():
                state.select_step((n * 7) % state.n_steps())
                state.select_head(n % state.bundle.config.n_heads)
        except Exception:  # noqa: BLE001 - counted as a crash, the soak goes on
            hook(*sys.exc_info())

    sampler = QTimer(interval=int(args.sample * 1000))
    sampler.timeout.connect(sample)
    actor = QTimer(interval=2000)
    actor.timeout.connect(lecture_action)
    stopper = QTimer(singleShot=True, interval=int(total * 1000))
    final = {}

    def finish() -> None:  # before quitting: the app stops training when it quits
        final["alive"] = panel.run is not None and panel.run.is_running()
        final["steps"] = panel.step
        sample()
        app.quit()

    stopper.timeout.connect(finish)
    sample()
    for timer in (sampler, stopper) if args.no_actions else (sampler, actor, stopper):
        timer.start()
    app.exec()
    steps, alive = final.get("steps", panel.step), final.get("alive", False)
    panel.shutdown()
    runner.wait()
    window.close()

    counts = [len_ for len_ in timeline_counts]
    thinned = next((samples[i][0] for i in range(1, len(counts)) if counts[i] < counts[i - 1]), None)
    if args.warmup is None and thinned is not None and thinned <= total - 60:
        warmup = max(warmup, thinned)  # the bounded timeline is full once it has thinned: steady state
    after = [m for t, m in samples if t >= warmup]
    if len(after) >= 6:
        growth = statistics.median(m for m in after[-3:]) - statistics.median(m for m in after[:3])
    elif len(after) >= 2:
        growth = after[-1] - after[0]
    else:
        growth = float("nan")
    print(f"minutes: {args.minutes:g}  warm-up: {warmup:.0f} s  samples after warm-up: {len(after)}")
    print(f"training steps: {steps:,}  training thread alive at the end: {alive}")
    print(f"rss start {samples[0][1]:.1f} MB, at warm-up end {after[0] if after else float('nan'):.1f} MB, "
          f"end {samples[-1][1]:.1f} MB, peak {max(m for _, m in samples):.1f} MB")
    print(f"snapshot timeline (bounded, thins from 200 to 100): peak {max(timeline_samples):.1f} MB of tensors; "
          f"first thinned at {thinned if thinned is not None else float('nan'):.0f} s")
    print(f"crashes: {len(crashes)}  error messages: {len(errors)}" + (f" (first: {errors[0]})" if errors else ""))
    print(f"soak_rss_growth_mb: {growth:.1f}")
    return 1 if crashes or (not alive and not args.no_training) else 0


if __name__ == "__main__":
    sys.exit(main())
