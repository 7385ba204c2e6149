"""A pyqtgraph canvas that measures its own paint time, so a panel can pace its redraws by
their real cost."""
from __future__ import annotations

import time

import pyqtgraph as pg
from PySide6.QtCore import Signal


class TimedCanvas(pg.GraphicsLayoutWidget):
    """A plotting canvas that adds up the time its paints take (`take_paint_time()` reads and
    resets it), so the panel can space redraws by their real cost: every ms the GUI thread
    paints holds Python's GIL, which the training thread needs between its torch ops."""

    _paint_time = 0.0
    resized = Signal()

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self.resized.emit()

    def paintEvent(self, event) -> None:  # noqa: N802
        start = time.perf_counter()
        super().paintEvent(event)
        self._paint_time += time.perf_counter() - start

    def take_paint_time(self) -> float:
        spent, self._paint_time = self._paint_time, 0.0
        return spent
