"""Overlays a map draws over (or under) its image: the hatch of blocked cells and the map's edge.

Both are held as one path of rectangles in view coordinates and drawn in device pixels, so the
hatch keeps its fine spacing and the edge its one-pixel width at any zoom.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsItem

from explorer.drawing import plot_style as st


def masked_runs(masked: np.ndarray) -> list[tuple[int, int, int]]:
    """(row, first column, one past the last) for every horizontal run of True cells: a causal
    mask gives T − 1 runs, not T²/2 cells."""
    masked = np.asarray(masked, dtype=bool)
    padded = np.zeros((masked.shape[0], masked.shape[1] + 2), dtype=np.int8)
    padded[:, 1:-1] = masked
    edges = np.diff(padded, axis=1)  # +1 where a run starts, -1 one past where it ends
    starts, stops = np.nonzero(edges == 1), np.nonzero(edges == -1)
    return list(zip(starts[0].tolist(), starts[1].tolist(), stops[1].tolist()))


def blocked_rects(allowed: np.ndarray) -> list[tuple[int, int, int, int]]:
    """(x, y, width, height) rectangles covering the blocked (False) cells, one per run."""
    return [(start, r, stop - start, 1) for r, start, stop in masked_runs(~np.asarray(allowed, dtype=bool))]


class _Rects(pg.GraphicsObject):
    """Rectangles in view coordinates, held as one path (the hatch and the outlines below)."""

    def __init__(self):
        super().__init__()
        self._path = QPainterPath()

    def set_rects(self, rects) -> None:
        path = QPainterPath()
        for x, y, w, h in rects:
            path.addRect(QRectF(x, y, w, h))
        self.prepareGeometryChange()
        self._path = path
        self.update()

    def contains_cell(self, row: int, col: int) -> bool:
        return self._path.contains(QPointF(col + 0.5, row + 0.5))


class MaskOverlay(_Rects):
    """Grey, hatched rectangles under blocked cells. The hatch is drawn in device pixels, so it
    keeps the same fine spacing at any zoom."""

    def __init__(self):
        super().__init__()
        self.setZValue(-1)  # under the image, which is transparent (NaN) on blocked cells
        # The mask changes only with the input's length, not per frame: paint it once into a
        # cached pixmap (hatching ~900 runs of a 6 × 8 decoder grid otherwise costs ~2.5 ms a frame).
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)

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


class MapEdges(_Rects):
    """A thin outline around each map, so a map of near-zero (dark purple) or near-one (yellow)
    weights keeps its edge on either canvas. One device pixel wide at any zoom."""

    _pad = (0.0, 0.0)  # one device pixel, in view coordinates (see viewTransformChanged)

    def __init__(self):
        super().__init__()
        self.setZValue(2)  # over the image and a zoom's detail, under the selection box

    def boundingRect(self):
        """The rects and the pen's pixel around them (else a shrinking map left trails). Asked
        for many times a frame: the pixel's size is measured when the view's transform changes."""
        pad_x, pad_y = self._pad
        return self._path.boundingRect().adjusted(-pad_x, -pad_y, pad_x, pad_y)

    def viewTransformChanged(self):
        self.prepareGeometryChange()
        self._pad = self._pixel()

    def _pixel(self) -> tuple[float, float]:
        """One device pixel in view coordinates, (0, 0) while the view has no size yet."""
        if self.getViewBox() is None:
            return 0.0, 0.0
        try:
            px = self.pixelSize()  # (None, None) or an error while the view has no size yet
        except Exception:  # (a singular transform: pyqtgraph raises from inside)
            return 0.0, 0.0
        if px and px[0] is not None and px[1] is not None:
            return abs(px[0]), abs(px[1])
        return 0.0, 0.0

    def paint(self, p, *args):
        if self._path.isEmpty():
            return
        pen = QPen(st.colour("map_edge"))
        pen.setCosmetic(True)
        pen.setWidthF(1.0)
        p.setPen(pen)
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawPath(self._path)
