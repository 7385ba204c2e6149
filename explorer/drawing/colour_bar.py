"""`ColourBar`: a fixed colour scale beside maps, drawn as pyqtgraph's non-interactive `ColorBarItem`
(the gradient framed by three bare axes, the values on the fourth) on a `MapPlot`, without the
`PlotItem` and colour-map menus a `ColorBarItem` builds (most of its cost)."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QFontMetricsF, QImage, QPixmap
from PySide6.QtWidgets import QGraphicsPixmapItem

from explorer.drawing.label_axis import label_font
from explorer.drawing.map_plot import AXIS_CELLS, MapPlot

STEPS = 256  # colours in the gradient (the bar's view spans 0..STEPS upwards)


class ColourBar(MapPlot):
    """A vertical bar of `colorMap` for `values` (low, high); `axis` is the labelled (right) axis.
    `levels()`, `setLevels`, `setColorMap` and `getAxis` as `ColorBarItem` has them."""

    def __init__(self, values: tuple[float, float] = (0.0, 1.0), colorMap: pg.ColorMap | None = None,  # noqa: N803
                 width: float = 25, parent=None):
        super().__init__(sides=tuple(AXIS_CELLS), parent=parent)
        self.vb.setMouseEnabled(x=False, y=False)
        self.vb.disableAutoRange()
        self.vb.setRange(xRange=(0, 1), yRange=(0, STEPS), padding=0)
        self.grid.setColumnFixedWidth(1, width)
        for name in ("top", "left", "bottom"):  # a frame only
            self.axes[name].setTicks([])
            self.axes[name].setStyle(showValues=False)
        self.axis = self.axes["right"]
        self.axis.unlinkFromView()
        self.axis.setWidth(45)
        self.bar = QGraphicsPixmapItem()
        self.bar.setShapeMode(QGraphicsPixmapItem.ShapeMode.BoundingRectShape)
        self.vb.addItem(self.bar)
        self.values = (float(values[0]), float(values[1]))
        self.axis.setRange(*self.values)
        self.cmap: pg.ColorMap | None = None
        if colorMap is not None:
            self.setColorMap(colorMap)

    def colorMap(self) -> pg.ColorMap | None:  # noqa: N802 - ColorBarItem's name
        return self.cmap

    def setColorMap(self, cmap: pg.ColorMap) -> None:  # noqa: N802 - ColorBarItem's name
        """The gradient: one pixel wide, STEPS high, stretched over the bar by the view."""
        self.cmap = cmap
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


def colour_bar_canvas(cmap: pg.ColorMap, levels: tuple[float, float], name: str | bool = ""):
    """(canvas, bar): a colour bar beside maps, its ticks (and its `name`, a string, along it) at the label font."""
    canvas = pg.GraphicsLayoutWidget()
    bar = ColourBar(values=levels, colorMap=cmap, width=14)
    bar.axis.setTickFont(label_font())
    bar.axis.enableAutoSIPrefix(False)  # the values themselves: "0.9", never "900" and a hidden "×0.001"
    metrics = QFontMetricsF(label_font())
    room = metrics.horizontalAdvance("−0.00") + 20
    if isinstance(name, str) and name:
        bar.axis.setLabel(name, **{"font-size": f"{label_font().pointSizeF():.1f}pt"})
        room += metrics.height() + 6
    bar.axis.setWidth(int(room))
    canvas.addItem(bar)
    canvas.setFixedWidth(int(room + 40))  # the axis, the bar (14) and the layout's margins
    return canvas, bar
