"""What the training panel draws while a run goes on: the curves, the probe's timeline of
snapshots and the progress line, redrawn in batches spaced by what drawing costs (every ms the
GUI thread draws holds the GIL the training thread needs).
"""
from __future__ import annotations

import time

from PySide6.QtCore import QTimer

from model.train.live_messages import MetricRows, Snapshot
from model.train.progress import RunClock
from model.train.timeline import SnapshotTimeline

FRAME_MIN = 0.25  # s between redraws of the curves and the probe (at most 4 a second) …
GUI_BUDGET = 0.025  # … and their measured cost stays under this share of the time


class LiveDisplay:
    """The training panel's curves, probe timeline and progress; `schedule_redraw` after new data."""

    def __init__(self, curves, probe, controls, parent):
        self.curves, self.probe, self.controls = curves, probe, controls
        self.timeline: SnapshotTimeline[Snapshot] = SnapshotTimeline()
        self.live = True  # the probe follows the newest snapshot
        self.clock = RunClock()
        self.viewed = -1  # timeline index on show
        self.running = False  # a run is going (its step is the progress bar's to name)
        self._show_newest = False
        self._last_redraw = 0.0
        self._frame_cost = 0.0
        self._timer = QTimer(parent, singleShot=True)
        self._timer.timeout.connect(parent.redraw)

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
        self.live = self.live or follow
        viewing_past = not self.live and 0 <= self.viewed < len(self.timeline)
        viewed_step = self.timeline[self.viewed][0] if viewing_past else None
        self.timeline.add(snap.step, snap)
        if self.live:
            self._show_newest = True
        else:
            self.viewed = self.timeline.index_of_step(viewed_step)
        self.schedule_redraw()

    def clear_probe(self) -> None:
        """No snapshot on show (a finished run's probe gave way to the next run's)."""
        self.timeline.clear()
        self.probe.clear()
        self.live = True

    def select(self, index: int) -> bool:
        """Show snapshot `index` in the probe (the newest: follow live). False if there is none."""
        if not len(self.timeline):
            return False
        index = max(0, min(int(index), len(self.timeline) - 1))
        self.live = index == len(self.timeline) - 1
        self._show(index)
        return True

    # -- drawing, paced by its cost ----------------------------------------------------------------
    def schedule_redraw(self) -> None:
        if self._timer.isActive():
            return
        gap = max(FRAME_MIN, self._frame_cost / GUI_BUDGET)
        wait = gap - (time.monotonic() - self._last_redraw)
        self._timer.start(max(0, int(wait * 1000)))

    def redraw(self, step: int, total: int, phase: str, done: bool) -> None:
        """Hand everything received since the last redraw to the plots (one batch of work)."""
        self._timer.stop()
        start = time.perf_counter()
        self.curves.refresh()
        self.show_progress(step, total, phase, done)
        if self._show_newest and self.live and len(self.timeline):
            self._show(len(self.timeline) - 1)
        else:
            self._update_timeline()
        self._show_newest = False
        # This frame's Python work + what painting took since the last frame (about the same next time).
        self._frame_cost = time.perf_counter() - start + self.curves.take_paint_time()
        self._last_redraw = time.monotonic()

    def show_progress(self, step: int, total: int, phase: str, done: bool = False) -> None:
        self.running = not done
        self.controls.set_progress(step, max(1, total), self.clock.text(step, total, phase, done))

    def _show(self, index: int) -> None:
        self.viewed = index
        step, snap = self.timeline[index]
        self.probe.show_snapshot(step, snap.result, snap.probe)
        self._update_timeline()

    def _update_timeline(self) -> None:
        n = len(self.timeline)
        step = self.timeline[self.viewed][0] if 0 <= self.viewed < n else 0
        self.probe.set_timeline(n, self.viewed, step, self.live, self.running)
