"""`TrainingPanel`'s answers to its run's messages (`model.train.live_messages`) on the GUI thread,
and their drawing: curves, the probe's timeline of snapshots and the progress line, redrawn in
batches spaced by what drawing costs (the GUI thread's drawing holds the GIL training needs).
What comes from a run that is no longer the panel's current one is dropped."""
from __future__ import annotations

import time

from PySide6.QtCore import QTimer

from explorer.panels.training.sandbox import RUN_LABEL
from explorer.panels.training.worker import TrainingRun
from explorer.when_seen import unseen
from model.train import live_messages as lm
from model.train.pacing import Pacer
from model.train.progress import RunClock
from model.train.timeline import ViewedTimeline
from model.train.trainer import EvalEvent

FRAME_MIN = 0.25  # s between redraws of the curves and the probe (at most 4 a second) …
GUI_BUDGET = 0.025  # … and their measured cost stays under this share of the time
HANDLERS = {lm.RunInfo: "_on_info", lm.MetricRows: "_on_rows", EvalEvent: "_on_evaluated", lm.Snapshot: "_on_snapshot",
            lm.Offer: "_on_offered", lm.Phase: "_on_phase", **dict.fromkeys(lm.REPORTS, "report")}  # message → slot


class RunReports:
    """A mixin of `TrainingPanel`: `follow(run)` connects the run's worker to its slots."""

    def init_display(self) -> None:
        self.timeline: ViewedTimeline[lm.Snapshot] = ViewedTimeline()  # (cleared for each run, never replaced)
        self.clock = RunClock()
        self.show_newest = False  # a new snapshot to show at the next redraw
        self.pacer = Pacer(FRAME_MIN, GUI_BUDGET)
        self.redraw_timer = QTimer(self, singleShot=True, timeout=self.redraw)

    def reset_display(self, request) -> None:
        self.clock = RunClock(request.target)
        self.clear_probe()
        self.curves.reset(request.train.warmup, request.train.lr_decay_steps)
        self.curves.set_metric(request.model_kind().metric)

    def follow(self, run: TrainingRun) -> None:
        run.worker.yielded.connect(lambda message: self._on_message(run, message))
        run.worker.errored.connect(lambda exc: self._on_error(run, exc))
        run.worker.finished.connect(lambda: self._on_finished(run))  # after the last message

    def _on_message(self, run: TrainingRun, message) -> None:
        if run is self.run:
            getattr(self, HANDLERS[type(message)])(message)

    def report(self, message) -> None:
        """A text message's words (`live_messages.report`), here and maybe in the status line."""
        text, level, everywhere = lm.report(message)
        (self.tell if everywhere else self.say)(text, level)

    def _on_error(self, run: TrainingRun, exc: BaseException) -> None:
        text = run.error(exc)  # a bug in the loop reaches the user; the thread never ends silently
        if run is self.run:
            self.tell(text, "error")

    def _on_info(self, info: lm.RunInfo) -> None:
        self.info, self.total_steps = info, info.steps
        if info.planned_rates:
            self.curves.set_plan(*info.planned_rates)
        self.probe.set_probe_text(info.probe)
        self.sandbox.publish_later()  # the untrained model, at once
        own = self.state.session.bundle
        shown = self.controls.show_others.isChecked() and own is not None
        self.say(info.headline() + (lm.shown_elsewhere(RUN_LABEL, own.name) if shown else ""))

    def _on_rows(self, rows: lm.MetricRows) -> None:
        if len(rows):
            self.step = int(rows.step[-1])
            self.curves.add_rows(rows)
            self.clock.add_rows(rows.step, rows.wall)
            self.schedule_redraw()

    def _on_evaluated(self, event: EvalEvent) -> None:
        self.curves.add_eval(event)
        self.clock.add_score(event.score)
        self.schedule_redraw()

    def _on_snapshot(self, snap: lm.Snapshot) -> None:
        self.add_snapshot(snap)
        if self.timeline.live:
            self.sandbox.publish_later()

    def _on_offered(self, offer: lm.Offer) -> None:
        self.trained = offer
        if offer.reason == "show":
            self.sandbox.on_offered(offer)
        elif offer.reason == "asked":
            self.sandbox.use(offer)

    def _on_phase(self, phase: lm.Phase) -> None:
        self.phase = phase.text
        self._show_phase()
        self.show_progress()

    def _on_finished(self, run: TrainingRun) -> None:
        if run is not self.run:
            return
        self.run = None
        run.join()
        self.phase = "idle"
        self._show_phase()
        self.curves.show_waiting(False)  # (a run that ended before its first step: nothing is coming)
        self.redraw()
        was_shown = self.sandbox.shown is not None
        self.sandbox.close()  # the panels show the session's own model again
        if self._defaults_pending:
            self._apply_model_defaults()
        if run.outcome != "failed":
            own = self.state.session.bundle
            self.say(lm.run_ended(run.outcome, self.step, self.trained, own.name if own is not None else None, was_shown))
            self.show_progress()

    # -- the probe's timeline -----------------------------------------------------------------------
    def add_snapshot(self, snap: lm.Snapshot, follow: bool = False) -> None:
        """The newest snapshot (`follow`: shown even if the probe looked back)."""
        self.show_newest = self.timeline.add_viewed(snap.step, snap, follow)
        self.schedule_redraw()

    def clear_probe(self) -> None:
        """No snapshot on show (a finished run's probe gave way to the next run's)."""
        self.timeline.clear()
        self.probe.clear()

    def select_snapshot(self, index: int) -> None:
        """An earlier snapshot in the probe (the newest: follow live). Snapshots keep no weights:
        while the probe looks back, the other panels hold the model they show."""
        if self.timeline.select(index) is not None:
            self._show_viewed()
            if self.timeline.live:
                self.sandbox.publish_later()

    def follow_live(self) -> None:
        self.select_snapshot(len(self.timeline) - 1)

    def _show_viewed(self) -> None:
        step, snap = self.timeline[self.timeline.viewed]
        self.probe.show_snapshot(step, snap.result, snap.probe)
        self._update_timeline()

    def _update_timeline(self) -> None:
        t = self.timeline
        self.probe.set_timeline(len(t), t.viewed, t.viewed_step(), t.live, self.run is not None)

    # -- drawing, paced by its cost -----------------------------------------------------------------
    def schedule_redraw(self) -> None:
        if not self.redraw_timer.isActive():
            self.redraw_timer.start(int(self.pacer.wait() * 1000))

    def redraw(self) -> None:
        """Hand what came since the last redraw to the plots; while the panel is hidden in a shown
        window, once it is shown (`showEvent`)."""
        self.redraw_when_shown = unseen(self)
        if self.redraw_when_shown:
            return
        self.redraw_timer.stop()
        start = time.perf_counter()
        self.curves.refresh()
        self.show_progress()
        if self.show_newest and self.timeline.live and self.timeline.select(len(self.timeline) - 1) is not None:
            self._show_viewed()
        else:
            self._update_timeline()
        self.show_newest = False
        # this redraw's Python work and what painting took since the last one (about the same next time)
        self.pacer.cost = time.perf_counter() - start + self.curves.take_paint_time()
        self.pacer.started()

    def show_progress(self) -> None:
        text = self.clock.text(self.step, max(1, self.total_steps), self.phase, self.run is None)
        self.controls.set_progress(self.step, max(1, self.total_steps), text)
