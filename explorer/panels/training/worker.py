"""The training loop off the GUI thread, in a superqt generator worker.

The worker runs the Qt-free `model.train.live_loop.TrainingLoop`; `TrainingRun` routes its
messages (model.train.live_messages) to one Qt signal each, on the GUI thread. The GUI steers
the run through `model.train.steering.Steering`, not GeneratorWorker's pause()/quit(): a paused
run still serves the steering queue, and a stopped one still saves its weights.
"""
from __future__ import annotations

import inspect
import sys
import threading
import traceback
import warnings
from functools import partial

from PySide6.QtCore import Qt, QThreadPool, Signal
from superqt.utils import GeneratorWorker, create_worker

from model.inference.bundle import ModelBundle
from model.train.live_loop import TrainingLoop
from model.train.live_messages import (
    Failed,
    MetricRows,
    Offer,
    Phase,
    ProbeFailed,
    RunInfo,
    Saved,
    SaveFailed,
    Snapshot,
)
from model.train.request import TrainingRequest, worker_threads
from model.train.steering import Steering
from model.train.trainer import EvalEvent, Trainer


def train(request: TrainingRequest, steering: Steering):
    """The generator a superqt `GeneratorWorker` runs: yields messages, returns the outcome
    ("finished": all steps, "stopped", "failed": could not start)."""
    import torch

    if not steering.begin():
        steering.outcome = "stopped"
        return steering.outcome
    torch.set_num_threads(request.threads or worker_threads())  # the GUI thread keeps a core
    steering.outcome = yield from TrainingLoop(request, steering, _write).run()
    return steering.outcome


# superqt's generator-worker signals: GeneratorWorker's public `SignalsClass` default (its module is private)
GeneratorWorkerSignals = inspect.signature(GeneratorWorker.__init__).parameters["SignalsClass"].default


class TrainingSignals(GeneratorWorkerSignals):
    """superqt's generator-worker signals plus one per kind of message (`worker.rows` …)."""

    info = Signal(object)  # RunInfo, once the model is built
    rows = Signal(object)  # MetricRows
    evaluated = Signal(object)  # EvalEvent
    snapshot = Signal(object)  # Snapshot
    offered = Signal(object)  # Offer
    probe_failed = Signal(str)
    saved = Signal(str)  # folder
    save_failed = Signal(str)
    failed = Signal(str)  # training error; the run pauses, nothing is lost
    phase = Signal(str)  # "building" | "running" | "paused" | "finishing"


ROUTES = {RunInfo: "info", MetricRows: "rows", EvalEvent: "evaluated", Snapshot: "snapshot", Offer: "offered",
          ProbeFailed: "probe_failed", Saved: "saved", SaveFailed: "save_failed", Failed: "failed", Phase: "phase"}
TEXT_MESSAGES = (ProbeFailed, Saved, SaveFailed, Failed, Phase)


class TrainingRun:
    """One run: `train` in a superqt GeneratorWorker, its messages routed to `worker`'s signals
    (on the GUI thread, in order), `returned` the outcome, then `finished`; join it on close."""

    def __init__(self, request: TrainingRequest):
        self.steering = Steering(request)
        self._done = threading.Event()
        self.worker = create_worker(train, request, self.steering, _start_thread=False, _ignore_errors=True,
                                    _worker_class=GeneratorWorker, SignalsClass=TrainingSignals)
        # module functions, not methods: messages queued after the panel let go of the run are dropped
        signals = self.worker.signals
        signals.yielded.connect(partial(_route, signals))
        signals.errored.connect(partial(_report, signals, self.steering))
        signals.warned.connect(lambda w: sys.stderr.write(warnings.formatwarning(*w[:4])))
        signals.finished.connect(partial(_mark_done, self._done), Qt.ConnectionType.DirectConnection)

    @property
    def trainer(self) -> Trainer | None:
        return self.steering.trainer

    @property
    def outcome(self) -> str:
        """How the run ended: "finished" (all steps), "stopped", "failed" (could not start, or a bug)."""
        return self.steering.outcome or "failed"

    def start(self) -> None:
        pool = QThreadPool.globalInstance()
        pool.setMaxThreadCount(pool.maxThreadCount() + 1)  # the run holds a pool thread all its life
        self.worker.start()

    def is_running(self) -> bool:
        return self.steering.began and not self._done.is_set()

    def is_done(self) -> bool:
        return self._done.is_set()

    def join(self, timeout_ms: int = 60000) -> bool:
        """Block until the worker has ended (after `steering.stop()`)."""
        if self.steering.cancel_unbegun():
            return True
        return self._done.wait(timeout_ms / 1000)


def _route(signals: TrainingSignals, message) -> None:
    """A yielded message to its own signal (GUI thread)."""
    signal = getattr(signals, ROUTES[type(message)])
    signal.emit(message.text if isinstance(message, TEXT_MESSAGES) else message)


def _report(signals: TrainingSignals, steering: Steering, exc: BaseException) -> None:
    """A bug in the loop: it must reach the user, not end the thread silently."""
    traceback.print_exception(exc)
    steering.last_error = f"{type(exc).__name__}: {exc}"
    signals.failed.emit(steering.last_error)


def _mark_done(done: threading.Event) -> None:
    """On the worker thread, after its last message: what `join` waits for."""
    pool = QThreadPool.globalInstance()
    pool.setMaxThreadCount(pool.maxThreadCount() - 1)
    done.set()


def _write(bundle: ModelBundle, folder: str) -> str:
    from model.io.checkpoints import save_checkpoint

    save_checkpoint(bundle, folder)
    return folder


def save_in_background(bundle: ModelBundle, folder: str, on_saved, on_failed):
    """Save a model nobody trains (a finished run's copy) on a pool thread: `on_saved(folder)`
    or `on_failed(exception)` on the caller's thread. Returns the started superqt worker."""
    worker = create_worker(_write, bundle, str(folder), _start_thread=False, _ignore_errors=True)
    worker.returned.connect(on_saved)
    worker.errored.connect(on_failed)
    worker.start()
    return worker


__all__ = ["TrainingRun", "train", "save_in_background"]
