"""A lab (a model trained live: the induction heads, the mask leak) as a stream of messages for
a worker thread: `lab_messages` builds the lab, then yields the stages "building" and
"training", its step losses batched into `StepRows` at most every EMIT_INTERVAL, and every
other event of the lab as it comes, in order. `LabSteering` is what the GUI steers it by."""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import numpy as np

from model.train.request import torch_threads, worker_threads

EMIT_INTERVAL = 0.2  # s between batches of loss rows: the curves look live, the GUI thread stays idle


@dataclass
class StepRows:
    """Training losses since the last batch: per run ("" for a lab of one), (steps, losses) columns."""

    columns: dict[str, tuple[np.ndarray, np.ndarray]]
    elapsed: float

    @property
    def last_step(self) -> int:
        return max((int(steps[-1]) for steps, _ in self.columns.values() if len(steps)), default=0)


class LabSteering:
    """Thread-safe: a stop asked at any time (before the lab is built, too) reaches the lab's own `stop`."""

    def __init__(self):
        self.lock = threading.Lock()
        self.lab = None
        self.stop_asked: tuple | None = None  # the arguments of the lab's `stop`, once asked

    def stop(self, *args) -> None:
        with self.lock:
            self.stop_asked = args
            if self.lab is not None:
                self.lab.stop(*args)

    def cancel_unbegun(self) -> bool:
        """Never: a run's `join` waits for a lab's worker, begun or not (it ends soon after a stop)."""
        return False

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


def lab_messages(lab_class: type, step_type: type, threads: int | None, config, steering: LabSteering):
    """The worker's generator for `lab_class(config)`: its `step_type` events batched, the rest as they are."""
    with torch_threads(threads or worker_threads()):  # the GUI thread keeps a core
        yield from _lab_events(lab_class, step_type, config, steering)


def _lab_events(lab_class: type, step_type: type, config, steering: LabSteering):
    yield "building"
    lab = lab_class(config)
    steering.attach(lab)
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


__all__ = ["EMIT_INTERVAL", "LabSteering", "StepRows", "lab_messages"]
