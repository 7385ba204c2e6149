"""Every column label a map draws lies inside what the screen shows of the map: its canvas and, in
the all-heads grid, the grid's scroll area (labels left out are counted by the stride)."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtCore import QPoint, QRectF  # noqa: E402

from explorer import style  # noqa: E402
from explorer.drawing.heatmap import Heatmap  # noqa: E402
from explorer.drawing.heatmap_grid import HeatmapGrid  # noqa: E402

SENTENCE = ["the", "cat", "sat", "on", "the", "mat"]


@pytest.fixture(params=[1.0, 1.5], ids=["normal", "presenting"])
def scale(request):
    style.set_scale(request.param)
    yield request.param
    style.set_scale(1.0)


def cut_labels(m: Heatmap, clip=None) -> list[str]:
    """The column labels `m` painted last that reach outside its canvas' viewport (or, `clip`: that
    widget's rect, across)."""
    axis, view = m.cols_axis, m.canvas.viewport()
    assert axis.painted and len(axis.painted) == axis.drawn  # what is checked is what was counted
    cut = []
    for text, box in axis.painted:
        shown = m.canvas.viewportTransform().mapRect(axis.mapRectToScene(box))
        inside = QRectF(view.rect()).contains(shown)
        if clip is not None:
            left = view.mapTo(clip, QPoint(0, 0)).x()
            inside = inside and left + shown.left() >= 0 and left + shown.right() <= clip.width()
        if not inside:
            cut.append(text)
    return cut


def painted(qtbot, widget, size) -> None:
    widget.resize(*size)
    widget.show()
    qtbot.waitExposed(widget)
    qtbot.wait(5)
    widget.grab()  # (a paint: the axes draw their labels)


@pytest.mark.parametrize("size", [(920, 560), (1200, 500), (640, 480)])
def test_the_grid_draws_every_maps_last_column_label_whole(qtbot, scale, size):
    """Maps of a sentence, framed as the attention panel frames its heads (one selected)."""
    grid = HeatmapGrid()
    qtbot.addWidget(grid)
    sections = [(f"layer {layer}", [f"L{layer} H{h}" for h in range(1, 5)]) for layer in (1, 2)]
    grid.set_sections(sections)
    grid.make_all_maps()
    maps = [m for section in grid.set_sections(sections) for m in section]
    for i, m in enumerate(maps):
        m.set_data(np.random.default_rng(i).random((6, 6)), SENTENCE, SENTENCE)
        m.mark(i == 0)
    painted(qtbot, grid, size)
    view = grid.scroll_area.viewport()
    seen = [m for m in maps if view.rect().contains(m.geometry().translated(m.parentWidget().mapTo(view, QPoint(0, 0))))]
    assert seen
    assert {m.title.text(): cut_labels(m, grid.scroll_area.viewport()) for m in seen} == {m.title.text(): [] for m in seen}


@pytest.mark.parametrize("square", [True, False])
@pytest.mark.parametrize("end", ["first", "last"])
def test_an_end_label_wider_than_its_column_is_drawn_whole_at_any_width(qtbot, scale, square, end):
    """Labels upright side by side may be wider than their own column (a narrow neighbour leaves them
    room); the map leaves the end ones room too: at the first column, beside narrower row labels."""
    heatmap = Heatmap("map", square=square)
    qtbot.addWidget(heatmap)
    tokens = ["i", "j", "l", "i", "j"]
    tokens = ["WWWWWWWWW", *tokens] if end == "first" else [*tokens, "WWWWWWWWW"]
    heatmap.set_data(np.random.default_rng(0).random((6, 6)), list("ijlijl"), tokens)
    long = max(heatmap.cols_axis.widths())
    upright = 0
    for width in range(int(3 * long), int(7 * long), max(1, int(long / 4))):  # across upright and turned
        painted(qtbot, heatmap, (width, 3 * width))
        assert cut_labels(heatmap) == [], width
        upright += not heatmap.cols_axis.turned and heatmap.cols_axis.drawn == 6
    assert upright  # the case: some widths draw every label upright


@pytest.mark.parametrize("centre", [3.55, 3.45, 5.52])
def test_a_zoomed_map_draws_no_label_past_its_edges_and_counts_those_it_leaves_out(qtbot, centre):
    """Zoomed in, a cell at the view's edge may have no room for its label: left out, and counted."""
    heatmap = Heatmap("map")
    qtbot.addWidget(heatmap)
    tokens = [f"word{i}" for i in range(8)]
    heatmap.set_data(np.random.default_rng(0).random((8, 8)), tokens, tokens)
    painted(qtbot, heatmap, (600, 600))
    heatmap.zoom(2.0, (centre, 4.0))
    qtbot.wait(5)
    heatmap.grab()
    assert cut_labels(heatmap) == []
    drawn, in_view = heatmap.label_counts()[1]
    assert drawn == len(heatmap.cols_axis.painted) and (drawn == in_view or heatmap.count_text())
