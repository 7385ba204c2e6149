"""The forward-pass stepper and tensor inspector: walks every step, shows the trace's exact
numbers under the mouse, and never draws a masked entry like a small one."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from PySide6.QtCore import QPoint, Qt  # noqa: E402
from PySide6.QtGui import QColor  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QLineEdit, QMainWindow, QVBoxLayout, QWidget  # noqa: E402

from explorer import style  # noqa: E402
from explorer.drawing.label_axis import LabelAxis  # noqa: E402
from explorer.drawing.map_overlays import masked_runs  # noqa: E402
from explorer.panels.stepper.panel import StepperPanel  # noqa: E402
from explorer.state import SessionState  # noqa: E402
from model.io.checkpoints import random_bundle  # noqa: E402
from model.nn.steps import slice_for_view  # noqa: E402


@pytest.fixture
def setup(qtbot):
    torch.manual_seed(0)
    bundle = random_bundle("reverse", n_encoder_layers=2, n_decoder_layers=2, n_heads=4, d_model=32, d_ff=64,
                           dropout=0.0)
    state = SessionState()
    window = QMainWindow()
    central = QWidget()
    field = QLineEdit("typing here")
    panel = StepperPanel(state)
    box = QVBoxLayout(central)
    box.addWidget(field)
    box.addWidget(panel)
    window.setCentralWidget(central)
    qtbot.addWidget(window)
    window.resize(900, 800)
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    state.set_bundle(bundle)
    state.set_result(bundle.run("abcdefg", target="gfedcba"))
    return state, panel, field, window


def hover(qtbot, panel, row, col):
    """Move the real mouse over a cell's centre and return the readout line."""
    view = panel.view
    qtbot.wait(30)  # pyqtgraph drops mouse moves closer together than its rate limit
    # the cell where it is once painted (a colour bar's axis takes its labels' width on its first paint)
    scene_pos = view.cell_to_scene(row, col)
    widget_pos = view.canvas.mapFromScene(scene_pos)
    QTest.mouseMove(view.canvas.viewport(), QPoint(int(widget_pos.x()), int(widget_pos.y())))
    expected_start = f"{view.row_axis} {row} “{view.row_labels[row]}”,  {view.col_axis} {col} "
    qtbot.waitUntil(lambda: panel.readout.text().startswith(expected_start), timeout=2000)
    return panel.readout.text()


def test_keyboard_walks_the_whole_trace(setup, qtbot):
    state, panel, field, window = setup
    n = state.n_steps()
    panel.setFocus()
    QTest.keyClick(panel, Qt.Key_End)
    assert state.step == n - 1
    QTest.keyClick(panel, Qt.Key_Home)
    assert state.step == 0
    seen = [state.current_step.name]
    for _ in range(n - 1):
        QTest.keyClick(panel, Qt.Key_Right)
        seen.append(state.current_step.name)
    assert seen == state.trace.names()  # every step, in order
    QTest.keyClick(panel, Qt.Key_Left)
    assert state.step == n - 2
    assert panel.transport.counter.text().strip() == f"{n - 1} / {n}"
    assert panel.transport.slider.value() == n - 2


def test_arrow_keys_in_a_text_field_do_not_step(setup):
    state, panel, field, _ = setup
    state.select_step(5)
    field.setFocus()
    QTest.keyClick(field, Qt.Key_Left)
    QTest.keyClick(field, Qt.Key_End)
    QTest.keyClick(field, Qt.Key_Space)
    assert state.step == 5
    assert field.text() == "typing here "  # the space went into the field


def test_buttons_slider_and_jump_list(setup):
    state, panel, _, _ = setup
    panel.transport.next.click()
    panel.transport.next.click()
    assert state.step == 2
    panel.transport.back.click()
    assert state.step == 1
    panel.transport.slider.setValue(40)
    assert state.step == 40
    target = state.trace.index("decoder.layers.1.cross_attn.weights")
    row = next(r for r in range(panel.jump.count()) if panel.jump.itemData(r, Qt.UserRole + 1) == target)
    panel.jump.activated.emit(row)
    assert state.current_step.name == "decoder.layers.1.cross_attn.weights"
    panel.find.setText("final")  # no pre-LN here: nothing matches, a warning, no move
    panel.find.setText("ffn.hidden")
    panel.find.returnPressed.emit()
    assert state.current_step.name == "encoder.layers.0.ffn.hidden" or "ffn.hidden" in state.current_step.name


def test_play_advances_and_stops_at_the_end(setup, qtbot):
    state, panel, _, _ = setup
    n = state.n_steps()
    state.select_step(n - 4)
    panel.speed.setValue(20.0)
    panel.transport.toggle_play()
    assert panel.transport.timer.isActive()
    qtbot.waitUntil(lambda: state.step == n - 1 and not panel.transport.timer.isActive(), timeout=3000)
    assert panel.transport.play.text() == "Play"


def test_hover_readout_is_the_trace_value(setup, qtbot):
    state, panel, _, _ = setup
    state.select_step_named("encoder.layers.1.self_attn.weights")
    panel.head.setValue(3)  # heads counted from 1
    assert state.head == 2
    tensor = state.current_step.tensor.numpy()
    for row, col in [(0, 0), (3, 5), (6, 1)]:
        text = hover(qtbot, panel, row, col)
        value = float(tensor[0, 2, row, col])
        assert panel.view.values[row, col] == value
        assert style.format_value(value) in text
        labels = state.axis_labels("src")
        assert f"“{labels[row]}”" in text and f"“{labels[col]}”" in text
    np.testing.assert_array_equal(panel.view.values, tensor[0, 2])


def test_head_selector_follows_and_updates_the_state(setup):
    state, panel, _, _ = setup
    state.select_step_named("decoder.layers.0.self_attn.q")
    assert panel.head.isVisibleTo(panel)
    state.select_head(3)
    assert panel.head.value() == 4
    np.testing.assert_array_equal(panel.view.values, state.current_step.tensor.numpy()[0, 3])
    state.select_step_named("decoder.layers.0.ffn.hidden")  # no head axis: selector hidden
    assert not panel.head.isVisibleTo(panel)


def test_masked_scores_are_drawn_as_masked_not_small(setup, qtbot):
    state, panel, _, window = setup
    state.select_step_named("decoder.layers.0.self_attn.masked_scores")
    scores = state.current_step.tensor.numpy()[0, state.head]
    neg_inf = np.isneginf(scores)
    assert neg_inf.any() and (~neg_inf).any()
    np.testing.assert_array_equal(~panel.view.allowed, neg_inf)
    r, c = map(int, np.argwhere(neg_inf)[0])
    fr, fc = map(int, np.unravel_index(np.where(neg_inf, np.inf, scores).argmin(), scores.shape))  # smallest finite
    assert panel.view.hatch.contains_cell(r, c) and not panel.view.hatch.contains_cell(fr, fc)
    assert "−∞" in hover(qtbot, panel, r, c)
    # and on screen: the masked cell is grey, the most negative real score is a saturated colour
    image = panel.view.canvas.grab().toImage()

    def colour_at(row, col):
        p = panel.view.canvas.mapFromScene(panel.view.cell_to_scene(row, col))
        return QColor(image.pixel(int(p.x()), int(p.y())))

    masked, smallest = colour_at(r, c), colour_at(fr, fc)
    assert masked.hsvSaturationF() < 0.2, masked.name()
    assert smallest.hsvSaturationF() > 0.3, smallest.name()


def test_mask_step_blocked_versus_allowed(setup):
    state, panel, _, _ = setup
    state.select_step_named("decoder.layers.0.self_attn.mask")
    mask = state.current_step.tensor.numpy()[0]
    assert panel.view.is_bool and panel.view.colormap_name == "mask"
    np.testing.assert_array_equal(~panel.view.allowed, ~mask)
    assert "blocked" in panel.view.readout_at(0, 1) and "may attend" in panel.view.readout_at(1, 0)
    assert "blocked" in panel.stats_label.text()


def test_colormaps_by_meaning(setup):
    state, panel, _, _ = setup
    state.select_step_named("generator.probs")
    assert panel.view.colormap_name == style.SEQUENTIAL
    assert panel.view.col_labels == list(state.bundle.tgt_tokenizer.vocab)  # vocabulary axis labelled
    state.select_step_named("encoder.layers.0.add_norm1.norm")
    assert panel.view.colormap_name == style.DIVERGING
    lo, hi = panel.view.image.levels
    assert lo == pytest.approx(-hi)  # white is exactly zero


def test_info_lines_show_formula_description_shape_and_stats(setup):
    state, panel, _, _ = setup
    state.select_step_named("encoder.positional")
    step = state.current_step
    assert panel.formula_label.text() == step.formula
    assert panel.description_label.text() == step.description
    assert "(7, 32)" in panel.shape_label.text()
    assert panel.view.readout_at(2, 5) == f"src 2 “c”,  d_model 5  =  {style.format_value(float(step.tensor[2, 5]))}"
    t = step.tensor.numpy()
    assert style.format_value(float(t.max())) in panel.stats_label.text()
    assert not panel.stats_label.text().startswith("all")
    assert panel.view.values.shape == (7, 32)  # a 2-D tensor is shown as it is
    state.select_step_named("encoder.layers.0.self_attn.weights")  # one head drawn, stats of all of them: said
    weights = state.current_step.tensor.numpy()
    assert panel.stats_label.text().startswith(f"all {weights.shape[1]} heads: min\u00a0")
    # each value bound to its name: a wrap never leaves "max" at a line's end and "0.9748" on the next
    assert f"max\u00a0{style.format_value(float(weights.max()))}" in panel.stats_label.text()


def test_masked_runs_cover_exactly_the_masked_cells():
    rng = np.random.default_rng(0)
    masked = rng.random((9, 13)) < 0.4
    masked[:, -1] = True  # runs touching either edge
    masked[2, :] = True
    covered = np.zeros_like(masked)
    for r, start, stop in masked_runs(masked):
        assert not covered[r, start:stop].any()
        covered[r, start:stop] = True
    np.testing.assert_array_equal(covered, masked)
    causal = ~np.tri(6, dtype=bool)
    assert len(masked_runs(causal)) == 5  # one rectangle per blocked row


def test_slicing_and_label_density():
    t = np.arange(2 * 3 * 4 * 5).reshape(2, 3, 4, 5)
    m, rows, cols = slice_for_view(t, ("batch", "head", "tgt", "src"), head=1)
    np.testing.assert_array_equal(m, t[0, 1])
    assert (rows, cols) == ("tgt", "src")
    m, rows, cols = slice_for_view(np.arange(6), ("d_model",), head=0)
    assert m.shape == (1, 6) and cols == "d_model"
    tokens = LabelAxis("bottom")  # one wide <bos> beside one-letter tokens: every label still drawn
    tokens.set_tokens(["<pad>", "<bos>", "<eos>", "<unk>"] + list("0123456789"))
    def visible_ticks(axis, lo, hi, size):
        levels = axis.tickValues(lo, hi, size)
        return [int(v) for v in levels[0][1]] if levels else []

    assert visible_ticks(tokens, 0, 14, 14 * 28) == list(range(14))
    axis = LabelAxis("bottom")
    axis.set_tokens([str(i) for i in range(2048)], numeric=True)
    values = axis.tickValues(0, 2048, 400)[0][1]  # d_ff = 2048 columns in 400 pixels
    assert len(values) >= 3 and len(values) * axis.min_cell_px() <= 400  # labels fit side by side
    assert visible_ticks(axis, 0, 8, 400) == list(range(8))  # few columns: every one labelled
    assert len(axis.tickValues(0, 64, 400)[0][1]) < len(axis.tickValues(0, 64, 1600)[0][1])  # zoomed in: more


def test_building_and_rearranging_show_no_window_of_their_own(qtbot):
    """Every part is placed before it is shown: a part shown without a parent would be a window of
    its own and take the focus from the main window."""
    from explorer.screen import ScreenClass
    from support import windows_shown

    with windows_shown() as seen:
        panel = StepperPanel(SessionState())
        qtbot.addWidget(panel)
        for cls in (ScreenClass.WIDE, ScreenClass.NARROW, ScreenClass.WIDE):
            panel.apply_screen_class(cls)
    assert seen == []


def test_an_axis_title_longer_than_its_axis_is_shortened_and_kept_whole_in_its_tooltip(qtbot):
    """A decoder-only model names its token axes at length ("query (tokens: <bos> prompt | …)"):
    where the map is too small for that, the axis says "query" and its tooltip the whole title;
    given the room, the whole title again."""
    from layout_checks import long_axis_titles, settle_until_still

    torch.manual_seed(0)
    bundle = random_bundle("facts", kind="decoder_only", n_encoder_layers=0, n_decoder_layers=1, d_model=32,
                           n_heads=2, d_ff=64)
    state = SessionState()
    panel = StepperPanel(state)
    qtbot.addWidget(panel)
    panel.resize(420, 700)
    panel.show()
    state.set_bundle(bundle)
    state.set_result(bundle.run("the frog lives in the"))
    state.select_step_named("decoder.layers.0.self_attn.weights")
    settle_until_still(qtbot, panel)
    assert long_axis_titles(panel) == []
    whole = panel.view.axis_titles
    assert whole[0].startswith("query (") and whole[1].startswith("key (")
    assert panel.view.axis_names == ("query", "key")
    assert (panel.view.rows_axis.toolTip(), panel.view.cols_axis.toolTip()) == whole
    panel.resize(1600, 1000)
    settle_until_still(qtbot, panel)
    assert long_axis_titles(panel) == [] and panel.view.axis_names == whole
