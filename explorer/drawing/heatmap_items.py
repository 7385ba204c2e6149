"""Graphics items shared by the heatmap views: the blocked-cell hatch, cell numbers (token axes:
`token_axis`),
and `HeatmapPlot` — one plot with one image, created once and updated in place."""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QFontMetrics

from explorer.drawing import plot_style as st
from explorer.drawing.hug import hug_margins, not_reentrant
from explorer.drawing.map_overlays import MapEdges, MaskOverlay, blocked_rects

PLOT_MARGINS = (1.0, 1.0, 1.0, 1.0)  # pyqtgraph's own, around a plot's axes
LEAST_HUG = (168.0, 126.0)  # a hugging plot never shrinks its map's area below this (layout checks: 160 × 120)


from explorer.drawing.token_axis import MIN_LABEL_PT, LabelFit, TokenAxis  # noqa: F401 - re-exported


class CellNumbers(pg.GraphicsObject):
    """The weight written in each cell, drawn only where a cell is big enough on screen to hold it."""

    MIN_PT = 8

    def __init__(self):
        super().__init__()
        self._values: np.ndarray | None = None
        self.setZValue(2)

    def set_values(self, values: np.ndarray | None) -> None:
        self.prepareGeometryChange()
        self._values = values
        self.update()

    def boundingRect(self):
        if self._values is None:
            return QRectF()
        rows, cols = self._values.shape
        return QRectF(0, 0, cols, rows)

    def _fitting_font(self, cell: QRectF):
        """The largest font (≤ the tick font) in which "0.00" fits a cell, or None if none is legible."""
        for pt in range(st.TICK_PT, self.MIN_PT - 1, -1):
            f = st.font(pt)
            m = QFontMetrics(f)
            if m.horizontalAdvance("0.00") + 4 <= abs(cell.width()) and m.height() <= abs(cell.height()):
                return f
        return None

    def paint(self, p, *args):
        v = self._values
        if v is None:
            return
        tr = p.transform()
        cell = tr.mapRect(QRectF(0, 0, 1, 1))
        f = self._fitting_font(cell)
        if f is None:
            return
        view = self.getViewBox()
        visible = self.mapRectFromView(view.viewRect()) if view is not None else self.boundingRect()
        r0, r1 = max(0, int(visible.top())), min(v.shape[0], int(math.ceil(visible.bottom())))
        c0, c1 = max(0, int(visible.left())), min(v.shape[1], int(math.ceil(visible.right())))
        p.save()
        p.resetTransform()
        p.setFont(f)
        for r in range(r0, r1):
            for c in range(c0, c1):
                x = v[r, c]
                if not np.isfinite(x):
                    continue
                rect = tr.mapRect(QRectF(c, r, 1, 1))
                p.setPen(st.colour("on_bright_cell") if x > 0.55 else st.colour("on_dark_cell"))  # viridis is bright above ~0.55
                p.drawText(rect, Qt.AlignmentFlag.AlignCenter, f"{x:.2f}")
        p.restore()


class HeatmapPlot:
    """A (rows × columns) map with token axes: one PlotItem, one ImageItem, fixed levels.

    Blocked cells are NaN in the image (transparent) over the grey hatch of `MaskOverlay`.
    `values` keeps the exact numbers for the readout and for tests.
    """

    def __init__(self, layout: pg.GraphicsLayout, row: int, col: int, cmap: pg.ColorMap,
                 levels: tuple[float, float], x_label: str, y_label: str, numbers: bool = False,
                 square: bool = False):
        """`square`: rows and columns are both tokens, so every cell is drawn square."""
        self.x_axis, self.y_axis = TokenAxis("bottom"), TokenAxis("left")
        self.plot: pg.PlotItem = layout.addPlot(row=row, col=col, axisItems={"bottom": self.x_axis, "left": self.y_axis})
        self.plot.invertY(True)
        self.plot.hideButtons()
        self.plot.setMenuEnabled(False)
        self.plot.vb.setDefaultPadding(0.0)
        self.square = square
        self.plot.setAspectLocked(square)
        st.style_axis(self.x_axis, x_label)
        st.style_axis(self.y_axis, y_label)
        self.image = pg.ImageItem()
        self.image.setLookupTable(cmap.getLookupTable(nPts=256))
        self.levels = levels
        self.image.setLevels(levels)
        self.mask = MaskOverlay()
        self.plot.addItem(self.mask)
        self.plot.addItem(self.image)
        self.edges = MapEdges()
        self.plot.addItem(self.edges, ignoreBounds=True)
        self.numbers = CellNumbers() if numbers else None
        if self.numbers is not None:
            self.plot.addItem(self.numbers)
        self.values: np.ndarray | None = None
        self.allowed: np.ndarray | None = None
        self._shape: tuple | None = None
        if square:  # the plot takes the map's shape: its token labels against its rows and columns
            self.plot.vb.sigResized.connect(lambda *_: self.hug())

    @not_reentrant
    def hug(self) -> None:
        """Give a square-celled map's spare room to the margins around its plot (`hug_margins`),
        never less than a legible plot area or its title's width."""
        if not self.square or self.values is None:
            return
        rows, cols = self.values.shape
        title = self.plot.titleLabel
        title_w = title.item.boundingRect().width() + 8 if title.isVisible() and title.text else 0.0
        hug_margins(self.plot.layout, self.plot.vb, cols / max(rows, 1), (max(LEAST_HUG[0], title_w), LEAST_HUG[1]),
                    PLOT_MARGINS)

    def drawn_width(self) -> float:
        """The map's width on screen, px (an aspect-locked map may be narrower than its view box)."""
        return self.image.mapRectToScene(self.image.boundingRect()).width() if self.values is not None else 0.0

    def set_map(self, values: np.ndarray, allowed: np.ndarray | None = None, x_labels=None, y_labels=None) -> None:
        """Show `values` (rows × cols); cells where `allowed` is False are drawn as blocked."""
        values = np.asarray(values, dtype=np.float32)
        shown = values if allowed is None else np.where(allowed, values, np.nan).astype(np.float32)
        self.values, self.allowed = values, allowed
        self.image.setImage(shown, autoLevels=False, levels=self.levels)
        if self.numbers is not None:
            self.numbers.set_values(shown)
        key = (values.shape, None if allowed is None else allowed.tobytes(), tuple(x_labels or ()), tuple(y_labels or ()))
        if key != self._shape:  # geometry changed: new mask, labels, range (not every frame)
            self._shape = key
            self.mask.set_rects(blocked_rects(allowed) if allowed is not None else [])
            self.edges.set_rects([(0, 0, values.shape[1], values.shape[0])])
            self.x_axis.set_tokens(x_labels or [str(i) for i in range(values.shape[1])], numeric=True if not x_labels else None)
            self.y_axis.set_tokens(y_labels or [str(i) for i in range(values.shape[0])], numeric=True if not y_labels else None)
            room = 4 * max(values.shape) if self.square else 0.5  # square cells need room beside the map
            self.plot.vb.setLimits(xMin=-room, xMax=values.shape[1] + room, yMin=-room, yMax=values.shape[0] + room)
            self.plot.vb.setRange(xRange=(0, values.shape[1]), yRange=(0, values.shape[0]), padding=0)
            self.hug()

    def set_levels(self, levels: tuple[float, float]) -> None:
        """Change the colour scale (signed data whose range depends on the model)."""
        self.levels = (float(levels[0]), float(levels[1]))
        self.image.setLevels(self.levels)

    def clear(self) -> None:
        self.values = self.allowed = None
        self._shape = None
        self.image.clear()
        self.mask.set_rects([])
        self.edges.set_rects([])
        if self.numbers is not None:
            self.numbers.set_values(None)

    def cell_at(self, scene_pos) -> tuple[int, int] | None:
        """(row, col) under a scene position, or None outside the map."""
        if self.values is None or not self.plot.vb.sceneBoundingRect().contains(scene_pos):
            return None
        pt: QPointF = self.plot.vb.mapSceneToView(scene_pos)
        r, c = math.floor(pt.y()), math.floor(pt.x())
        if 0 <= r < self.values.shape[0] and 0 <= c < self.values.shape[1]:
            return r, c
        return None
