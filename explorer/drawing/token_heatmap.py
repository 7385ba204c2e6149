"""`TokenHeatmap`: a `Heatmap` of [query, key] weights in a fixed T×T frame (a decoding step's map
grows by a row and a column, Section 3.2.3), the query row framed, the causal mask's edge and the
line after a decoder-only model's prompt."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QPainterPath, QPolygonF
from PySide6.QtWidgets import QGraphicsPathItem, QGraphicsRectItem

from explorer import style
from explorer.drawing.heatmap import Heatmap
from explorer.drawing.label_axis import label_font
from model.inference.labels import display_piece as display_piece  # (the bar charts import it here)


def _staircase(rows: int, cols: int) -> QPainterPath:
    """The edge between j <= i (allowed) and j > i (the future) of a causal mask."""
    path = QPainterPath()
    corners = [QPointF(i + 1, i + down) for i in range(min(rows, cols)) for down in (0, 1)]  # (1, 0) … (n, n)
    path.addPolygon(QPolygonF(corners))
    return path


class TokenHeatmap(Heatmap):
    """A (rows × cols) matrix in a (frame_rows × frame_cols) token grid."""

    def __init__(self, title: str = "", colormap: pg.ColorMap | None = None, parent=None):
        super().__init__(title, colormap, parent=parent)
        self.row_frame = self.overlay(QGraphicsRectItem(), "accent", 3, 10)
        self.outline = self.overlay(QGraphicsRectItem(), "muted", 1, 0, dash=True)  # the full grid: growth shows
        self.boundary = self.overlay(QGraphicsPathItem(), "error", 3, 9, dash=True)  # the causal mask's edge (mask off)
        self.separator = self.overlay(QGraphicsPathItem(), "prompt", 3, 8)  # <bos> + prompt | generated tokens
        self.note = pg.TextItem("", anchor=(0.5, 0.5))  # what an empty map waits for, in its middle
        self.note.setFont(label_font())
        self.note.hide()
        self.plot.addItem(self.note)
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        self.blocked: np.ndarray | None = None
        self.highlight_row: int | None = None
        self.separator_at: int | None = None

    def set_data(self, matrix: np.ndarray, row_labels: list[str], col_labels: list[str],
                 frame: tuple[int, int] | None = None, blocked: np.ndarray | None = None,
                 highlight_row: int | None = None, levels: tuple[float, float] = (0.0, 1.0),
                 boundary: bool = False, separator: int | None = None) -> None:
        """`matrix` (r × c) in the top-left of a `frame` grid; `blocked` cells hatched, `highlight_row`
        framed, `boundary`: the causal mask's edge, `separator`: a line after that many tokens."""
        matrix = np.asarray(matrix, dtype=np.float32)
        rows, cols = matrix.shape
        fr, fc = frame or (rows, cols)
        self.matrix, self.blocked, self.highlight_row = matrix, blocked, highlight_row
        full = np.full((fr, fc), np.nan, dtype=np.float32)  # cells not computed yet stay empty
        full[:rows, :cols] = matrix
        allowed = np.ones((fr, fc), dtype=bool)
        if blocked is not None:
            allowed[:rows, :cols] = ~np.asarray(blocked, dtype=bool)
        self.levels = (float(levels[0]), float(levels[1]))
        super().set_data(full, list(row_labels)[:fr], list(col_labels)[:fc],
                         allowed=allowed if blocked is not None else None)
        self.row_frame.setRect(QRectF(0, highlight_row or 0, cols, 1))
        self.row_frame.setVisible(highlight_row is not None and 0 <= highlight_row < rows)
        self.outline.setRect(QRectF(0, 0, fc, fr))
        self.boundary.setPath(_staircase(rows, cols) if boundary else QPainterPath())
        self.separator_at = separator or None
        line = QPainterPath()
        if self.separator_at is not None:
            if self.separator_at < fr:
                line.moveTo(0, self.separator_at)
                line.lineTo(fc, self.separator_at)
            if self.separator_at < fc:
                line.moveTo(self.separator_at, 0)
                line.lineTo(self.separator_at, fr)
        self.separator.setPath(line)
        self.note.hide()
        self._show_axes(True)

    def clear_data(self, note: str = "") -> None:
        """No map; `note` (may be "") says in its middle what it waits for."""
        self.set_data(np.zeros((0, 0)), [], [])
        self.select(None)
        if note:
            self.note.setText(note, color=style.current().muted)
            self.note.setPos(0.5, 0.5)  # the middle of the empty 1 × 1 view
        self.note.setVisible(bool(note))
        self._show_axes(not note)  # (bare axes beside the note look like a broken drawing)

    def recolour(self, *_) -> None:
        super().recolour()
        self.note.setColor(style.current().muted)

    def _show_axes(self, on: bool) -> None:
        for name in ("left", "bottom"):
            if self.plot.getAxis(name).isVisible() != on:
                self.plot.showAxis(name, on)
