"""The training panel's answers to what its run's worker reports: the run's facts, rows of
metrics, evaluations, probe snapshots, a trained model offered, a save done or failed, the
phase, the end. They run on the GUI thread; anything from a run that is no longer the panel's
current one is dropped. A mixin of `TrainingPanel`, which connects them in `start`.
"""
from __future__ import annotations

from explorer.panels.training.sandbox import RUN_LABEL
from model.train.live_messages import Offer, RunInfo, Snapshot


class RunReports:
    """`TrainingPanel`'s `_on_<signal>` slots for its `TrainingRun`'s worker signals."""

    def _mine(self) -> bool:
        return self.run is not None and self.sender() is self.run.worker.signals

    def _on_info(self, info: RunInfo) -> None:
        if not self._mine():
            return
        self.info = info
        self.total_steps = info.steps
        if info.planned_rates:
            self.curves.set_plan(*info.planned_rates)
        self.probe.set_probe_text(info.probe)
        self.sandbox.publish_later()  # the untrained model, at once
        own = self.state.session.bundle
        shown = (f" The other panels show this run's model (“{RUN_LABEL}”) in place of “{own.name}” "
                 f"until it ends or you go back." if self.probe.show_others.isChecked() and own is not None else "")
        self.say(info.headline() + shown)

    def _on_rows(self, rows) -> None:
        if not self._mine() or not len(rows):
            return
        self.step = int(rows.step[-1])
        self.display.add_rows(rows)

    def _on_evaluated(self, event) -> None:
        if self._mine():
            self.display.add_eval(event)

    def _on_snapshot(self, snap: Snapshot) -> None:
        if not self._mine():
            return
        self.display.add_snapshot(snap)
        if self.live:
            self.sandbox.publish_later()

    def _on_probe_failed(self, text: str) -> None:
        if self._mine():
            self.say(f"Probe input: {text}", "warning")

    def _on_offered(self, offer: Offer) -> None:
        if not self._mine():
            return
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
        if self._mine():
            self.tell(text, "error")

    def _on_phase(self, phase: str) -> None:
        if self._mine():
            self.phase = phase
            self._show_phase()
            self._show_progress()

    def _on_finished(self) -> None:
        if not self._mine():
            return
        run, self.run = self.run, None
        run.join()
        outcome = run.outcome
        self.phase = "idle"
        self._show_phase()
        self.curves.stop_waiting()  # (a run stopped or failed before its first step: nothing is coming)
        self.redraw()
        if self._train_loop is not None:
            self._train_loop.quit()
        was_shown = self.sandbox.shown is not None
        self.sandbox.close()  # the panels show the session's own model again
        if self._defaults_pending:
            self._apply_model_defaults()
        if outcome == "failed":
            return
        what = "finished" if outcome == "finished" else "stopped"
        text = f"Training {what} after {self.step:,} steps."
        own = self.state.session.bundle
        if self.trained is not None and self.trained.reason == outcome and own is not None:
            back = f" The panels show “{own.name}” again." if was_shown else ""
            text += f"{back} “Use this model” makes the trained model (step {self.trained.step:,}) the session's model."
        self.say(text)
        self._show_progress(done=True)
