"""A map's parts are cheap to build and draw: `ColourBar` shows its colour map's gradient and
values as pyqtgraph's ColorBarItem would; a `Heatmap` (and its bar) build no PlotItem, whose
option menus were most of a map's build time; a grid makes its maps a few a turn; a map's edge
always reaches one pixel past the map."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF
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


def test_a_grid_makes_its_maps_a_few_a_turn_then_says_so(qtbot):
    from PySide6.QtCore import QTimer

    from explorer.drawing.heatmap_grid import MAPS_PER_TURN, HeatmapGrid
    grid = HeatmapGrid()
    qtbot.addWidget(grid)
    titles = [f"L1 H{h + 1}" for h in range(10)]
    maps, = grid.set_sections([("layer 1", titles)], at_most_new=2)
    assert len(maps) == 2 and len(grid.pool) == 2 and not grid.complete  # this turn: two maps only
    made = []
    grid.mapsMade.connect(lambda: made.append(len(grid.pool)))
    counts: list[int] = []  # the pool's size at each turn of the event loop
    turns = QTimer(interval=0)
    turns.timeout.connect(lambda: counts.append(len(grid.pool)))
    turns.start()
    qtbot.waitUntil(lambda: bool(made), timeout=10000)
    turns.stop()
    assert made == [10] and grid.complete
    steps = [b - a for a, b in zip([2] + counts, counts)]
    assert max(steps) <= MAPS_PER_TURN and len([s for s in steps if s]) >= (10 - 2) // MAPS_PER_TURN
    maps, = grid.set_sections([("layer 1", titles)], at_most_new=2)  # drawn again: every map now
    assert len(maps) == 10 and [m.title.text() for m in maps] == titles

    more = [f"L2 H{h + 1}" for h in range(5)]
    grid.set_sections([("layer 1", titles), ("layer 2", more)], at_most_new=0)
    assert len(grid.pool) == 10
    grid.make_all_maps()  # a figure or a test: the rest at once
    assert len(grid.pool) == 15 and grid.complete and made[-1] == 15


def test_the_maps_edge_reaches_one_device_pixel_past_the_map_at_every_size(qtbot):
    """The edge's pen is drawn a pixel outside the map; its item's bounds cover that pixel at any
    size, so a shrinking map leaves no trail."""
    heatmap = Heatmap()
    qtbot.addWidget(heatmap)
    heatmap.show()
    heatmap.set_data(np.eye(5), list("abcde"), list("vwxyz"))
    for size in ((300, 300), (700, 420), (240, 500)):
        heatmap.resize(*size)
        QApplication.processEvents()
        px, py = heatmap.plot.vb.viewPixelSize()
        drawn = QRectF(0, 0, 5, 5).adjusted(-abs(px), -abs(py), abs(px), abs(py))
        assert heatmap.edges.boundingRect().contains(drawn), size


def test_a_grid_of_one_row_of_maps_uses_the_height_below_it(qtbot):
    """Four maps in a wide, short grid: one row, as wide as the width allows, and taller than wide
    (the room under the row is the maps', not empty)."""
    from explorer.drawing.heatmap_grid import HeatmapGrid
    grid = HeatmapGrid()
    qtbot.addWidget(grid)
    grid.resize(1400, 450)
    grid.show()
    qtbot.waitExposed(grid)
    maps, = grid.set_sections([("layer 1", [f"L1 H{h + 1}" for h in range(4)])])
    qtbot.wait(20)
    assert len({m.geometry().top() for m in maps}) == 1  # one row
    assert all(m.height() > m.width() for m in maps)
    spare = grid.scroll_area.viewport().height() - max(m.geometry().bottom() for m in maps)
    assert 0 <= spare < maps[0].height() / 10
