"""What the training panel draws while a run goes on: the curves, the probe's timeline of
snapshots and the progress line, redrawn in batches spaced by what drawing costs (every ms the
GUI thread draws holds the GIL the training thread needs).
"""
from __future__ import annotations

import time

from PySide6.QtCore import QTimer

from model.train.live_messages import MetricRows, Snapshot
from model.train.pacing import Pacer
from model.train.progress import RunClock
from model.train.timeline import ViewedTimeline

FRAME_MIN = 0.25  # s between redraws of the curves and the probe (at most 4 a second) …
GUI_BUDGET = 0.025  # … and their measured cost stays under this share of the time


class LiveDisplay:
    """The training panel's curves, probe timeline and progress; `schedule_redraw` after new data."""

    def __init__(self, curves, probe, controls, parent):
        self.curves, self.probe, self.controls = curves, probe, controls
        self.timeline: ViewedTimeline[Snapshot] = ViewedTimeline()
        self.clock = RunClock()
        self.running = False  # a run is going (its step is the progress bar's to name)
        self._show_newest = False
        self.pacer = Pacer(FRAME_MIN, GUI_BUDGET)
        self._timer = QTimer(parent, singleShot=True)
        self._timer.timeout.connect(parent.redraw)

    @property
    def live(self) -> bool:
        """The probe follows the newest snapshot."""
        return self.timeline.live

    def reset(self, warmup: int, metric: str, target: float | None = None, decay_steps: int = 0) -> None:
        self.clock = RunClock(target)
        self.clear_probe()
        self.curves.reset(warmup, decay_steps)
        self.curves.set_metric(metric)

    def add_rows(self, rows: MetricRows) -> None:
        self.curves.add_rows(rows)
        self.clock.add_rows(rows.step, rows.wall)
        self.schedule_redraw()

    def add_eval(self, event) -> None:
        self.curves.add_eval(event)
        self.clock.add_score(event.score)
        self.schedule_redraw()

    def add_snapshot(self, snap: Snapshot, follow: bool = False) -> None:
        """The newest snapshot (`follow`: shown even if the probe looked back)."""
        self._show_newest = self.timeline.add_viewed(snap.step, snap, follow)
        self.schedule_redraw()

    def clear_probe(self) -> None:
        """No snapshot on show (a finished run's probe gave way to the next run's)."""
        self.timeline.clear()
        self.probe.clear()

    def select(self, index: int) -> bool:
        """Show snapshot `index` in the probe (the newest: follow live). False if there is none."""
        if self.timeline.select(index) is None:
            return False
        self._show()
        return True

    # -- drawing, paced by its cost ----------------------------------------------------------------
    def schedule_redraw(self) -> None:
        if not self._timer.isActive():
            self._timer.start(int(self.pacer.wait() * 1000))

    def redraw(self, step: int, total: int, phase: str, done: bool) -> None:
        """Hand everything received since the last redraw to the plots (one batch of work)."""
        self._timer.stop()
        start = time.perf_counter()
        self.curves.refresh()
        self.show_progress(step, total, phase, done)
        if self._show_newest and self.live and self.timeline.select(len(self.timeline) - 1) is not None:
            self._show()
        else:
            self._update_timeline()
        self._show_newest = False
        # This frame's Python work + what painting took since the last frame (about the same next time).
        self.pacer.cost = time.perf_counter() - start + self.curves.take_paint_time()
        self.pacer.started()

    def show_progress(self, step: int, total: int, phase: str, done: bool = False) -> None:
        self.running = not done
        self.controls.set_progress(step, max(1, total), self.clock.text(step, total, phase, done))

    def _show(self) -> None:
        step, snap = self.timeline[self.timeline.viewed]
        self.probe.show_snapshot(step, snap.result, snap.probe)
        self._update_timeline()

    def _update_timeline(self) -> None:
        t = self.timeline
        self.probe.set_timeline(len(t), t.viewed, t.viewed_step(), t.live, self.running)
