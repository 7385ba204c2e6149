"""A training run in a superqt generator worker: the training loop (`model.train.live_loop`); its
messages reach the GUI thread in order (`worker.yielded`), the GUI steers it through its `steering`
(`model.train.steering.Steering`)."""
from __future__ import annotations

import sys
import threading
import traceback
import warnings
from functools import partial

from PySide6.QtCore import Qt, QThreadPool
from superqt.utils import GeneratorWorker, create_worker

from model.io.checkpoints import save_checkpoint
from model.train.live_loop import TrainingLoop
from model.train.request import TrainingRequest, torch_threads, worker_threads
from model.train.steering import Steering
from model.train.trainer import Trainer


def train(request: TrainingRequest, steering: Steering):
    """The generator the worker runs: yields messages, returns "finished", "stopped" or "failed"."""
    if not steering.begin():
        steering.outcome = "stopped"
        return steering.outcome
    with torch_threads(request.threads or worker_threads()):  # the GUI thread keeps a core
        steering.outcome = yield from TrainingLoop(request, steering, save_checkpoint).run()
    return steering.outcome


class TrainingRun:
    """`train(request, steering)` in a GeneratorWorker: `worker.yielded` its messages,
    `worker.errored` a bug (`error()` says it), then `worker.finished`."""

    def __init__(self, request: TrainingRequest):
        self.steering = Steering(request)
        self._done = threading.Event()
        self.worker = create_worker(train, request, self.steering, _start_thread=False, _ignore_errors=True,
                                    _worker_class=GeneratorWorker)
        self.worker.warned.connect(lambda w: sys.stderr.write(warnings.formatwarning(*w[:4])))

    @property
    def trainer(self) -> Trainer | None:
        return self.steering.trainer

    @property
    def outcome(self) -> str:
        return self.steering.outcome or "failed"

    def start(self) -> None:
        pool = QThreadPool.globalInstance()
        pool.setMaxThreadCount(pool.maxThreadCount() + 1)  # the run holds a pool thread all its life
        # connected last: once `join` returns, every other slot's `finished` is already queued
        self.worker.finished.connect(partial(_mark_done, self._done), Qt.ConnectionType.DirectConnection)
        self.worker.start()

    def error(self, exc: BaseException) -> str:
        """A bug in the loop, printed and kept as the run's last error: the text to show."""
        traceback.print_exception(exc)
        self.steering.last_error = f"{type(exc).__name__}: {exc}"
        return self.steering.last_error

    def is_running(self) -> bool:
        return self.steering.began and not self._done.is_set()

    def is_done(self) -> bool:
        return self._done.is_set()

    def join(self, timeout_ms: int = 60000) -> bool:
        """Block until the worker has ended (after `steering.stop()`)."""
        return self.steering.cancel_unbegun() or self._done.wait(timeout_ms / 1000)


def _mark_done(done: threading.Event) -> None:
    """On the worker thread, after its last message: what `join` waits for."""
    pool = QThreadPool.globalInstance()
    pool.setMaxThreadCount(pool.maxThreadCount() - 1)
    done.set()


def in_background(work, *args, on_done, on_failed) -> None:
    """`work(*args)` on a pool thread (a finished run's model: saved, or run on a new probe)."""
    worker = create_worker(work, *args, _start_thread=False, _ignore_errors=True)
    worker.returned.connect(on_done)
    worker.errored.connect(on_failed)
    worker.start()


__all__ = ["TrainingRun", "train", "in_background"]
