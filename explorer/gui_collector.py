"""`GuiCollector`: cyclic garbage collection on the GUI thread only (a worker's could destroy Qt
objects off it), in short passes: the oldest generation only after it grew by MIN_GROWTH, then
frozen (`gc.freeze`) so a full pass walks only what came since."""
from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

INTERVAL_MS = 100  # how often the GUI thread checks
MIN_GROWTH = 20_000  # objects the oldest generation gains before a full pass (~20–40 ms to walk)
UNFREEZE_EVERY = 10  # every this-many full passes, the frozen heap is walked too (its dead cycles freed)


class GuiCollector(QObject):
    """Collects on a timer of the GUI thread; `check()` is one pass, `full_passes` counts full ones."""

    def __init__(self):
        super().__init__()
        self.thresholds = gc.get_threshold()
        gc.disable()
        self.full_passes = 0
        self.old_objects = len(gc.get_objects(generation=2))  # its size after the last full pass
        self.timer = QTimer(self, interval=INTERVAL_MS, timeout=self.check)
        self.timer.start()

    def check(self) -> None:
        """The young generations as automatic collection would; the oldest when it has grown enough."""
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


def collect_on_gui_thread() -> GuiCollector:
    """A `GuiCollector` for the app; what start-up made is frozen first (no pass walks torch's and Qt's)."""
    gc.collect()
    gc.freeze()
    return GuiCollector()

