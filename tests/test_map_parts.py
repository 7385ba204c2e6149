"""A map's light parts: `ColourBar` shows its colour map's gradient and values as pyqtgraph's
ColorBarItem would; a `Heatmap` (and its bar) build no PlotItem, whose option menus were most
of a map's build time."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QApplication

from explorer import style
from explorer.drawing.colour_bar import STEPS, ColourBar
from explorer.drawing.heatmap import Heatmap


def test_the_bar_is_the_colour_maps_gradient_low_at_the_bottom(qtbot):
    cmap = style.colormap(style.SEQUENTIAL)
    bar = ColourBar(values=(-2.0, 3.0), colorMap=cmap, width=14)
    image = bar.bar.pixmap().toImage()
    assert (image.width(), image.height()) == (1, STEPS)
    lut = cmap.getLookupTable(nPts=STEPS, alpha=True)
    for row in (0, STEPS // 2, STEPS - 1):  # image row 0 is drawn at the view's y = 0: the bottom
        colour = image.pixelColor(0, row)
        assert (colour.red(), colour.green(), colour.blue(), colour.alpha()) == tuple(int(v) for v in lut[row])
    assert bar.levels() == (-2.0, 3.0) and tuple(bar.axis.range) == (-2.0, 3.0)
    bar.setLevels((0.0, 1.0))
    assert bar.levels() == (0.0, 1.0) and tuple(bar.axis.range) == (0.0, 1.0)
    other = pg.ColorMap([0.0, 1.0], [(255, 0, 0), (0, 0, 255)])
    bar.setColorMap(other)
    top = bar.bar.pixmap().toImage().pixelColor(0, STEPS - 1)
    assert bar.colorMap() is other and (top.red(), top.blue()) == (0, 255)


def test_a_map_with_a_bar_builds_no_plot_item_and_still_draws_its_labels(qtbot):
    heatmap = Heatmap(colour_bar="weight")
    qtbot.addWidget(heatmap)
    heatmap.resize(420, 360)
    heatmap.show()
    heatmap.set_data(np.eye(4), list("abcd"), list("wxyz"))
    QApplication.processEvents()
    for canvas in (heatmap.canvas, heatmap.bar_canvas):
        assert not any(isinstance(item, pg.PlotItem) for item in canvas.scene().items())
    assert heatmap.plot.getAxis("left").tokens == list("abcd")  # the axes are the map's, linked to its view
    assert heatmap.plot.getAxis("bottom").linkedView() is heatmap.plot.vb
    assert heatmap.bar.axis.labelText == "weight"
