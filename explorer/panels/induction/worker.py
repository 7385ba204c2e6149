"""The induction lab off the GUI thread: a superqt generator worker (napari's `thread_worker`).

`lab_messages` builds the `InductionLab` on the worker thread and drives its `events()`; the
GUI gets plain data only: `LossRows` (numpy columns of step and loss) at most every
EMIT_INTERVAL, and each `InductionMeasure` as it comes. `InductionRun.stop()` may be called at
any time (before the lab exists, too); `join()` waits for the thread, so a closing window never
leaves a worker writing into dead widgets.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import Qt, QThreadPool
from superqt.utils import GeneratorWorker, create_worker

from model.train.induction import InductionConfig, InductionLab, InductionMeasure, InductionStep
from model.train.request import worker_threads

EMIT_INTERVAL = 0.2  # s between batches of loss rows: the curves look live, the GUI thread stays idle


@dataclass
class LossRows:
    """Training losses since the last batch, and the seconds trained so far."""

    steps: np.ndarray
    losses: np.ndarray
    elapsed: float


class Control:
    """What the GUI thread and the worker share: the lab once built, and a stop asked before it was."""

    def __init__(self):
        self.lock = threading.Lock()
        self.lab: InductionLab | None = None
        self.stop_asked = False

    def stop(self) -> None:
        with self.lock:
            self.stop_asked = True
            if self.lab is not None:
                self.lab.stop()

    def attach(self, lab: InductionLab) -> None:
        with self.lock:
            self.lab = lab
            if self.stop_asked:
                lab.stop()


def _rows(pending: list[tuple[int, float]], elapsed: float) -> LossRows:
    arr = np.asarray(pending, dtype=np.float64).reshape(-1, 2)
    pending.clear()
    return LossRows(arr[:, 0].astype(np.int64), arr[:, 1], elapsed)


def lab_messages(config: InductionConfig, control: Control, threads: int):
    """The generator the worker runs: yields LossRows and InductionMeasures, in step order."""
    import torch

    torch.set_num_threads(threads)  # the GUI thread keeps a core
    lab = InductionLab(config)
    control.attach(lab)
    pending: list[tuple[int, float]] = []
    last_emit, elapsed = time.monotonic(), 0.0
    for event in lab.events():
        if isinstance(event, InductionStep):
            pending.append((event.step, event.loss))
            elapsed = event.elapsed
            if time.monotonic() - last_emit >= EMIT_INTERVAL:
                last_emit = time.monotonic()
                yield _rows(pending, elapsed)
            continue
        if pending:
            yield _rows(pending, elapsed)
        yield event


class InductionRun:
    """One lab in a superqt GeneratorWorker; `worker.yielded` carries LossRows and
    InductionMeasures to the GUI thread, in order; `worker.errored` a bug. Join it before closing."""

    def __init__(self, config: InductionConfig, threads: int | None = None):
        self.config = config
        self.control = Control()
        self._done = threading.Event()
        self._started = False
        self.worker = create_worker(lab_messages, config, self.control, threads or worker_threads(),
                                    _start_thread=False, _ignore_errors=True, _worker_class=GeneratorWorker)
        # In the worker thread, after its last message: what `join` waits for.
        self.worker.finished.connect(self._mark_done, Qt.ConnectionType.DirectConnection)

    def start(self) -> None:
        pool = QThreadPool.globalInstance()
        pool.setMaxThreadCount(pool.maxThreadCount() + 1)  # the lab holds a pool thread all its life
        self._started = True
        self.worker.start()

    def stop(self) -> None:
        """End training after the current step (the last measurement still comes)."""
        self.control.stop()

    def is_done(self) -> bool:
        return self._done.is_set()

    def join(self, timeout_s: float = 60.0) -> bool:
        """Block until the worker has ended (call `stop()` first). True if it has."""
        if not self._started:
            return True
        return self._done.wait(timeout_s)

    def _mark_done(self) -> None:
        pool = QThreadPool.globalInstance()
        pool.setMaxThreadCount(pool.maxThreadCount() - 1)
        self._done.set()


__all__ = ["InductionRun", "LossRows", "lab_messages", "EMIT_INTERVAL", "InductionMeasure"]
