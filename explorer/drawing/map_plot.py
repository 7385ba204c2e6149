"""`MapPlot`: a view box framed by axes, laid out as pyqtgraph's `PlotItem` lays them out, and
nothing more: a `PlotItem` also builds option menus and four axes, most of a map's build time,
paid again for each head of a grid. It offers the part of `PlotItem`'s API maps use."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import QGraphicsGridLayout, QGraphicsItem

AXIS_CELLS = {"top": (0, 1), "left": (1, 0), "right": (1, 2), "bottom": (2, 1)}  # (row, column); the view at (1, 1)


class MapPlot(pg.GraphicsWidget):
    """`axes`: {side: AxisItem}, linked to `vb` (`sides` without one get a plain axis)."""

    def __init__(self, axes: dict[str, pg.AxisItem] | None = None, sides=("left", "bottom"), parent=None):
        super().__init__(parent)
        self.grid = QGraphicsGridLayout()
        self.grid.setContentsMargins(1, 1, 1, 1)  # (as a PlotItem's)
        self.grid.setSpacing(0)
        self.setLayout(self.grid)
        self.vb = pg.ViewBox(parent=self, enableMenu=False)
        self.grid.addItem(self.vb, 1, 1)
        self.grid.setRowStretchFactor(1, 100)
        self.grid.setColumnStretchFactor(1, 100)
        self.axes: dict[str, pg.AxisItem] = {}
        for name in sides:
            axis = (axes or {}).get(name) or pg.AxisItem(name, parent=self)
            axis.linkToView(self.vb)
            axis.setZValue(0.5)  # over the image, under the items drawn over the axes (z ≥ 1)
            axis.setFlag(QGraphicsItem.GraphicsItemFlag.ItemNegativeZStacksBehindParent)
            self.grid.addItem(axis, *AXIS_CELLS[name])
            self.axes[name] = axis

    def getAxis(self, name: str) -> pg.AxisItem:  # noqa: N802 - PlotItem's name
        return self.axes[name]

    def showAxis(self, name: str, show: bool = True) -> None:  # noqa: N802 - PlotItem's name
        self.axes[name].setVisible(show)

    def addItem(self, item, ignoreBounds: bool = False) -> None:  # noqa: N802, N803 - PlotItem's names
        self.vb.addItem(item, ignoreBounds=ignoreBounds)

    def removeItem(self, item) -> None:  # noqa: N802 - PlotItem's name
        self.vb.removeItem(item)

    def invertY(self, on: bool = True) -> None:  # noqa: N802 - PlotItem's name
        self.vb.invertY(on)
