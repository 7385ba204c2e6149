"""The tensor inspector: one recorded tensor as a heatmap with token labels, exact values
under the mouse, and masked entries that can never be mistaken for small ones.

A `TensorView` knows nothing of the session: it is given a `Step`, the labels of its axes
and a head, and shows them. Items (image, colour bar, mask overlay) are created once and
updated in place (pyqtgraph's advice; see STYLE.md).
"""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFontMetricsF, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsPathItem, QVBoxLayout, QWidget

from explorer import style

MIN_LABEL_GAP_PX = 6
AXIS_TITLES = {"src": "source tokens", "tgt": "target tokens", "d_model": "feature (d_model)",
               "d_k": "feature within a head (d_k)", "d_ff": "hidden unit (d_ff)", "vocab": "vocabulary",
               "head": "head", "batch": "batch"}


class LabelAxis(pg.AxisItem):
    """An axis with one label per cell, thinned for whatever zoom the view is at, so big
    tensors (a vocabulary, d_ff = 2048) stay legible and labels never overlap.

    Feature indices (`numeric=True`) are shown every k-th cell, k in 1, 2, 5, 10, 20 …;
    tokens are placed greedily left to right, so one wide `<bos>` does not hide the
    one-letter tokens beside it."""

    def __init__(self, orientation: str, **kwargs):
        super().__init__(orientation, **kwargs)
        self.labels: list[str] | None = None
        self.numeric = True
        self._widths: list[float] = []
        self._label_px = 12.0
        self.setStyle(tickFont=style.font(style.SMALL_POINT_SIZE, mono=True), tickTextOffset=4)

    @property
    def vertical(self) -> bool:
        return self.orientation in ("left", "right")

    def set_labels(self, labels: list[str] | None, numeric: bool = False) -> None:
        self.labels = list(labels) if labels is not None else None
        self.numeric = numeric
        metrics = QFontMetricsF(style.font(style.SMALL_POINT_SIZE, mono=True))
        if self.labels:
            if self.vertical:
                self._widths = [metrics.height()] * len(self.labels)
                title_room = 26  # the axis title ("source tokens") sits left of the labels
                self.setWidth(min(150, max(metrics.horizontalAdvance(s) for s in self.labels) + 14) + title_room)
            else:
                self._widths = [metrics.horizontalAdvance(s) for s in self.labels]
            self._label_px = max(self._widths)
        self.picture = None
        self.update()

    def stride(self, lo: float, hi: float, size: float) -> int:
        """Show every k-th label, k in 1, 2, 5, 10, 20, 50 … so labels never overlap."""
        if size <= 0:
            return 1
        need = (self._label_px + MIN_LABEL_GAP_PX) / (size / max(hi - lo, 1e-9))
        magnitude = 1
        while True:
            for m in (1, 2, 5):
                if m * magnitude >= need:
                    return m * magnitude
            magnitude *= 10

    def visible_ticks(self, lo: float, hi: float, size: float) -> list[int]:
        """Indices of the cells that get a label when cells lo…hi fill `size` pixels."""
        n = len(self.labels)
        first, last = max(0, int(math.floor(lo))), min(n, int(math.ceil(hi)))
        if self.numeric:
            k = self.stride(lo, hi, size)
            return [i for i in range(first - first % k, last, k) if 0 <= i < n]
        px = size / max(hi - lo, 1e-9)
        shown, right_edge = [], -math.inf
        for i in range(first, last):
            centre, half = (i + 0.5 - lo) * px, self._widths[i] / 2
            if centre - half >= right_edge + MIN_LABEL_GAP_PX:
                shown.append(i)
                right_edge = centre + half
        return shown

    def tickValues(self, minVal, maxVal, size):  # noqa: N802 - pyqtgraph API
        if not self.labels:
            return super().tickValues(minVal, maxVal, size)
        minVal, maxVal = sorted((minVal, maxVal))  # an inverted axis passes them swapped
        return [(1.0, [i + 0.5 for i in self.visible_ticks(minVal, maxVal, size)])]

    def tickStrings(self, values, scale, spacing):  # noqa: N802 - pyqtgraph API
        if not self.labels:
            return super().tickStrings(values, scale, spacing)
        return [self.labels[int(v)] if 0 <= int(v) < len(self.labels) else "" for v in values]


def visible_text(piece: str) -> str:
    """Spaces and control characters as visible symbols, so a label is never blank."""
    return piece.replace(" ", "␣").replace("\n", "⏎").replace("\t", "⇥") if piece.strip() else "␣" * len(piece) or "∅"


class TensorView(QWidget):
    """Heatmap of a 2-D slice of a step's tensor.

    `show(step, row_labels, col_labels, head)`; `readout_at(row, col)` is what the hover
    line shows; `value_at(row, col)` the exact float; `masked()` the boolean −∞/blocked map.
    """

    hovered = Signal(str)  # the readout line under the mouse ("" when outside)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.widget = pg.GraphicsLayoutWidget()
        self.widget.setBackground(style.current().canvas)
        self.left = LabelAxis("left")
        self.bottom = LabelAxis("bottom")
        self.plot = self.widget.addPlot(axisItems={"left": self.left, "bottom": self.bottom})
        self.plot.invertY(True)  # row 0 at the top, as a matrix is written
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        for name in ("left", "bottom"):
            self.plot.getAxis(name).setTextPen(pg.mkPen(style.TEXT))
            self.plot.getAxis(name).label.setFont(style.font(style.SMALL_POINT_SIZE))
        self.image = pg.ImageItem()
        self.plot.addItem(self.image)
        self.colorbar = pg.ColorBarItem(values=(0, 1), colorMap=style.colormap(style.SEQUENTIAL), interactive=False,
                                        width=18)
        self.colorbar.setImageItem(self.image)
        self.colorbar.getAxis("right").setStyle(tickFont=style.font(style.SMALL_POINT_SIZE, mono=True))
        self.widget.addItem(self.colorbar)
        self.mask_fill = QGraphicsPathItem()
        self.mask_fill.setBrush(QBrush(style.MASKED))
        self.mask_fill.setPen(QPen(Qt.NoPen))
        self.mask_hatch = QGraphicsPathItem()
        self.mask_hatch.setBrush(QBrush(style.MASKED_HATCH, Qt.BDiagPattern))
        self.mask_hatch.setPen(QPen(Qt.NoPen))
        for item, z in ((self.mask_fill, 5), (self.mask_hatch, 6)):
            item.setZValue(z)
            self.plot.addItem(item)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.widget)

        self.data = np.zeros((1, 1), dtype=np.float32)
        self.is_bool = False
        self.row_labels: list[str] = []
        self.col_labels: list[str] = []
        self.row_axis = self.col_axis = ""
        self.colormap_name = style.SEQUENTIAL
        self.plot.scene().sigMouseMoved.connect(self._mouse_moved)

    # -- showing ------------------------------------------------------------------------------
    def show_matrix(self, data: np.ndarray, row_axis: str, col_axis: str, row_labels: list[str] | None,
                    col_labels: list[str] | None, kind: str, titles: tuple[str | None, str | None] = (None, None)
                    ) -> None:
        """data (R, C): float (maybe with −∞) or bool. kind: "probs" | "signed" | "mask" | "auto".
        titles: (row, column) axis titles replacing the defaults of AXIS_TITLES (None: default)."""
        data = np.asarray(data)
        self.is_bool = data.dtype == bool
        self.data = data.astype(np.float32)
        rows, cols = self.data.shape
        self.row_axis, self.col_axis = row_axis, col_axis
        self.row_labels = [visible_text(s) for s in row_labels] if row_labels else [str(i) for i in range(rows)]
        self.col_labels = [visible_text(s) for s in col_labels] if col_labels else [str(i) for i in range(cols)]
        self.left.set_labels(self.row_labels, numeric=not row_labels)
        self.bottom.set_labels(self.col_labels, numeric=not col_labels)
        self.left.setLabel(titles[0] or AXIS_TITLES.get(row_axis, row_axis))
        self.bottom.setLabel(titles[1] or AXIS_TITLES.get(col_axis, col_axis))

        masked = self.masked()
        finite = self.data[np.isfinite(self.data)]
        shown = np.where(np.isfinite(self.data), self.data, np.nan)
        lo = float(finite.min()) if finite.size else 0.0
        hi = float(finite.max()) if finite.size else 1.0
        if self.is_bool:
            self.colormap_name, levels, cmap = "mask", (0.0, 1.0), style.mask_colormap()
        elif kind == "probs" or (kind == "auto" and lo >= 0):
            top = hi if hi > 0 else 1.0
            self.colormap_name, levels, cmap = style.SEQUENTIAL, (0.0, top), style.colormap(style.SEQUENTIAL)
        else:
            a = max(abs(lo), abs(hi)) or 1.0  # symmetric: white is exactly zero
            self.colormap_name, levels, cmap = style.DIVERGING, (-a, a), style.colormap(style.DIVERGING)
        shown = np.where(np.isnan(shown), levels[0], shown)  # masked cells are covered by the overlay
        self.colorbar.setColorMap(cmap)
        self.image.setImage(shown, autoLevels=False, levels=levels)
        self.colorbar.setLevels(levels)
        self.image.setRect(QRectF(0, 0, cols, rows))
        self._set_overlay(masked)
        self.plot.setLimits(xMin=-0.5, xMax=cols + 0.5, yMin=-0.5, yMax=rows + 0.5,
                            minXRange=min(cols, 2), minYRange=min(rows, 2))
        self.reset_view()

    def reset_view(self) -> None:
        """The whole tensor in view (after the user zoomed into a vocabulary or d_ff axis)."""
        rows, cols = self.data.shape
        self.plot.setRange(xRange=(0, cols), yRange=(0, rows), padding=0)

    def _set_overlay(self, masked: np.ndarray) -> None:
        """One path through every masked cell: solid grey plus hatching (drawn in screen pixels)."""
        path = QPainterPath()
        for r, start, stop in masked_runs(masked):  # one rectangle per run: a causal mask is one per row
            path.addRect(QRectF(float(start), float(r), float(stop - start), 1.0))
        self.mask_fill.setPath(path)
        self.mask_hatch.setPath(path)

    # -- reading ------------------------------------------------------------------------------
    def masked(self) -> np.ndarray:
        """Cells drawn as masked: −∞ scores, or blocked (0) entries of a boolean mask."""
        if self.is_bool:
            return self.data == 0
        return np.isneginf(self.data)

    def overlay_contains(self, row: int, col: int) -> bool:
        return self.mask_hatch.path().contains(QPointF(col + 0.5, row + 0.5))

    def value_at(self, row: int, col: int) -> float:
        return float(self.data[row, col])

    def readout_at(self, row: int, col: int) -> str:
        if not (0 <= row < self.data.shape[0] and 0 <= col < self.data.shape[1]):
            return ""
        v = self.data[row, col]
        if self.is_bool:
            value = "1  (may attend)" if v else "0  (blocked)"
        else:
            value = style.format_value(float(v))
            if np.isneginf(v):
                value += "  (masked)"
        row_name = f"{self.row_axis} {row}" + ("" if self.left.numeric else f" “{self.row_labels[row]}”")
        col_name = f"{self.col_axis} {col}" + ("" if self.bottom.numeric else f" “{self.col_labels[col]}”")
        return f"{row_name},  {col_name}  =  {value}"

    def cell_to_scene(self, row: int, col: int) -> QPointF:
        """Scene position of a cell's centre (tests move the mouse there)."""
        return self.plot.vb.mapViewToScene(QPointF(col + 0.5, row + 0.5))

    def _mouse_moved(self, pos) -> None:
        if not self.plot.vb.sceneBoundingRect().contains(pos):
            self.hovered.emit("")
            return
        p = self.plot.vb.mapSceneToView(pos)
        row, col = int(math.floor(p.y())), int(math.floor(p.x()))
        self.hovered.emit(self.readout_at(row, col))


def masked_runs(masked: np.ndarray) -> list[tuple[int, int, int]]:
    """(row, first column, one past the last) for every horizontal run of True cells."""
    padded = np.zeros((masked.shape[0], masked.shape[1] + 2), dtype=np.int8)
    padded[:, 1:-1] = masked
    edges = np.diff(padded, axis=1)  # +1 where a run starts, -1 one past where it ends
    starts, stops = np.nonzero(edges == 1), np.nonzero(edges == -1)
    return list(zip(starts[0].tolist(), starts[1].tolist(), stops[1].tolist()))


def slice_for_view(tensor: np.ndarray, axes: tuple[str, ...], head: int) -> tuple[np.ndarray, str, str]:
    """The 2-D slice a heatmap shows: batch 0, the chosen head, the last two axes as (rows, cols).

    A 1-D tensor becomes one row. Returns (matrix, row axis name, column axis name)."""
    t, names = tensor, list(axes)
    while t.ndim > 2:
        axis = names[0]
        index = min(head, t.shape[0] - 1) if axis == "head" else 0
        t, names = t[index], names[1:]
    if t.ndim == 1:
        return t[None, :], "", names[0]
    if t.ndim == 0:
        return np.reshape(t, (1, 1)), "", ""
    return t, names[0], names[1]


__all__ = ["LabelAxis", "TensorView", "masked_runs", "slice_for_view", "visible_text"]
