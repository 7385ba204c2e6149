"""The tensor inspector: one recorded tensor as a heatmap with token labels, exact values
under the mouse, and masked entries that can never be mistaken for small ones. A `TensorView`
knows nothing of the session: it is given a step's matrix and the labels of its axes."""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from explorer import style
from explorer.drawing.label_axis import LabelAxis
from explorer.drawing.map_overlays import MaskOverlay, blocked_rects
from explorer.drawing.plot_style import free_colorbar_axis

WEIGHT_LEVELS = (0.0, 1.0)
SCALE_RULE = "weight: 0–1 on every map"
TOKEN_AXES = ("src", "tgt")
FEW_ROWS = 8  # token rows whose labels the view always has room for
AXIS_TITLES = {"src": "source tokens", "tgt": "target tokens", "d_model": "feature (d_model)",
               "d_k": "feature within a head (d_k)", "d_ff": "hidden unit (d_ff)", "vocab": "vocabulary",
               "head": "head", "batch": "batch"}


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
        free_colorbar_axis(self.colorbar)  # "−0.2" as whole as "0.2"
        self.widget.addItem(self.colorbar)
        self.mask = MaskOverlay()  # over the image: masked cells are not NaN here
        self.mask.setZValue(5)
        self.plot.addItem(self.mask)
        self.count = QLabel()  # "12 of 24 labels · wheel to zoom": what the token axes drew
        self.count.setFont(style.font(style.SMALL_POINT_SIZE))
        style.set_sheet(self.count, "color: {muted};")
        self.count.setAlignment(Qt.AlignmentFlag.AlignRight)
        for axis in (self.left, self.bottom):
            axis.counted.connect(self._show_count, Qt.ConnectionType.QueuedConnection)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.widget)
        layout.addWidget(self.count)

        self.data = np.zeros((1, 1), dtype=np.float32)
        self.is_bool = False
        self.row_labels: list[str] = []
        self.col_labels: list[str] = []
        self.row_axis = self.col_axis = ""
        self.colormap_name = style.SEQUENTIAL
        self.square = False
        self._zoomed = False  # the user zoomed or panned this tensor (then a resize keeps their view)
        self.plot.vb.sigRangeChangedManually.connect(self._on_manual_range)
        self.plot.vb.sigResized.connect(self._on_resized)
        self.plot.scene().sigMouseMoved.connect(self._mouse_moved)

    def count_text(self) -> str:
        """"" when the token axes drew every label, else "k of n labels" of the one missing most."""
        short = [(a.drawn, a.in_view) for a in (self.left, self.bottom)
                 if a.tokens and not a.numeric and a.in_view and a.drawn < a.in_view]
        if not short:
            return ""
        drawn, total = min(short, key=lambda c: c[0] / c[1])
        return f"{drawn} of {total} labels"

    def _show_count(self) -> None:
        text = self.count_text()
        text = f"{text} · wheel to zoom" if text else ""
        if self.count.text() != text:
            self.count.setText(text)
        self.count.setVisible(bool(text))

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
        self.left.set_tokens(self.row_labels, numeric=not row_labels)
        self.bottom.set_tokens(self.col_labels, numeric=not col_labels)
        self.left.setLabel(titles[0] or AXIS_TITLES.get(row_axis, row_axis))
        self.bottom.setLabel(titles[1] or AXIS_TITLES.get(col_axis, col_axis))

        masked = self.masked()
        finite = self.data[np.isfinite(self.data)]
        shown = np.where(np.isfinite(self.data), self.data, np.nan)
        lo = float(finite.min()) if finite.size else 0.0
        hi = float(finite.max()) if finite.size else 1.0
        if self.is_bool:
            self.colormap_name, levels, cmap = "mask", (0.0, 1.0), style.mask_colormap()
        elif kind == "probs":  # attention weights and probabilities: always 0–1, as on every other map
            self.colormap_name, levels, cmap = style.SEQUENTIAL, WEIGHT_LEVELS, style.colormap(style.SEQUENTIAL)
        elif kind == "auto" and lo >= 0:
            top = hi if hi > 0 else 1.0
            self.colormap_name, levels, cmap = style.SEQUENTIAL, (0.0, top), style.colormap(style.SEQUENTIAL)
        else:
            a = max(abs(lo), abs(hi)) or 1.0  # symmetric: white is exactly zero
            self.colormap_name, levels, cmap = style.DIVERGING, (-a, a), style.colormap(style.DIVERGING)
        shown = np.where(np.isnan(shown), levels[0], shown)  # masked cells are covered by the overlay
        self.colorbar.setColorMap(cmap)
        self.image.setImage(shown, autoLevels=False, levels=levels)
        self.colorbar.setLevels(levels)
        self.colorbar.getAxis("right").setLabel(SCALE_RULE if kind == "probs" else "")
        self.square = row_axis in TOKEN_AXES and col_axis in TOKEN_AXES
        self._make_room(rows if row_labels else 0)
        self.plot.setAspectLocked(self.square)  # query × key: square cells, as in the paper's figures
        self.image.setRect(QRectF(0, 0, cols, rows))
        self.mask.set_rects(blocked_rects(~masked))
        room = 4 * max(rows, cols) if self.square else 0.5  # square cells may need room beside the map
        self.plot.setLimits(xMin=-room, xMax=cols + room, yMin=-room, yMax=rows + room,
                            minXRange=min(cols, 2), minYRange=min(rows, 2))
        self.reset_view()

    def _on_resized(self, *_) -> None:
        """A resized view shows the whole map again, unless the user zoomed into it (square cells
        are the aspect lock's: pyqtgraph keeps them square, the spare room around the map)."""
        if not self._zoomed:
            self.reset_view()

    def _make_room(self, token_rows: int) -> None:
        """Tall enough for a few token rows' labels (a longer input shows every k-th label and
        says so; the wheel zooms in for the rest)."""
        row_px = self.left.min_cell_px()
        axes_px = 110  # the column labels, the axis title and the margins under the map
        self.widget.setMinimumHeight(int(min(token_rows, FEW_ROWS) * row_px + axes_px) if token_rows else 0)

    def _on_manual_range(self, *_) -> None:
        self._zoomed = True

    def reset_view(self) -> None:
        """The whole tensor in view (after the user zoomed into a vocabulary or d_ff axis)."""
        self._zoomed = False
        rows, cols = self.data.shape
        self.plot.setRange(xRange=(0, cols), yRange=(0, rows), padding=0)

    # -- reading ------------------------------------------------------------------------------
    def masked(self) -> np.ndarray:
        """Cells drawn as masked: −∞ scores, or blocked (0) entries of a boolean mask."""
        if self.is_bool:
            return self.data == 0
        return np.isneginf(self.data)

    def overlay_contains(self, row: int, col: int) -> bool:
        return self.mask.contains_cell(row, col)

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


__all__ = ["TensorView", "slice_for_view", "visible_text"]
