"""How the GUI steers a training run that lives on another thread.

Pause, resume and stop are the `Trainer`'s own thread-safe flags (remembered until the worker
has built it); what must happen between two optimisation steps — save a checkpoint, offer a
copy of the model, one single step, a new probe text — is a request in a queue that the
worker's loop (explorer.panels.training.worker) serves. Nothing here touches Qt.
"""
from __future__ import annotations

import queue
import threading

from model.train.request import TrainingRequest
from model.train.trainer import Trainer

ACTIVE_PHASES = ("building", "running", "paused", "finishing")  # a run's settings are fixed in these


def phase_actions(phase: str, has_model: bool) -> dict[str, bool]:
    """Which steering actions make sense in a run's `phase` (idle, building, running, paused,
    finishing): start or resume, pause, one step, stop, and keep the model (save it, use it),
    which an idle panel can do only with a finished run's model (`has_model`)."""
    return {"start": phase in ("idle", "paused"), "pause": phase == "running", "step": phase in ("idle", "paused"),
            "stop": phase in ("running", "paused", "building"),
            "keep": phase in ("running", "paused") or (phase == "idle" and has_model)}


class Steering:
    """Thread-safe steering of one run from the GUI thread.

    Pause, resume and stop go to the Trainer's own flags (remembered until it is built);
    the rest are requests the loop serves between two steps. The loop writes `steps_done`,
    `last_saved` and `last_error`; the GUI reads them once the run has been joined.
    """

    def __init__(self, request: TrainingRequest):
        self._lock = threading.Lock()
        self._requests: queue.SimpleQueue[tuple[str, object]] = queue.SimpleQueue()
        self.trainer: Trainer | None = None
        self._pause, self._stop = request.start_paused, False
        self.stop_save_to: str | None = None
        self.stop_offer = True
        self.snapshots = request.snapshots
        self._began = self._cancelled = False
        self.steps_done = 0
        self.last_saved: str | None = None
        self.last_error: str | None = None
        self.outcome: str | None = None

    # -- GUI thread ---------------------------------------------------------------------------
    def pause(self) -> None:
        with self._lock:
            self._pause = True
            if self.trainer is not None:
                self.trainer.pause()

    def resume(self) -> None:
        with self._lock:
            self._pause = False
            if self.trainer is not None:
                self.trainer.resume()
        self._requests.put(("wake", None))

    def step_once(self) -> None:
        """Exactly one more optimisation step, then stay paused."""
        self.pause()
        self._requests.put(("step", None))

    def stop(self, save_to: str | None = None, offer: bool = True) -> None:
        """End after the current step; optionally save a checkpoint and/or offer the model."""
        with self._lock:
            self._stop, self.stop_save_to, self.stop_offer = True, save_to, offer
            if self.trainer is not None:
                self.trainer.stop()
        self._requests.put(("wake", None))

    def save(self, folder: str) -> None:
        self._requests.put(("save", str(folder)))

    def offer(self, reason: str = "asked") -> None:
        """Send a CPU copy of the model as it is now (between two steps)."""
        self._requests.put(("offer", reason))

    def set_probe(self, text: str) -> None:
        self._requests.put(("probe", text))

    def cancel_unbegun(self) -> bool:
        """True if the loop has not begun: it never will (a window closed right after Start)."""
        with self._lock:
            self._cancelled = not self._began
            return self._cancelled

    def closing_report(self, folder: str) -> tuple[str, str] | None:
        """(text, level) once a run stopped with `stop(save_to=folder)` has been joined; None if
        it never trained."""
        if self.steps_done == 0:
            return None
        if self.last_saved == str(folder):
            return f"Training stopped at step {self.steps_done:,}; the last run was saved to {folder}", "info"
        return f"Training stopped at step {self.steps_done:,}; saving the last run failed: {self.last_error}", "error"

    # -- worker thread --------------------------------------------------------------------------
    def begin(self) -> bool:
        with self._lock:
            self._began = not self._cancelled
            return self._began

    def attach(self, trainer: Trainer) -> None:
        """The trainer is built: the flags set so far become its own."""
        with self._lock:
            self.trainer = trainer
            if self._pause:
                trainer.pause()
            if self._stop:
                trainer.stop()

    def take(self, timeout: float) -> list[tuple[str, object]]:
        """The requests waiting now (blocking up to `timeout` s for the first)."""
        try:
            first = self._requests.get(timeout=timeout) if timeout > 0 else self._requests.get_nowait()
        except queue.Empty:
            return []
        taken = [first]
        while True:
            try:
                taken.append(self._requests.get_nowait())
            except queue.Empty:
                return taken

    @property
    def began(self) -> bool:
        return self._began


__all__ = ["ACTIVE_PHASES", "Steering", "phase_actions"]
