"""`ColourBar`: a fixed colour scale beside maps, drawn as pyqtgraph's `ColorBarItem` draws a
non-interactive one (the gradient framed by three bare axes, the values on the fourth),
without the `PlotItem` under it: that one builds option menus and a colour-map menu no bar
here offers, most of a bar's cost (about 50 ms each, paid by every panel with a bar).
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QImage, QPixmap
from PySide6.QtWidgets import QGraphicsGridLayout, QGraphicsItem, QGraphicsPixmapItem

STEPS = 256  # colours in the gradient (the bar's view spans 0..STEPS upwards)
FRAME = {"top": (0, 1), "left": (1, 0), "right": (1, 2), "bottom": (2, 1)}  # (row, column); the bar at (1, 1)


class ColourBar(pg.GraphicsWidget):
    """A vertical bar of `colorMap` for `values` (low, high); `axis` is the labelled (right) axis.
    `levels()`, `setLevels`, `setColorMap` and `getAxis` as `ColorBarItem` has them."""

    def __init__(self, values: tuple[float, float] = (0.0, 1.0), colorMap: pg.ColorMap | None = None,  # noqa: N803
                 width: float = 25, parent=None):
        super().__init__(parent)
        self.grid = QGraphicsGridLayout()
        self.grid.setContentsMargins(1, 1, 1, 1)
        self.grid.setSpacing(0)
        self.setLayout(self.grid)
        self.vb = pg.ViewBox(parent=self, enableMenu=False)
        self.vb.setMouseEnabled(x=False, y=False)
        self.vb.disableAutoRange()
        self.vb.setRange(xRange=(0, 1), yRange=(0, STEPS), padding=0)
        self.grid.addItem(self.vb, 1, 1)
        self.grid.setColumnFixedWidth(1, width)
        self.grid.setRowStretchFactor(1, 100)
        self.axes: dict[str, pg.AxisItem] = {}
        for name, (row, col) in FRAME.items():
            axis = pg.AxisItem(name, parent=self)
            axis.linkToView(self.vb)
            axis.setZValue(0.5)
            axis.setFlag(QGraphicsItem.GraphicsItemFlag.ItemNegativeZStacksBehindParent)
            if name != "right":  # a frame only
                axis.setTicks([])
                axis.setStyle(showValues=False)
            self.grid.addItem(axis, row, col)
            self.axes[name] = axis
        self.axis = self.axes["right"]
        self.axis.unlinkFromView()
        self.axis.setWidth(45)
        self.bar = QGraphicsPixmapItem()
        self.bar.setShapeMode(QGraphicsPixmapItem.ShapeMode.BoundingRectShape)
        self.vb.addItem(self.bar)
        self.values = (float(values[0]), float(values[1]))
        self.axis.setRange(*self.values)
        self._cmap: pg.ColorMap | None = None
        if colorMap is not None:
            self.setColorMap(colorMap)

    def getAxis(self, name: str) -> pg.AxisItem:  # noqa: N802 - ColorBarItem's name
        return self.axes[name]

    def colorMap(self) -> pg.ColorMap | None:  # noqa: N802 - ColorBarItem's name
        return self._cmap

    def setColorMap(self, cmap: pg.ColorMap) -> None:  # noqa: N802 - ColorBarItem's name
        """The gradient: one pixel wide, STEPS high, stretched over the bar by the view."""
        self._cmap = cmap
        lut = np.ascontiguousarray(cmap.getLookupTable(nPts=STEPS, alpha=True)[:, None, :])  # (STEPS, 1, RGBA)
        image = QImage(lut.data, 1, STEPS, lut.strides[0], QImage.Format.Format_RGBA8888)
        self.bar.setPixmap(QPixmap.fromImage(image))  # (copies the pixels: `lut` may go)

    def levels(self) -> tuple[float, float]:
        return self.values

    def setLevels(self, values: tuple[float, float]) -> None:  # noqa: N802 - ColorBarItem's name
        low, high = float(values[0]), float(values[1])
        if low > high:
            low = high = (low + high) / 2
        self.values = (low, high)
        self.axis.setRange(low, high)


__all__ = ["ColourBar"]
