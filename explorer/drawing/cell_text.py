"""`CellText`: the text a heatmap writes in its cells (a lens's token and probability, or each weight
as 0.00) at the label font, in the cells in view where it fits."""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QFontMetricsF

from explorer import style
from explorer.drawing.label_axis import label_font


class CellText(pg.GraphicsObject):
    """Each cell's lines (or, `numbers`, its value as 0.00), dark on a bright cell and light on a dark
    one of `image`, whatever its colour map and levels."""

    def __init__(self, image: pg.ImageItem, numbers: bool = False):
        super().__init__()
        self.image = image
        self.numbers = numbers
        self.texts: list[list[list[str]]] = []
        self.values: np.ndarray | None = None
        self.drawn = False  # whether the last paint wrote the texts
        self.whole_lines = False  # ask for cells as wide as the widest line (the map shows fewer columns)
        self.setZValue(3)

    def bright_cells(self, values: np.ndarray) -> np.ndarray:
        """Which cells are coloured bright (luma above 0.45: viridis above ~0.55), in one lookup."""
        values = np.asarray(values, dtype=np.float64)
        lo, hi = self.image.getLevels()
        t = np.clip((values - lo) / (hi - lo), 0, 1) if hi > lo else np.full_like(values, 0.5)
        rgb = self.image.getColorMap().map(np.nan_to_num(t).ravel(), mode="float")[:, :3].reshape(*values.shape, 3)
        return np.isfinite(values) & (rgb @ np.array([0.299, 0.587, 0.114]) > 0.45)

    def set_texts(self, texts, values) -> None:
        self.prepareGeometryChange()
        self.texts, self.values = texts, values
        self.update()

    def boundingRect(self):
        if self.values is None or self.values.ndim != 2:
            return QRectF()
        rows, cols = self.values.shape
        return QRectF(0, 0, cols, rows)

    def lines_of(self, r: int, c: int) -> list[str]:
        if self.texts:
            return self.texts[r][c]
        v = self.values[r, c]
        return [f"{v:.2f}"] if self.numbers and np.isfinite(v) else []

    def room(self) -> tuple[float, float]:
        """(height of a cell's lines, width of "0.00" or, `whole_lines`, of the widest line) at the label
        font, in pixels."""
        m = QFontMetricsF(label_font())
        lines = max((len(t) for row in self.texts for t in row), default=0) if self.texts else 1
        every_line = (line for row in self.texts for t in row for line in t) if self.whole_lines else ()
        widest = max(map(m.horizontalAdvance, every_line), default=0.0) + 8
        return lines * m.height(), max(m.horizontalAdvance("0.00") + 4, widest)

    def paint(self, p, *args):
        """Upright where a cell is wide enough for "0.00", else turned where it is tall enough; elided."""
        self.drawn = False
        if self.values is None or self.values.ndim != 2 or not (self.texts or self.numbers):
            return
        tr = p.transform()
        cell = tr.mapRect(QRectF(0, 0, 1, 1))
        w, h = abs(cell.width()), abs(cell.height())
        m = QFontMetricsF(label_font())
        block, number = self.room()
        upright = block <= h and number <= w
        turned = not upright and block <= w and number <= h
        if not (upright or turned):
            return
        self.drawn = True
        view = self.getViewBox()
        seen = self.mapRectFromView(view.viewRect()) if view is not None else self.boundingRect()
        rows, cols = self.values.shape
        r0, r1 = max(0, math.floor(seen.top())), min(rows, math.ceil(seen.bottom()))
        c0, c1 = max(0, math.floor(seen.left())), min(cols, math.ceil(seen.right()))
        along = w if upright else h  # the room each line has
        p.save()
        p.resetTransform()
        p.setFont(label_font())
        bright = self.bright_cells(self.values[r0:r1, c0:c1])
        for r in range(r0, r1):
            for c in range(c0, c1):
                lines = self.lines_of(r, c)
                if not lines:
                    continue
                p.setPen(style.colour("on_bright_cell" if bright[r - r0, c - c0] else "on_dark_cell"))
                shown = "\n".join(m.elidedText(line, Qt.TextElideMode.ElideRight, along - 4) for line in lines)
                box = tr.mapRect(QRectF(c, r, 1, 1))
                if upright:
                    p.drawText(box, int(Qt.AlignmentFlag.AlignCenter), shown)
                    continue
                p.save()
                p.translate(box.center())
                p.rotate(-90)
                p.drawText(QRectF(-h / 2, -w / 2, h, w), int(Qt.AlignmentFlag.AlignCenter), shown)
                p.restore()
        p.restore()
