"""`MapPlot`: a view box with a left and a bottom axis, laid out as pyqtgraph's `PlotItem` lays
them out, and nothing more.

A `PlotItem` also builds its option menus (a form of a dozen widgets) and a top and a right
axis: most of what a map costs to build (about 20 ms of a map's 25), paid again for each of
the heads of a grid. A map uses none of it: `Heatmap` draws in a `MapPlot`, which offers the
part of `PlotItem`'s API maps use (`vb`, `addItem`, `removeItem`, `getAxis`, `showAxis`, `invertY`).
"""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import QGraphicsGridLayout, QGraphicsItem

AXIS_CELLS = {"left": (0, 0), "bottom": (1, 1)}  # (row, column); the view box is at (0, 1)


class MapPlot(pg.GraphicsWidget):
    """`axes`: {"left": AxisItem, "bottom": AxisItem} (made here when not given), linked to `vb`."""

    def __init__(self, axes: dict[str, pg.AxisItem] | None = None, parent=None):
        super().__init__(parent)
        self.grid = QGraphicsGridLayout()
        self.grid.setContentsMargins(1, 1, 1, 1)  # (as a PlotItem's)
        self.grid.setSpacing(0)
        self.setLayout(self.grid)
        self.vb = pg.ViewBox(parent=self, enableMenu=False)
        self.grid.addItem(self.vb, 0, 1)
        self.grid.setRowStretchFactor(0, 100)
        self.grid.setColumnStretchFactor(1, 100)
        self.axes: dict[str, pg.AxisItem] = {}
        for name, (row, col) in AXIS_CELLS.items():
            axis = (axes or {}).get(name) or pg.AxisItem(name, parent=self)
            axis.linkToView(self.vb)
            axis.setZValue(0.5)  # over the image, under the items drawn over the axes (z ≥ 1)
            axis.setFlag(QGraphicsItem.GraphicsItemFlag.ItemNegativeZStacksBehindParent)
            self.grid.addItem(axis, row, col)
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


__all__ = ["MapPlot"]
