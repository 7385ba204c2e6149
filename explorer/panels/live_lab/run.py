"""A lab (a model trained live: the induction heads, the mask leak) off the GUI thread, in a
superqt generator worker (napari's `thread_worker`).

`lab_messages` builds the lab on the worker thread and drives its `events()`; the GUI gets
plain data only: the stages "building" and "training", `StepRows` (numpy columns of step and
loss per run) at most every EMIT_INTERVAL, and every other event of the lab as it comes.
`LabRun.stop(...)` may be called at any time (before the lab exists, too) and is handed to the
lab's own `stop`; `join()` waits for the thread, so a closing window never leaves a worker
writing into dead widgets.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import Qt, QThreadPool
from superqt.utils import GeneratorWorker, create_worker

from model.train.request import worker_threads

EMIT_INTERVAL = 0.2  # s between batches of loss rows: the curves look live, the GUI thread stays idle


@dataclass
class StepRows:
    """Training losses since the last batch: per run ("" for a lab of one), (steps, losses) columns."""

    columns: dict[str, tuple[np.ndarray, np.ndarray]]
    elapsed: float

    @property
    def last_step(self) -> int:
        return max((int(steps[-1]) for steps, _ in self.columns.values() if len(steps)), default=0)


class Control:
    """What the GUI thread and the worker share: the lab once built, and a stop asked before it was."""

    def __init__(self):
        self.lock = threading.Lock()
        self.lab = None
        self.stop_asked: tuple | None = None  # the arguments of the lab's `stop`, once asked

    def stop(self, *args) -> None:
        with self.lock:
            self.stop_asked = args
            if self.lab is not None:
                self.lab.stop(*args)

    def attach(self, lab) -> None:
        with self.lock:
            self.lab = lab
            if self.stop_asked is not None:
                lab.stop(*self.stop_asked)


def _rows(pending: dict[str, list[tuple[int, float]]], elapsed: float) -> StepRows:
    columns = {}
    for run, rows in pending.items():
        arr = np.asarray(rows, dtype=np.float64).reshape(-1, 2)
        columns[run] = (arr[:, 0].astype(np.int64), arr[:, 1])
        rows.clear()
    return StepRows(columns, elapsed)


def lab_messages(make_lab: Callable[[], object], step_type: type, control: Control, threads: int):
    """The generator the worker runs: "building", "training", then StepRows for the lab's
    `step_type` events (batched) and every other event as it is, in order."""
    import torch

    torch.set_num_threads(threads)  # the GUI thread keeps a core
    yield "building"
    lab = make_lab()
    control.attach(lab)
    yield "training"
    pending: dict[str, list[tuple[int, float]]] = {}
    last_emit, elapsed = time.monotonic(), 0.0
    for event in lab.events():
        if isinstance(event, step_type):
            pending.setdefault(getattr(event, "run", ""), []).append((event.step, event.loss))
            elapsed = event.elapsed
            if time.monotonic() - last_emit >= EMIT_INTERVAL:
                last_emit = time.monotonic()
                yield _rows(pending, elapsed)
            continue
        if any(pending.values()):
            yield _rows(pending, elapsed)
        yield event


class LabRun:
    """One lab in a superqt GeneratorWorker; `worker.yielded` carries its messages to the GUI
    thread, in order; `worker.errored` a bug. Join it before closing."""

    def __init__(self, make_lab: Callable[[], object], step_type: type, threads: int | None = None):
        self.control = Control()
        self._done = threading.Event()
        self._started = False
        self.worker = create_worker(lab_messages, make_lab, step_type, self.control, threads or worker_threads(),
                                    _start_thread=False, _ignore_errors=True, _worker_class=GeneratorWorker)
        # In the worker thread, after its last message: what `join` waits for.
        self.worker.finished.connect(self._mark_done, Qt.ConnectionType.DirectConnection)

    def start(self) -> None:
        pool = QThreadPool.globalInstance()
        pool.setMaxThreadCount(pool.maxThreadCount() + 1)  # the lab holds a pool thread all its life
        self._started = True
        self.worker.start()

    def stop(self, *args) -> None:
        """End training after the current step (the arguments go to the lab's `stop`)."""
        self.control.stop(*args)

    def is_done(self) -> bool:
        return self._done.is_set()

    def join(self, timeout_s: float = 60.0) -> bool:
        """Block until the worker has ended (call `stop()` first). True if it has."""
        return self._done.wait(timeout_s) if self._started else True

    def _mark_done(self) -> None:
        pool = QThreadPool.globalInstance()
        pool.setMaxThreadCount(pool.maxThreadCount() - 1)
        self._done.set()


__all__ = ["LabRun", "StepRows", "lab_messages", "EMIT_INTERVAL"]
