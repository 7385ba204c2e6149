"""`TrainingPanel`'s answers to its run's messages (`model.train.live_messages`), on the GUI
thread; what comes from a run that is no longer the panel's current one is dropped."""
from __future__ import annotations

from explorer.panels.training.sandbox import RUN_LABEL
from explorer.panels.training.worker import TrainingRun
from model.train import live_messages as lm
from model.train.trainer import EvalEvent

HANDLERS = {lm.RunInfo: "_on_info", lm.MetricRows: "_on_rows", EvalEvent: "_on_evaluated", lm.Snapshot: "_on_snapshot",
            lm.Offer: "_on_offered", lm.ProbeFailed: "_on_probe_failed", lm.Saved: "_on_saved",
            lm.SaveFailed: "_on_save_failed", lm.Failed: "_on_failed", lm.Phase: "_on_phase"}
TEXT_MESSAGES = (lm.ProbeFailed, lm.Saved, lm.SaveFailed, lm.Failed, lm.Phase)  # each handled by its text


class RunReports:
    """A mixin of `TrainingPanel`: `follow(run)` connects the run's worker to its slots."""

    def follow(self, run: TrainingRun) -> None:
        run.worker.yielded.connect(lambda message: self._on_message(run, message))
        run.worker.errored.connect(lambda exc: self._on_error(run, exc))
        run.worker.finished.connect(lambda: self._on_finished(run))  # after the last message

    def _on_message(self, run: TrainingRun, message) -> None:
        if run is self.run:
            handler = getattr(self, HANDLERS[type(message)])
            handler(message.text if isinstance(message, TEXT_MESSAGES) else message)

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
        shown = self.probe.show_others.isChecked() and own is not None
        self.say(info.headline() + (lm.shown_elsewhere(RUN_LABEL, own.name) if shown else ""))

    def _on_rows(self, rows: lm.MetricRows) -> None:
        if len(rows):
            self.step = int(rows.step[-1])
            self.display.add_rows(rows)

    def _on_evaluated(self, event: EvalEvent) -> None:
        self.display.add_eval(event)

    def _on_snapshot(self, snap: lm.Snapshot) -> None:
        self.display.add_snapshot(snap)
        if self.live:
            self.sandbox.publish_later()

    def _on_probe_failed(self, text: str) -> None:
        self.say(f"Probe input: {text}", "warning")

    def _on_offered(self, offer: lm.Offer) -> None:
        self.trained = offer
        if offer.reason == "show":
            self.sandbox.on_offered(offer)
        elif offer.reason == "asked":
            self.sandbox.use(offer)

    def _on_saved(self, folder: str) -> None:
        self.tell(f"Checkpoint saved to {folder}")

    def _on_save_failed(self, error: str | BaseException) -> None:
        self.tell(f"Could not save the checkpoint: {error}", "error")

    def _on_failed(self, text: str) -> None:
        self.tell(text, "error")

    def _on_phase(self, phase: str) -> None:
        self.phase = phase
        self._show_phase()
        self.display.show_progress(self.step, self.total_steps, phase)

    def _on_finished(self, run: TrainingRun) -> None:
        if run is not self.run:
            return
        self.run = None
        run.join()
        self.phase = "idle"
        self._show_phase()
        self.curves.stop_waiting()  # (a run that ended before its first step: nothing is coming)
        self.redraw()
        was_shown = self.sandbox.shown is not None
        self.sandbox.close()  # the panels show the session's own model again
        if self._defaults_pending:
            self._apply_model_defaults()
        if run.outcome != "failed":
            own = self.state.session.bundle
            self.say(lm.run_ended(run.outcome, self.step, self.trained, own.name if own is not None else None, was_shown))
            self.display.show_progress(self.step, self.total_steps, self.phase, done=True)
