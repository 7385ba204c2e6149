"""The one heatmap component: labelled with the frame's tokens, an honest count of the labels it
draws, more labels when zoomed in, cell text for the lens, one title per map in a grid."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtCore import QPointF, Qt  # noqa: E402

from explorer.drawing.heatmap import Heatmap  # noqa: E402
from explorer.drawing.heatmap_grid import HeatmapGrid  # noqa: E402

TOKENS = [f"w{i}" for i in range(24)]


def drawn_labels(axis) -> list[str]:
    """The labels the axis drew on its last paint, read back through pyqtgraph's public API."""
    lo, hi = axis.range
    length = axis.geometry().width() if axis.horizontal else axis.geometry().height()
    (_spacing, values), = axis.tickValues(min(lo, hi), max(lo, hi), length) or [(1.0, [])]
    return axis.tickStrings(values, 1.0, 1.0)


def shown(qtbot, widget, size):
    widget.resize(*size)
    widget.show()
    qtbot.waitExposed(widget)
    qtbot.wait(30)


@pytest.fixture
def heatmap(qtbot):
    h = Heatmap("L1 H1")
    qtbot.addWidget(h)
    return h


def test_labels_are_the_frames_tokens_and_a_new_frame_replaces_them(heatmap, qtbot):
    heatmap.set_data(np.random.rand(5, 5), list("abcde"), list("vwxyz"))
    shown(qtbot, heatmap, (600, 600))
    assert drawn_labels(heatmap.rows_axis) == list("abcde")
    assert drawn_labels(heatmap.cols_axis) == list("vwxyz")
    heatmap.set_data(np.random.rand(5, 5), list("ABCDE"), list("VWXYZ"))  # same shape, another frame
    qtbot.wait(30)
    assert drawn_labels(heatmap.rows_axis) == list("ABCDE")
    assert drawn_labels(heatmap.cols_axis) == list("VWXYZ")


def test_a_small_map_draws_fewer_labels_and_counts_exactly_those(heatmap, qtbot):
    heatmap.set_data(np.random.rand(24, 24), TOKENS, TOKENS)
    shown(qtbot, heatmap, (900, 900))
    big = heatmap.label_counts()
    shown(qtbot, heatmap, (260, 260))
    small = heatmap.label_counts()
    assert small[0][0] < big[0][0] and small[0][1] == 24  # fewer row labels, all 24 rows in view
    assert small[0][0] == len(drawn_labels(heatmap.rows_axis))  # k is what was drawn
    assert heatmap.count_text() == f"{min(small[0][0], small[1][0])} of 24 labels"
    qtbot.waitUntil(lambda: heatmap.count.text() != "")
    assert heatmap.count.text().startswith(f"{min(small[0][0], small[1][0])}/24")


def test_zooming_in_draws_more_of_the_labels_in_view(heatmap, qtbot):
    heatmap.set_data(np.random.rand(24, 24), TOKENS, TOKENS)
    shown(qtbot, heatmap, (300, 300))
    drawn, in_view = heatmap.label_counts()[0]
    assert drawn < in_view
    heatmap.zoom(4.0)
    qtbot.wait(50)
    drawn_zoomed, in_view_zoomed = heatmap.label_counts()[0]
    assert in_view_zoomed < in_view and drawn_zoomed / in_view_zoomed > drawn / in_view
    assert set(drawn_labels(heatmap.rows_axis)) <= set(TOKENS[6:18])  # the middle of the map


def test_lens_cells_carry_token_and_probability_in_text_or_tooltip(qtbot):
    lens = Heatmap(square=False)
    qtbot.addWidget(lens)
    probs = np.random.rand(6, 26)
    texts = [[[f"t{r}{c}", f"{probs[r, c]:.2f}"] for c in range(26)] for r in range(6)]
    lens.set_data(probs, [f"Layer {6 - r}" for r in range(6)], TOKENS + ["x", "y"], texts=texts, row_names=True)
    shown(qtbot, lens, (700, 500))
    assert lens.cell_text.drawn  # the view holds as many columns as show their text
    scene = lens.plot.vb.mapViewToScene(QPointF(0.5, 2.5))
    qtbot.mouseMove(lens.canvas.viewport(), lens.canvas.mapFromScene(scene))
    qtbot.wait(20)
    assert "t20" in lens.canvas.toolTip() and f"{probs[2, 0]:.2f}" in lens.canvas.toolTip()
    clicked = []
    lens.cellClicked.connect(lambda r, c: clicked.append((r, c)))
    qtbot.mouseClick(lens.canvas.viewport(), Qt.MouseButton.LeftButton, pos=lens.canvas.mapFromScene(scene))
    assert clicked == [(2, 0)]


def test_every_head_of_a_12_head_grid_has_its_own_title(qtbot):
    grid = HeatmapGrid()
    qtbot.addWidget(grid)
    titles = [f"L1 H{h + 1}" for h in range(12)]
    maps, = grid.set_sections([("Encoder self-attention · layer 1", titles)])
    for m in maps:
        m.set_data(np.random.rand(8, 8), TOKENS[:8], TOKENS[:8])
    shown(qtbot, grid, (1024, 600))
    assert [m.title.text() for m in maps] == titles
    boxes = [m.title.geometry().translated(m.pos()) for m in maps]
    assert not any(a.intersects(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])  # no two run together
    grid.scroll_area.ensureWidgetVisible(maps[-1])  # every map reachable
    qtbot.wait(20)
    assert grid.scroll_area.viewport().rect().intersects(maps[-1].geometry().translated(grid.scroll_area.widget().pos()))


def test_cell_text_is_dark_on_bright_cells_and_light_on_dark_ones_for_any_colour_map(qapp):
    """A diverging map is dark at both ends and bright in the middle (the Spearman table)."""
    from explorer.drawing.plot_style import signed_cmap
    signed = Heatmap(colormap=signed_cmap(), levels=(-1.0, 1.0), numbers=True).cell_text
    assert signed.bright_cells(np.array([[0.99, -0.9, 0.12, -0.18]])).tolist() == [[False, False, True, True]]
    sequential = Heatmap(numbers=True).cell_text
    assert sequential.bright_cells(np.array([[0.9, 0.1]])).tolist() == [[True, False]]


def test_text_cells_plan_their_column_labels_at_the_width_of_the_columns_shown(qtbot):
    """A lens shows only the columns whose text fits; labels that fit those wide columns stay upright
    (an axis planned for all the columns turned them and left its title floating under empty room)."""
    lens = Heatmap(square=False)
    qtbot.addWidget(lens)
    cols = 12
    texts = [[["q", "0.50"] for _ in range(cols)] for _ in range(2)]
    lens.set_data(np.random.rand(2, cols), ["Layer 2", "Layer 1"], [f"w{c:02d}" for c in range(cols)],
                  texts=texts, row_names=True)
    shown(qtbot, lens, (360, 400))
    (x0, x1), _ = lens.plot.vb.viewRange()
    assert x1 - x0 < cols  # the text needs wider columns than an even share: some are a drag away
    shown_cell = lens.plot.vb.width() / (x1 - x0)
    assert max(lens.cols_axis.widths()) < shown_cell  # each label fits a shown column upright …
    assert not lens.cols_axis.turned
    assert lens.cols_axis.height() <= lens.cols_axis.extent(False) + 1  # … so the axis is one line tall


def test_the_title_comes_before_the_label_count(qtbot):
    """A map too narrow for its title and "6/11 labels" keeps its title whole and counts in short ("6/11")."""
    heatmap = Heatmap("Residual stream")
    qtbot.addWidget(heatmap)
    heatmap.set_data(np.random.rand(2, 30), ["Layer 2", "Layer 1"], TOKENS[:30], row_names=True)
    title_width = heatmap.title.fontMetrics().horizontalAdvance("Residual stream")
    shown(qtbot, heatmap, (int(title_width * 1.5), 300))
    qtbot.waitUntil(lambda: heatmap.count.text() != "")
    assert heatmap.title.width() >= title_width and "labels" not in heatmap.count.text()  # whole, not elided
    assert heatmap.title.geometry().right() < heatmap.count.geometry().left()  # side by side, not over each other
    heatmap.resize(int(title_width * 4), 300)
    qtbot.waitUntil(lambda: heatmap.count.text().endswith("labels"))  # room for both: the count in full


def test_label_widths_follow_the_tokens_and_the_font(qapp):
    """The axis measures its labels once, and again for other tokens or another font."""
    from PySide6.QtGui import QFontMetricsF

    from explorer.drawing.label_axis import LabelAxis, label_font

    axis = LabelAxis("bottom")
    axis.set_tokens(["a", "wide label"])
    first = axis.widths()
    assert first == [QFontMetricsF(label_font()).horizontalAdvance(t) for t in ("a", "wide label")]
    assert axis.widths() is first  # measured once
    big = label_font()
    big.setPointSizeF(big.pointSizeF() * 2)
    axis.setTickFont(big)
    assert axis.widths()[1] > 1.5 * first[1]
    axis.set_tokens(["a", "wide label", "third"])
    assert len(axis.widths()) == 3


def test_a_map_without_title_or_count_gives_their_line_to_the_map(qtbot):
    """No title and every label drawn: the header line is gone and the map is that much taller."""
    heatmap = Heatmap()
    qtbot.addWidget(heatmap)
    heatmap.resize(400, 400)
    heatmap.show()
    heatmap.set_data(np.eye(3), ["a", "b", "c"], ["a", "b", "c"])
    qtbot.waitUntil(lambda: heatmap.rows_axis.drawn == 3)
    assert heatmap.count_text() == "" and heatmap.count.isHidden()
    bare = heatmap.canvas.height()
    heatmap.set_title("a title")
    qtbot.waitUntil(lambda: heatmap.canvas.height() < bare)  # the title's line, taken from the map


def test_a_theme_change_recolours_the_axis_names_and_an_empty_maps_note(qtbot):
    """The axis names' colour lives in their HTML and the note's in its item: both follow the theme,
    so a map drawn before a switch never keeps the other theme's text on its canvas."""
    from PySide6.QtGui import QColor
    from PySide6.QtWidgets import QApplication

    from explorer import presentation, theme
    from explorer.drawing.token_heatmap import TokenHeatmap

    app = QApplication.instance()
    presentation.apply_theme(app, "light")
    try:
        named, empty = Heatmap(), TokenHeatmap()
        for widget in (named, empty):
            qtbot.addWidget(widget)
        named.set_data(np.eye(3), list("abc"), list("xyz"))
        named.set_axis_names("query", "key")
        empty.clear_data("drawn when\ntraining ends")
        assert QColor(named.cols_axis.labelStyle["color"]) == QColor(theme.LIGHT.text)
        presentation.apply_theme(app, "dark")
        for axis in (named.rows_axis, named.cols_axis):
            assert QColor(axis.labelStyle["color"]) == QColor(theme.DARK.text)
        assert (named.rows_axis.labelText, named.cols_axis.labelText) == ("query", "key")
        assert empty.note.color == QColor(theme.DARK.muted) and empty.note.isVisible()
    finally:
        presentation.apply_theme(app, "light")
