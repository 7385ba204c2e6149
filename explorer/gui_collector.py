"""`GuiCollector`: Python's cyclic garbage collection, run only on the GUI thread, in short passes.

Automatic collection runs in whichever thread allocates: a worker's (training, a frame,
attribution) could destroy Qt objects caught in dead cycles off the GUI thread. So automatic
collection is off and a timer on the GUI thread collects instead (as pyqtgraph's
`GarbageCollector` does), with two changes that keep every pass short:

- the young generations are checked ten times a second, not once: a pass walks only what was
  allocated since the last one, not a second's worth of a panel being built;
- the oldest generation is collected only when it has grown by MIN_GROWTH objects since the
  last full pass, not after every tenth middle-generation pass, and what survives a full pass is
  frozen (`gc.freeze`): the next full pass walks only what came since (tens of milliseconds),
  not every live object (0.2–1 s with a model and the panels loaded). Garbage cycles cannot
  pile up: they count towards the growth.

The price of freezing: an object frozen while alive is freed by its reference count when it is
dropped, but never by a collection, so a dead *cycle* of frozen objects stays until the heap is
unfrozen. Every UNFREEZE_EVERY-th full pass therefore unfreezes first and walks everything (one
long pass in a long session, not one a minute), so what an hour of lecturing leaves in cycles is
bounded. A replaced model has no such cycle (benchmarks/gui_stalls.py checks that every replaced
model is freed).
"""
from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

MIN_GROWTH = 20_000  # objects the oldest generation gains before a full pass (~20–40 ms to walk)
UNFREEZE_EVERY = 10  # every this-many full passes, the frozen heap is walked too (its dead cycles freed)


class GuiCollector(QObject):
    """Collects on a timer of this (the GUI) thread; `check()` is one pass, `full_passes` counts
    the collections of the whole heap."""

    def __init__(self, interval_ms: int = 100, parent: QObject | None = None):
        super().__init__(parent)
        self.thresholds = gc.get_threshold()
        gc.disable()
        self.full_passes = 0
        self.old_objects = len(gc.get_objects(generation=2))  # its size after the last full pass
        self.timer = QTimer(self)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self.check)
        self.timer.start()

    def check(self) -> None:
        """Collect the youngest generation when it is over its threshold; the middle one every
        threshold-th time (as automatic collection would); the oldest when it has grown enough."""
        young, middle, _old = gc.get_count()
        if young <= self.thresholds[0]:
            return
        if middle <= self.thresholds[1]:
            gc.collect(0)
            return
        gc.collect(1)
        old = len(gc.get_objects(generation=2))
        if old - self.old_objects > MIN_GROWTH:
            if self.full_passes % UNFREEZE_EVERY == UNFREEZE_EVERY - 1:
                gc.unfreeze()
            gc.collect(2)
            gc.freeze()
            self.full_passes += 1
            self.old_objects = 0  # (all frozen)

    def stop(self) -> None:
        self.timer.stop()


def collect_on_gui_thread() -> GuiCollector:
    """A `GuiCollector` for the app. What start-up made is collected and frozen first, so no pass
    walks torch's and Qt's ~200,000 objects."""
    gc.collect()
    gc.freeze()
    return GuiCollector()


__all__ = ["GuiCollector", "collect_on_gui_thread"]
