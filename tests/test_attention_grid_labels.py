"""The all-heads grid's token labels sit against its square-celled mosaic, not at the far edge of a
plot wider than the mosaic, and where they sit depends only on the window and the frame: the same
after any history of clicks (a scene must draw the same whatever was clicked before).

Measured in screen pixels from item rectangles: the mosaic's edges mapped from data to scene
coordinates by the view box, against the token axes' scene rectangles."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import QPointF  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from explorer.panels.attention.panel import AttentionPanel  # noqa: E402
from explorer.state import SessionState  # noqa: E402
from support import small_bundle  # noqa: E402

MOST_GAP = 8.0  # screen px between the mosaic's edge and its token labels (half a gap's margin + the axis's)


def settle(qtbot) -> None:
    for _ in range(4):
        QApplication.processEvents()
        qtbot.wait(5)


def label_gaps(pane) -> dict[str, float]:
    """Screen px from the mosaic's right edge to the query labels and from its bottom edge to the
    key labels; also the mosaic's on-screen rectangle, to compare two histories."""
    rows, cols = pane.layout.shape
    vb = pane.plot.vb
    top_left, bottom_right = vb.mapViewToScene(QPointF(0, 0)), vb.mapViewToScene(QPointF(cols, rows))
    return {"right": pane.query_axis.sceneBoundingRect().left() - bottom_right.x(),
            "below": pane.key_axis.sceneBoundingRect().top() - bottom_right.y(),
            "x0": top_left.x(), "y0": top_left.y(), "x1": bottom_right.x(), "y1": bottom_right.y()}


@pytest.fixture(scope="module")
def wide(qapp):
    """A panel much wider than its 2-layer mosaic is long: the aspect-locked plot has room to spare."""
    state = SessionState()
    panel = AttentionPanel(state)
    panel.resize(1400, 520)
    panel.show()
    bundle = small_bundle()
    state.set_bundle(bundle)
    state.set_result(bundle.run("abcdefg", target="gfedcba"))
    panel.set_view("grid")
    yield state, panel
    panel.close()


def test_labels_sit_against_the_mosaic_and_cells_stay_square(wide, qtbot):
    state, panel = wide
    settle(qtbot)
    pane = panel.grid.pane("encoder")
    gaps = label_gaps(pane)
    assert 0 <= gaps["right"] <= MOST_GAP, gaps
    assert 0 <= gaps["below"] <= MOST_GAP, gaps
    rows, cols = pane.layout.shape
    cell_w, cell_h = (gaps["x1"] - gaps["x0"]) / cols, (gaps["y1"] - gaps["y0"]) / rows
    assert cell_w == pytest.approx(cell_h, rel=0.01)  # square cells: rows and columns are tokens
    assert pane.plot.vb.width() >= 160 and pane.plot.vb.height() >= 120


def test_the_same_picture_after_another_history_of_clicks(wide, qtbot):
    state, panel = wide
    settle(qtbot)
    before = label_gaps(panel.grid.pane("encoder"))
    # another history: other heads and kinds selected, every kind shown, the window resized, back
    state.select_attention("encoder", 1, 3)
    state.select_attention("cross", 0, 2)
    panel.all_kinds.setChecked(True)
    settle(qtbot)
    panel.resize(900, 700)
    settle(qtbot)
    panel.all_kinds.setChecked(False)
    state.select_attention("encoder", 0, 0)
    panel.resize(1400, 520)
    settle(qtbot)
    after = label_gaps(panel.grid.pane("encoder"))
    for key in before:
        assert after[key] == pytest.approx(before[key], abs=0.6), (key, before, after)


# -- a 6-layer model in a projector's height: pages of layers, never squeezed rows --------------
def test_layer_pages_partition_the_layers():
    from explorer.panels.attention.layer_pages import MIN_ROW_PX, layer_page, layers_fitting
    room = 150 + 3 * MIN_ROW_PX + 10  # three rows fit
    assert layers_fitting(room) == 3
    assert [layer_page(6, s, room) for s in range(6)] == [(0, 3)] * 3 + [(3, 3)] * 3
    assert layer_page(7, 6, room) == (4, 3)  # the last page ends at the last layer
    assert layer_page(2, 1, room) == (0, 2)  # everything fits: no pages
    from explorer.panels.attention.layer_pages import label_row_px, page_note
    row = label_row_px(16, 11.4)  # 16 query tokens at the legible minimum
    assert row == pytest.approx(17 * 11.4)
    assert layer_page(2, 1, room, row) == (1, 1)  # each layer alone: room for every label
    assert layer_page(2, 0, 150 + 2 * row + 1, row) == (0, 2)  # tall enough for both rows
    assert page_note(1, 1, 2) == "layer 2 of 2 (Layer: pages)" and page_note(0, 3, 6).startswith("layers 1–3 of 6")


@pytest.fixture(scope="module")
def deep(qapp):
    """A 6-layer encoder-decoder in the all-heads grid at about a 1280×720 projector's grid size."""
    from model.io.checkpoints import random_bundle
    state = SessionState()
    panel = AttentionPanel(state)
    panel.resize(1270, 470)
    panel.show()
    bundle = random_bundle("reverse", n_encoder_layers=6, n_decoder_layers=6)
    state.set_bundle(bundle)
    state.set_result(bundle.run("abcdefgh", target="hgfedcba"))
    panel.set_view("grid")
    yield state, panel
    panel.close()


def map_rows(pane) -> tuple[list[str], float]:
    """The layer numbers on the left axis and one map's height on screen (px)."""
    lay, vb = pane.layout, pane.plot.vb
    height = vb.mapViewToScene(QPointF(0, lay.t_q)).y() - vb.mapViewToScene(QPointF(0, 0)).y()
    return [label for _pos, label in pane.plot.getAxis("left")._tickLevels[0]], height


def test_deep_model_pages_layers_instead_of_squeezing_rows(deep, qtbot):
    state, panel = deep
    state.select_attention("encoder", 0, 0)
    settle(qtbot)
    pane = panel.grid.pane("encoder")
    layers, height = map_rows(pane)
    assert 1 <= len(layers) < 6 and layers[0] == "1"
    assert height >= 60, f"a map is {height:.0f} px high"  # 6 rows in this room would be ~35 px
    assert "of 6" in pane.plot.getAxis("left").labelText
    cells = (pane.plot.vb.mapViewToScene(QPointF(1, 1)) - pane.plot.vb.mapViewToScene(QPointF(0, 0)))
    assert cells.x() == pytest.approx(cells.y(), rel=0.01)  # still square cells
    first_geometry = label_gaps(pane)
    state.select_attention("encoder", 4, 2)  # layer 5: its page is drawn, the box on it
    settle(qtbot)
    assert "5" in map_rows(pane)[0] and pane.box.isVisible()
    assert pane.locate(pane.box.sceneBoundingRect().center())[:2] == (4, 2)  # absolute layer
    state.select_attention("encoder", 0, 0)
    settle(qtbot)
    assert map_rows(pane)[0] == layers
    after = label_gaps(pane)
    for key in first_geometry:
        assert after[key] == pytest.approx(first_geometry[key], abs=0.6)


def test_head_rows_wraps_only_to_name_every_token():
    """Four 16-token maps in a 700 × 650 canvas: side by side their cells are ~9 px, too small
    for 11-px labels; two rows of two give ~14 px. A wide, low canvas keeps one row; a room too
    small for any arrangement keeps the fewest rows."""
    from explorer.panels.attention.layer_pages import head_rows, mosaic_cell_px

    assert mosaic_cell_px(1, 4, 16, 16, 2, 700, 650) < 11 < mosaic_cell_px(2, 2, 16, 16, 3, 700, 650)
    assert head_rows(4, 16, 16, 700, 650, 11, 11, 3) == 2
    assert head_rows(4, 16, 16, 1600, 300, 11, 11, 3) == 1  # a row of four already names them
    assert head_rows(12, 16, 16, 700, 900, 11, 11, 3) in (3, 4)  # 12 heads: a divisor of 12


def show_dates_grid(qtbot, window):
    """The window's attention panel on its all-heads grid, for `dates` on a 16-token date."""
    from explorer.runner import load_bundle

    window.runner.set_bundle(load_bundle("dates"), then_run="22 November 2026")
    qtbot.waitUntil(lambda: window.state.frame is not None and window.state.frame.source == "22 November 2026",
                    timeout=20_000)
    window.focus_panel("attention")
    panel = window.panels["attention"]
    panel.set_view("grid")
    return panel


def test_a_narrow_grid_wraps_one_layers_heads_and_names_every_token(qtbot, tmp_path):
    """A 1700×1080 window's attention dock: four 16-token maps side by side would draw 8 of 16
    labels each ("showing 32 of 64"). One layer a page, its heads in two rows, each map named
    ("H3"), names every token; a click on the lower-left map selects head 3. (At 1920×1080,
    since the grid's margins are measured from its fonts, both layers' rows name every token.)"""
    from layout_checks import drawn_labels
    from support import make_main_window

    window = make_main_window(qtbot, tmp_path, size=(1700, 1080))  # (1920 px: both layers, every label)
    panel = show_dates_grid(qtbot, window)
    for _ in range(6):
        QApplication.processEvents()
        qtbot.wait(20)
    pane = panel.grid.pane("encoder")
    tokens = panel.data.labels["encoder"][0]
    assert len(tokens) == 16 and (pane.count, pane.wrap) == (1, 2), (panel.grid.size(), pane.count, pane.wrap)
    assert [n.textItem.toPlainText() for n in pane.head_names] == ["H1", "H2", "H3", "H4"]
    for i, name in enumerate(pane.head_names):  # each name centred over its map, as unwrapped titles are
        r, c = pane.layout.origin(*divmod(i, pane.layout.heads))
        middle = pane.plot.vb.mapViewToScene(QPointF(c + pane.layout.t_k / 2, r)).x()
        drawn = name.mapRectToScene(name.boundingRect())
        assert abs(drawn.center().x() - middle) < 2, (name.textItem.toPlainText(), drawn, middle)
        assert drawn.bottom() <= pane.plot.vb.mapViewToScene(QPointF(c, r)).y() + 1  # above the map
    frame = pane.box.mapRectToScene(pane.box.rect())  # H1 selected: its frame clear of "H3" under it
    below = pane.head_names[2].mapRectToScene(pane.head_names[2].boundingRect())
    assert pane.box.isVisible() and frame.bottom() + 2 <= below.top(), (frame, below)
    assert [t for _r, t in drawn_labels(pane.query_axis)] == tokens * 2  # beside each row of maps
    assert [t for _r, t in drawn_labels(pane.key_axis)] == tokens * 2  # under each column
    r, c = pane.layout.origin(1, 0)
    scene = pane.plot.vb.mapViewToScene(QPointF(c + 3.5, r + 3.5))
    assert pane.locate(scene)[:2] == (0, 2)  # layer 1, head 3
    window.state.select_attention("encoder", 0, 2)
    QApplication.processEvents()
    assert "L1 H3" in pane.plot.titleLabel.text and pane.box.isVisible()
    box = pane.box.rect()
    assert box.left() < c < box.right() and box.top() < r < box.bottom()
    from explorer import presentation, theme
    try:  # the names follow the theme (a TextItem keeps the colour it was made with)
        presentation.apply_theme(QApplication.instance(), "dark")
        assert pane.head_names[0].color.name() == theme.DARK.text
    finally:
        presentation.apply_theme(QApplication.instance(), "light")
    assert pane.head_names[0].color.name() == theme.LIGHT.text


def test_a_page_of_heads_holds_the_selected_one():
    from explorer.panels.attention.layer_pages import head_note, head_page, lone_note, mosaic_cell_px
    # 24-token maps: room for three side by side at 11.2 px a cell, not four
    need, room_h = 11.2, 340.0
    room_w = 930.0  # 3 maps, 2 gaps of 3 cells and the frame: ~82 cells
    assert mosaic_cell_px(1, 4, 24, 24, 3, room_w, room_h) < need <= mosaic_cell_px(1, 3, 24, 24, 3, room_w, room_h)
    assert [head_page(4, h, 24, 24, room_w, room_h, room_h, need) for h in range(4)] == \
        [(0, 3, 1)] * 3 + [(1, 3, 1)]  # the last page ends at the last head
    assert head_page(4, 0, 24, 24, 1240, room_h, room_h, need) == (0, 4, 1)  # all four fit
    # room for one map a page: the selected head alone, framed with no selection box (`lone_margin`)
    assert head_page(4, 2, 24, 24, 24 * need * 1.5, room_h, room_h, need) == (2, 1, 1)
    assert head_page(4, 2, 32, 32, 900, 33 * need, 33 * need, need) == (2, 1, 1)  # 32 tokens fit alone
    assert head_page(4, 2, 32, 32, 900, 30 * need, 30 * need, need) is None  # not even one: thinned, counted
    assert lone_note(0, 1, 2, 2, 4) == "layer 1 of 2 · head 3 of 4 (Layer, Head: pages)"
    assert lone_note(0, 1, 1, 0, 4) == "head 1 of 4 (Head: pages)"
    # MiniLM's 12 heads of 16 tokens, room for 3 maps across and 2 rows: pages of 6, wrapped
    assert head_page(12, 7, 16, 16, 700, 470, 470, need) == (6, 6, 2)  # (wrapped: with WRAP_SAFETY of room)
    assert head_note(0, 3, 4) == "heads 1–3 of 4" and head_note(3, 1, 4) == "head 4 of 4"
    assert head_note(0, 0, 4) == head_note(0, 4, 4) == ""


def test_on_a_1024_beamer_the_selection_frame_stays_clear_of_the_next_rows_names(qtbot, tmp_path):
    """Presenting at 1024×768, a 16-token layer wraps its four heads into two rows; the frame of
    the selected H1 stood in the gap under it and touched "H3", the name of the map below."""
    from PySide6.QtGui import QFontMetricsF
    from PySide6.QtWidgets import QApplication
    from explorer import presentation
    from support import make_main_window

    window = make_main_window(qtbot, tmp_path, size=(1024, 768))
    window.lecture.presentation.enter(full_screen=False)
    try:
        panel = show_dates_grid(qtbot, window)
        window.state.select_attention("encoder", 0, 0)
        for _ in range(8):
            QApplication.processEvents()
            qtbot.wait(20)
        pane = panel.grid.pane("encoder")
        assert pane.wrap == 2 and pane.box.isVisible(), (pane.wrap, panel.grid.size())
        frame = pane.box.mapRectToScene(pane.box.rect())
        name = pane.head_names[2]  # "H3": the top of its capitals, in the scene
        assert name.textItem.toPlainText() == "H3"
        metrics = QFontMetricsF(name.textItem.font())
        margin = name.textItem.document().documentMargin()
        below = name.mapRectToScene(name.boundingRect())
        caps_top = below.top() + margin + metrics.ascent() - metrics.capHeight()
        assert frame.bottom() + pane.box.pen().widthF() / 2 + 1 <= caps_top, (frame, below, caps_top)
    finally:
        window.lecture.presentation.leave()
        presentation.apply_theme(QApplication.instance(), "light")
