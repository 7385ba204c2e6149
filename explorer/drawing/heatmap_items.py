"""`HeatmapPlot`: one map as a PlotItem inside a view's own GraphicsLayout (positional encodings,
the compare panel's layer × head summary): one ImageItem, fixed levels, `LabelAxis` axes (the
one label policy of `explorer.drawing.label_axis`), created once and updated in place."""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF

from explorer.drawing import plot_style as st
from explorer.drawing.label_axis import LabelAxis
from explorer.drawing.map_overlays import MapEdges, MaskOverlay, blocked_rects


class HeatmapPlot:
    """A (rows × columns) map with token axes: one PlotItem, one ImageItem, fixed levels.

    Blocked cells are NaN in the image (transparent) over the grey hatch of `MaskOverlay`.
    `values` keeps the exact numbers for the readout and for tests.
    """

    def __init__(self, layout: pg.GraphicsLayout, row: int, col: int, cmap: pg.ColorMap,
                 levels: tuple[float, float], x_label: str, y_label: str):
        self.x_axis, self.y_axis = LabelAxis("bottom"), LabelAxis("left")
        self.plot: pg.PlotItem = layout.addPlot(row=row, col=col, enableMenu=False,  # (a menu costs its build)
                                                axisItems={"bottom": self.x_axis, "left": self.y_axis})
        self.plot.invertY(True)
        self.plot.hideButtons()
        self.plot.setMenuEnabled(False)
        self.plot.vb.setDefaultPadding(0.0)
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
        self.values: np.ndarray | None = None
        self.allowed: np.ndarray | None = None
        self._shape: tuple | None = None

    def set_map(self, values: np.ndarray, allowed: np.ndarray | None = None, x_labels=None, y_labels=None) -> None:
        """Show `values` (rows × cols); cells where `allowed` is False are drawn as blocked."""
        values = np.asarray(values, dtype=np.float32)
        shown = values if allowed is None else np.where(allowed, values, np.nan).astype(np.float32)
        self.values, self.allowed = values, allowed
        self.image.setImage(shown, autoLevels=False, levels=self.levels)
        key = (values.shape, None if allowed is None else allowed.tobytes(), tuple(x_labels or ()), tuple(y_labels or ()))
        if key != self._shape:  # geometry changed: new mask, labels, range (not every frame)
            self._shape = key
            self.mask.set_rects(blocked_rects(allowed) if allowed is not None else [])
            self.edges.set_rects([(0, 0, values.shape[1], values.shape[0])])
            self.x_axis.set_tokens(x_labels or [str(i) for i in range(values.shape[1])], numeric=True if not x_labels else None)
            self.y_axis.set_tokens(y_labels or [str(i) for i in range(values.shape[0])], numeric=True if not y_labels else None)
            self.plot.vb.setLimits(xMin=-0.5, xMax=values.shape[1] + 0.5, yMin=-0.5, yMax=values.shape[0] + 0.5)
            self.plot.vb.setRange(xRange=(0, values.shape[1]), yRange=(0, values.shape[0]), padding=0)

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

    def cell_at(self, scene_pos) -> tuple[int, int] | None:
        """(row, col) under a scene position, or None outside the map."""
        if self.values is None or not self.plot.vb.sceneBoundingRect().contains(scene_pos):
            return None
        pt: QPointF = self.plot.vb.mapSceneToView(scene_pos)
        r, c = math.floor(pt.y()), math.floor(pt.x())
        if 0 <= r < self.values.shape[0] and 0 <= c < self.values.shape[1]:
            return r, c
        return None
