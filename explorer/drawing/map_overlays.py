"""The hatch under a map's blocked cells: one path of rectangles, painted in device pixels (a fine
hatch at any zoom) and cached (the mask changes only with the input)."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QPainterPath
from PySide6.QtWidgets import QGraphicsItem

from explorer.drawing import plot_style as st
from model.inference.labels import masked_runs


class MaskOverlay(pg.GraphicsObject):

    def __init__(self):
        super().__init__()
        self._path = QPainterPath()
        self.setZValue(-1)
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)

    def set_mask(self, allowed: np.ndarray | None) -> None:
        """Hatch the blocked (False) cells of `allowed`, a rectangle per run (None: no cell)."""
        path = QPainterPath()
        for r, start, stop in masked_runs(~np.asarray(allowed, dtype=bool)) if allowed is not None else ():
            path.addRect(QRectF(start, r, stop - start, 1))
        self.prepareGeometryChange()
        self._path = path
        self.update()

    def contains_cell(self, row: int, col: int) -> bool:
        return self._path.contains(QPointF(col + 0.5, row + 0.5))

    def boundingRect(self):
        return self._path.boundingRect()

    def paint(self, p, *args):
        if self._path.isEmpty():
            return
        device = p.transform().map(self._path)
        p.save()
        p.resetTransform()
        p.setPen(Qt.PenStyle.NoPen)
        p.fillPath(device, st.colour("masked"))
        p.fillPath(device, QBrush(st.colour("mask_hatch"), Qt.BrushStyle.BDiagPattern))
        p.restore()
