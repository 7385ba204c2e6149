"""The activation patching panel: prefilled inputs of the same length, maps that are the
result's arrays (last layer on top), a click that shows that cell's patched output, the DLA
bars, and inputs of unequal length refused in words."""
import numpy as np
import pytest
import torch
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QPalette
from PySide6.QtTest import QTest

from explorer import style
from explorer.panels.patching.panel import PatchingPanel
from explorer.runner import Runner
from explorer.state import SessionState
from model.interpret.cell_views import parse_cell
from model.io.checkpoints import bundled_checkpoints, load_checkpoint


@pytest.fixture(scope="module")
def gpt():
    torch.set_num_threads(1)
    return load_checkpoint(bundled_checkpoints()["gpt-facts"])


def _panel(qtbot, bundle, text):
    state = SessionState()
    panel = PatchingPanel(state)
    runner = Runner(state, synchronous=True)
    qtbot.addWidget(panel)
    panel.resize(1200, 650)
    panel.show()
    qtbot.waitExposed(panel)
    runner.set_bundle(bundle, then_run=text)
    runner.wait()
    assert panel.wait_until_drawn()
    return state, panel


def test_the_inputs_are_prefilled_and_the_maps_are_the_results(qtbot, gpt):
    state, panel = _panel(qtbot, gpt, "the duck says")
    assert panel.clean_edit.text() == "the duck says"
    corrupted = panel.corrupted_edit.text()
    assert corrupted != "the duck says" and len(corrupted.split()) == 3
    result = panel.shown.result
    maps = panel.stack_maps()
    assert [m.site for m in maps] == ["resid", "attn", "mlp", "head"]
    for heatmap, m in zip(panel.maps, maps):
        assert heatmap.isVisible()
        assert np.allclose(heatmap.values, m.restored[::-1])  # the last layer on top
        assert heatmap.row_labels[0] == f"Layer {len(m.rows)}"
    assert not any(h.isVisible() for h in panel.maps[len(maps):])
    assert panel.answer_box.lineEdit().placeholderText() == result.answer
    assert panel.bars.drawn_labels()[0] == panel.shown.dla.labels[int(np.argmax(abs(panel.shown.dla.values)))]


def test_clicking_a_cell_shows_that_cells_patched_output(qtbot, gpt):
    state, panel = _panel(qtbot, gpt, "the duck says")
    panel.corrupted_edit.setText("the cow says")
    panel.run()
    assert panel.wait_until_drawn()
    mlp = panel.stack_maps()[2]
    heatmap = panel.maps[2]
    layer, position = 0, 2  # the bottom row (layer 1), the changed word
    scene = heatmap.plot.vb.mapViewToScene(QPointF(position + 0.5, len(mlp.rows) - 0.5))
    QTest.mouseClick(heatmap.canvas.viewport(), Qt.LeftButton, Qt.NoModifier, heatmap.canvas.mapFromScene(scene))
    assert parse_cell(state.session.view("patching"), 3) == (mlp.key, layer, position)
    assert heatmap.selected == (len(mlp.rows) - 1, position)
    text = panel.detail.text()
    assert f"layer {layer + 1}, position {position}" in text
    assert f"restores <b>{mlp.restored[layer, position]:.2f}</b>" in text
    for piece in mlp.top_pieces[layer][position]:
        assert f"<b>{piece}</b>" in text
    assert f"{mlp.top_probs[layer, position, 0]:.2f}" in text


def test_inputs_of_unequal_length_are_refused_in_words(qtbot, gpt):
    state, panel = _panel(qtbot, gpt, "the duck says")
    panel.corrupted_edit.setText("the cow")
    panel.run()
    assert panel.wait_until_drawn()
    assert "same number of tokens" in panel.status.text()
    assert panel.shown is None and not any(h.isVisible() for h in panel.maps)


def test_a_new_text_refills_the_inputs_and_redraws(qtbot, gpt):
    state, panel = _panel(qtbot, gpt, "the duck says")
    runner = Runner(state, synchronous=True)
    runner.set_bundle(gpt, then_run="the frog lives in the")
    runner.wait()
    assert panel.wait_until_drawn()
    assert panel.clean_edit.text() == "the frog lives in the"
    assert panel.stack_maps()[0].columns == ["<bos>", "the", "frog", "lives", "in", "the"]
    assert panel.maps[0].col_labels == panel.stack_maps()[0].columns


def test_narrow_puts_the_maps_and_the_bars_in_tabs_and_back(qtbot, gpt):
    from explorer.screen import ScreenClass
    state, panel = _panel(qtbot, gpt, "the duck says")
    panel.apply_screen_class(ScreenClass.NARROW)
    assert panel.body.tabBar().isVisible() and panel.body.count() == 2
    assert panel.maps[0].isVisible() and not panel.bars.isVisible()  # the maps' tab in front
    assert panel.detail.isVisible()  # the clicked cell's output stays with the maps
    panel.body.setCurrentIndex(1)
    assert panel.bars.isVisible() and not panel.maps[0].isVisible()
    panel.apply_screen_class(ScreenClass.PROJECTOR)
    assert not panel.body.tabBar().isVisible() and panel.body.count() == 1
    assert all(w.isVisible() for w in (panel.maps[0], panel.detail, panel.bars))
    qtbot.waitUntil(lambda: panel.maps[0].geometry().width() > 0)
    right_of_map = panel.maps[0].mapTo(panel, panel.maps[0].rect().topRight()).x()
    assert right_of_map < panel.bars.mapTo(panel, panel.bars.rect().topLeft()).x()  # side by side again


def test_a_dock_too_narrow_for_maps_beside_bars_gets_the_tabs_whatever_the_window_class(qtbot, gpt):
    """Docked beside the architecture diagram in a window of the projector class, the panel is
    offered less room than its side-by-side layout needs: the maps take the dock's whole width
    in a tab (every title and token label drawn), and a wide dock puts them side by side again."""
    from PySide6.QtWidgets import QScrollArea

    from explorer.panels.patching.panel import SIDE_BY_SIDE_WIDTH
    from explorer.screen import ScreenClass
    state, panel = _panel(qtbot, gpt, "the duck says")
    dock = QScrollArea()  # as a panel's dock holds it
    dock.setWidgetResizable(True)
    dock.setWidget(panel)
    qtbot.addWidget(dock)
    panel.apply_screen_class(ScreenClass.PROJECTOR)
    dock.resize(SIDE_BY_SIDE_WIDTH * 3 // 4, 650)
    dock.show()
    qtbot.waitUntil(lambda: panel.body.tabBar().isVisible(), timeout=3000)
    assert panel.body.count() == 2 and panel.maps[0].isVisible() and not panel.bars.isVisible()
    shown = [m for m in panel.maps if m.isVisible()]
    # every token label drawn, once each map has laid out (a loaded machine may take a few turns)
    qtbot.waitUntil(lambda: all(0 < m.cols_axis.drawn == m.cols_axis.in_view for m in shown), timeout=5000)
    dock.resize(SIDE_BY_SIDE_WIDTH + 200, 650)
    qtbot.waitUntil(lambda: not panel.body.tabBar().isVisible(), timeout=3000)
    assert panel.maps[0].isVisible() and panel.bars.isVisible()
    dock.takeWidget()  # (the panel is qtbot's to close)


def test_the_maps_share_one_scale_symmetric_about_zero_and_the_default_tokens_read_as_text(qtbot, gpt):
    """Every map's colours span −1 … 1 around a zero at the diverging map's middle (1 = all
    restored), whatever one map's largest value; the default answer and wrong tokens are drawn in
    the text colour, not a faint hint's."""
    _state, panel = _panel(qtbot, gpt, "the duck says")
    shown = [h for h in panel.maps if h.isVisible()]
    assert shown and all(h.levels == (-1.0, 1.0) for h in shown)
    for box in (panel.answer_box, panel.wrong_box):
        edit = box.lineEdit()
        assert edit.text() == "" and edit.placeholderText()
        placeholder = edit.palette().color(QPalette.ColorRole.PlaceholderText)
        assert placeholder == style.colour("text") != style.colour("muted")


def test_zero_is_drawn_near_the_canvas_in_either_theme_and_the_summary_counts_the_cells_shown(qtbot, gpt):
    """On a dark canvas the maps' zero is dark (a white zero made every map pale), on a light one
    light; the −1 … 1 scale stays; the summary counts the cells of the maps drawn."""
    from explorer import theme

    _state, panel = _panel(qtbot, gpt, "the duck says")
    try:
        for name in ("dark", "light"):
            theme.set_current(name)
            canvas = style.colour("canvas").lightnessF()
            for heatmap in panel.maps:
                zero, end = (heatmap.cmap.map(x, mode="qcolor").lightnessF() for x in (0.5, 1.0))
                assert abs(zero - canvas) < abs(end - canvas) and heatmap.levels == (-1.0, 1.0)
    finally:
        theme.set_current("light")
    cells = sum(len(m.rows) * len(m.columns) for m in panel.stack_maps())
    assert f"one patched run a cell ({cells})" in panel.status.text()


def test_a_flat_map_says_so_under_it_and_a_map_with_an_effect_does_not(qtbot, gpt):
    """A map whose every cell restores less than 0.01 reads as one colour: its caption says it is
    flat; a map with a larger cell has no such caption (checked against the result's own numbers)."""
    _state, panel = _panel(qtbot, gpt, "the duck says")
    for heatmap, m in zip(panel.maps, panel.stack_maps()):
        flat = bool(np.abs(m.restored).max() < 0.01)
        caption = heatmap.cols_axis.label.toPlainText() if heatmap.cols_axis.label.isVisible() else ""  # as drawn
        assert ("all |Δ| < 0.01" in caption) == flat, (m.title, caption)
