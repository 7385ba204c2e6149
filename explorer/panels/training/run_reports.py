"""`TrainingPanel`'s answers to its run's worker signals (connected in `start`), on the GUI
thread; what comes from a run that is no longer the panel's current one is dropped."""
from __future__ import annotations

from functools import wraps

from explorer.panels.training.sandbox import RUN_LABEL
from model.train.live_messages import Offer, RunInfo, Snapshot, run_ended, shown_elsewhere


def current_run(slot):
    """Run `slot` only for a signal of the panel's current run."""
    @wraps(slot)
    def checked(self, *args) -> None:
        if self.run is not None and self.sender() is self.run.worker.signals:
            slot(self, *args)
    return checked


class RunReports:
    """A mixin of `TrainingPanel`: its `_on_<signal>` slots."""

    @current_run
    def _on_info(self, info: RunInfo) -> None:
        self.info, self.total_steps = info, info.steps
        if info.planned_rates:
            self.curves.set_plan(*info.planned_rates)
        self.probe.set_probe_text(info.probe)
        self.sandbox.publish_later()  # the untrained model, at once
        own = self.state.session.bundle
        shown = self.probe.show_others.isChecked() and own is not None
        self.say(info.headline() + (shown_elsewhere(RUN_LABEL, own.name) if shown else ""))

    @current_run
    def _on_rows(self, rows) -> None:
        if len(rows):
            self.step = int(rows.step[-1])
            self.display.add_rows(rows)

    @current_run
    def _on_evaluated(self, event) -> None:
        self.display.add_eval(event)

    @current_run
    def _on_snapshot(self, snap: Snapshot) -> None:
        self.display.add_snapshot(snap)
        if self.live:
            self.sandbox.publish_later()

    @current_run
    def _on_probe_failed(self, text: str) -> None:
        self.say(f"Probe input: {text}", "warning")

    @current_run
    def _on_offered(self, offer: Offer) -> None:
        self.trained = offer
        if offer.reason == "show":
            self.sandbox.on_offered(offer)
        elif offer.reason == "asked":
            self.sandbox.use(offer)

    def _on_saved(self, folder: str) -> None:
        self.tell(f"Checkpoint saved to {folder}")

    def _on_save_failed(self, error: str | BaseException) -> None:
        self.tell(f"Could not save the checkpoint: {error}", "error")

    @current_run
    def _on_failed(self, text: str) -> None:
        self.tell(text, "error")

    @current_run
    def _on_phase(self, phase: str) -> None:
        self.phase = phase
        self._show_phase()
        self.display.show_progress(self.step, self.total_steps, phase)

    @current_run
    def _on_finished(self) -> None:
        run, self.run = self.run, None
        run.join()
        self.phase = "idle"
        self._show_phase()
        self.curves.stop_waiting()  # (a run that ended before its first step: nothing is coming)
        self.redraw()
        if self._train_loop is not None:
            self._train_loop.quit()
        was_shown = self.sandbox.shown is not None
        self.sandbox.close()  # the panels show the session's own model again
        if self._defaults_pending:
            self._apply_model_defaults()
        if run.outcome != "failed":
            own = self.state.session.bundle
            self.say(run_ended(run.outcome, self.step, self.trained, own.name if own is not None else None, was_shown))
            self.display.show_progress(self.step, self.total_steps, self.phase, done=True)
