"""The mask-leak lab off the GUI thread: a superqt generator worker (napari's `thread_worker`).

`lab_messages` builds the `LeakLab` on the worker thread and drives its `events()`; it sends
the GUI plain data only: `StepRows` (numpy columns of both runs' losses) at most every
EMIT_INTERVAL, the phase, and the final `LeakResult`. `LeakRun.stop()` may be called at any
time (before the lab exists, too); `join()` waits for the thread, so a closing window never
leaves a worker writing into dead widgets.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import Qt, QThreadPool
from superqt.utils import GeneratorWorker, create_worker

from model.interpret.leak_lab import RUNS, LeakConfig, LeakLab, LeakPhase, LeakResult, LeakStep
from model.train.request import worker_threads

EMIT_INTERVAL = 0.2  # s between batches of loss rows: the curves look live, the GUI thread stays idle


@dataclass
class StepRows:
    """Losses of both runs since the last batch: per run, (steps, losses) numpy columns."""

    columns: dict[str, tuple[np.ndarray, np.ndarray]]
    elapsed: float

    @property
    def last_step(self) -> int:
        return max((int(steps[-1]) for steps, _ in self.columns.values() if len(steps)), default=0)


class Control:
    """What the GUI thread and the worker share: the lab once built, and a stop asked before it was."""

    def __init__(self):
        self.lock = threading.Lock()
        self.lab: LeakLab | None = None
        self.stop_asked: bool | None = None  # None: no stop; else whether to still evaluate

    def stop(self, evaluate: bool) -> None:
        with self.lock:
            self.stop_asked = evaluate
            if self.lab is not None:
                self.lab.stop(evaluate)

    def attach(self, lab: LeakLab) -> None:
        with self.lock:
            self.lab = lab
            if self.stop_asked is not None:
                lab.stop(self.stop_asked)


def _rows(pending: dict[str, list[tuple[int, float]]], elapsed: float) -> StepRows:
    columns = {}
    for name, rows in pending.items():
        arr = np.asarray(rows, dtype=np.float64).reshape(-1, 2)
        columns[name] = (arr[:, 0].astype(np.int64), arr[:, 1])
        rows.clear()
    return StepRows(columns, elapsed)


def lab_messages(config: LeakConfig, control: Control, threads: int):
    """The generator the worker runs: yields "building", StepRows …, "evaluating", LeakResult."""
    import torch

    torch.set_num_threads(threads)  # the GUI thread keeps a core
    yield LeakPhase("building")
    lab = LeakLab(config)
    control.attach(lab)
    yield LeakPhase("training")
    pending: dict[str, list[tuple[int, float]]] = {name: [] for name in RUNS}
    last_emit, elapsed = time.monotonic(), 0.0
    for event in lab.events():
        if isinstance(event, LeakStep):
            pending[event.run].append((event.step, event.loss))
            elapsed = event.elapsed
            if time.monotonic() - last_emit >= EMIT_INTERVAL:
                last_emit = time.monotonic()
                yield _rows(pending, elapsed)
            continue
        if any(pending.values()):
            yield _rows(pending, elapsed)
        yield event


class LeakRun:
    """One lab in a superqt GeneratorWorker; `worker.yielded` carries StepRows, LeakPhase and
    LeakResult to the GUI thread, in order; `worker.errored` a bug. Join it before closing."""

    def __init__(self, config: LeakConfig, threads: int | None = None):
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

    def stop(self, evaluate: bool = True) -> None:
        """End training after the current step; `evaluate=False` skips the held-out scores too."""
        self.control.stop(evaluate)

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


__all__ = ["LeakRun", "StepRows", "lab_messages", "EMIT_INTERVAL", "LeakPhase", "LeakResult"]
