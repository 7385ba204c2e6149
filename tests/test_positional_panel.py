"""The positional-encoding panel shows the model's own values, and they are the paper's formula."""
from __future__ import annotations

import math
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from explorer.panels.positional.panel import PositionalPanel  # noqa: E402
from explorer.state import SessionState  # noqa: E402
from model.interpret.positions import rotate, rotation, shift_error  # noqa: E402
from model.io.checkpoints import random_bundle  # noqa: E402


def paper_pe(pos: int, dim: int, d_model: int) -> float:
    """Section 3.5, written out independently with math.sin / math.cos."""
    angle = pos / 10000 ** ((dim - dim % 2) / d_model)
    return math.sin(angle) if dim % 2 == 0 else math.cos(angle)


def make_panel(qtbot, **overrides):
    torch.manual_seed(0)
    params = dict(d_model=32, n_heads=4, d_ff=64, n_encoder_layers=1, n_decoder_layers=1, dropout=0.0, max_len=40)
    params.update(overrides)
    bundle = random_bundle("reverse", **params)
    state = SessionState()
    panel = PositionalPanel(state)
    qtbot.addWidget(panel)
    panel.resize(1280, 720)
    state.set_bundle(bundle)
    return state, panel, bundle


def test_the_panel_shows_the_models_buffer_and_it_is_the_formula(qtbot):
    _, panel, bundle = make_panel(qtbot)
    assert panel.source == "model"
    length = panel.len_spin.value()
    np.testing.assert_array_equal(panel.table, bundle.model.positional.table[:length].numpy())
    formula = np.array([[paper_pe(p, i, 32) for i in range(32)] for p in range(length)])
    np.testing.assert_allclose(panel.table, formula, atol=2e-6)


def test_wave_curves_equal_the_formula(qtbot):
    _, panel, _ = make_panel(qtbot)
    panel.waves.select_pairs([0, 3, 9])
    dims = sorted(dim for dim, _ in panel.waves.curves)
    assert dims == [0, 1, 6, 7, 18, 19]
    for dim, curve in panel.waves.curves:
        x, y = curve.getData()
        np.testing.assert_allclose(y, [paper_pe(int(p), dim, 32) for p in x], atol=2e-6)
    for dim, line in panel.waves.lines:  # the smooth line between positions is the same formula
        x, y = line.getData()
        want = [math.sin(p / 10000 ** ((dim - dim % 2) / 32)) if dim % 2 == 0 else math.cos(p / 10000 ** ((dim - 1) / 32))
                for p in x]
        np.testing.assert_allclose(y, want, atol=1e-9)
    lam = 2 * math.pi * 10000 ** (6 / 32)  # pair i=3's wavelength: its value in the legend, its formula in the tooltip
    assert f"λ = {lam:.5g}" in panel.waves.legend.text()
    assert f"10000^(6/32) = {lam:.5g}" in panel.waves.legend.toolTip()


def test_changing_d_model_updates_every_view(qtbot):
    _, panel, _ = make_panel(qtbot)
    panel.set_d_model(128)
    length = panel.len_spin.value()
    assert panel.source == "formula" and "128" in panel.source_label.text()
    formula = np.array([[paper_pe(p, i, 128) for i in range(128)] for p in range(length)])
    np.testing.assert_allclose(panel.table, formula, atol=2e-6)
    np.testing.assert_allclose(panel.heatmap.heatmap.values, formula, atol=2e-6)  # heatmap
    assert panel.waves.pairs_list.count() == 64  # waves: one entry per pair
    for dim, curve in panel.waves.curves:
        x, y = curve.getData()
        np.testing.assert_allclose(y, [paper_pe(int(p), dim, 128) for p in x], atol=2e-6)
    sim = panel.similarity.sim.values  # similarity: PE(p)·PE(p) = d_model/2 on the diagonal
    assert sim.shape == (length, length)
    np.testing.assert_allclose(np.diag(sim), 64.0, rtol=1e-5)
    assert panel.similarity.sim.values.shape == (length, length)
    assert panel.similarity.error is not None and panel.similarity.error < 1e-5
    assert "128 dims" in panel.similarity.result.text()


def test_shift_by_k_is_a_rotation(qtbot):
    _, panel, _ = make_panel(qtbot)
    view = panel.similarity
    view.pos_spin.setValue(4)
    view.k_spin.setValue(7)
    _, rotated = view.curve_rotated.getData()
    np.testing.assert_allclose(rotated, [paper_pe(11, i, 32) for i in range(32)], atol=1e-5)  # M_7·PE(4) = PE(11)
    assert view.error < 1e-5 and f"{view.error:.1e}" in view.result.text()
    # M_k is orthogonal and independent of pos: it maps every row to the row k later
    m = rotation(32, 7)
    np.testing.assert_allclose(m @ m.T, np.eye(32), atol=1e-12)
    np.testing.assert_allclose(rotate(panel.table, 7), panel.table.astype(np.float64) @ m.T, atol=1e-12)
    assert shift_error(panel.table, 7) < 1e-5
    shuffled = panel.table.copy()
    shuffled[20] = shuffled[21]
    assert shift_error(shuffled, 7) > 1e-2  # the check can fail


def test_learned_model_shows_its_learned_table(qtbot):
    _, panel, bundle = make_panel(qtbot, positional="learned")
    assert panel.source == "learned" and "LEARNED" in panel.source_label.text()
    learned = bundle.model.positional.table.numpy()
    length = panel.table.shape[0]
    np.testing.assert_array_equal(panel.table, learned[:length])
    np.testing.assert_array_equal(panel.heatmap.heatmap.values, learned[:length])
    for dim, curve in panel.waves.curves:
        np.testing.assert_array_equal(curve.getData()[1], learned[:length, dim])
    assert not panel.d_spin.isEnabled()  # a learned table has the model's width only
    assert panel.similarity.error is None  # no rotation claim for learned embeddings
    panel.learned_box.setChecked(False)  # the sinusoids for comparison
    assert panel.source == "formula"
    np.testing.assert_allclose(panel.table[5, 2], paper_pe(5, 2, 32), atol=2e-6)


def test_this_input_view_shows_the_recorded_sum(qtbot):
    state, panel, bundle = make_panel(qtbot)
    result = bundle.run("abcde", target="edcba")
    state.set_result(result)
    view = panel.input_view
    assert view.stack_box.count() == 2
    scaled, pe, total = view.checked.arrays
    trace = result.trace
    np.testing.assert_array_equal(scaled, trace["encoder.embedding.scaled"].tensor[0].numpy())
    np.testing.assert_array_equal(pe, trace["encoder.positional"].tensor.numpy())
    np.testing.assert_array_equal(total, trace["encoder.input"].tensor[0].numpy())
    np.testing.assert_allclose(pe, [[paper_pe(p, i, 32) for i in range(32)] for p in range(5)], atol=2e-6)
    assert view.maps[0].rows_axis.tokens == list("abcde")
    view.stack_box.setCurrentIndex(view.stack_box.findData("decoder"))
    np.testing.assert_array_equal(view.checked.arrays[2], trace["decoder.input"].tensor[0].numpy())
    assert view.maps[1].values.shape == (6, 32)  # <bos> e d c b a


def test_odd_d_model_is_corrected_with_a_message(qtbot):
    state, panel, _ = make_panel(qtbot)
    messages = []
    state.message.connect(lambda level, text: messages.append((level, text)))
    panel.set_d_model(33)
    assert panel.d_spin.value() == 34 and panel.table.shape[1] == 34
    assert messages and messages[0][0] == "warning"


@pytest.mark.parametrize("grouped", [False, True])
def test_heatmap_columns_are_labelled_with_the_true_dimension(qtbot, grouped):
    _, panel, _ = make_panel(qtbot)
    panel.heatmap.grouped.setChecked(grouped)
    cols = panel.heatmap.columns
    np.testing.assert_array_equal(panel.heatmap.heatmap.values, panel.table[:, cols])
    assert panel.heatmap.heatmap.cols_axis.tokens == [str(c) for c in cols]
    assert (list(cols[:3]) == [0, 2, 4]) == grouped


@pytest.mark.slow
def test_screenshot_cli_shows_the_positional_panel(tmp_path, qapp):
    from PySide6.QtGui import QImage

    from explorer.app import run_app
    from explorer.theme import current
    PALETTE = current().series

    out = tmp_path / "positional.png"
    assert run_app(["--panel", "positional", "--screenshot", str(out)]) == 0  # (in-process: the CLI's own code path)
    image = QImage(str(out)).convertToFormat(QImage.Format.Format_RGB888)
    assert (image.width(), image.height()) == (1280, 800)
    arr = np.frombuffer(image.constBits(), dtype=np.uint8).reshape(800, image.bytesPerLine())[:, :1280 * 3]
    arr = arr.reshape(800, 1280, 3).astype(int)
    wave = np.array([int(PALETTE[1][i:i + 2], 16) for i in (1, 3, 5)])  # the second pair's colour
    assert (np.abs(arr - wave).max(axis=-1) <= 8).sum() > 300  # the waves are drawn ...
    dark_viridis = np.array([68, 1, 84])
    assert (np.abs(arr - dark_viridis).max(axis=-1) <= 6).sum() < 50  # ... and not the attention maps


def test_the_formula_wraps_between_its_two_halves_and_never_widens_the_plot(qtbot):
    """The formula is a word-wrapped label over the plot: one line where the view is wide, a
    break between sin and cos where it is not; the plot stays inside its canvas either way."""
    from PySide6.QtWidgets import QApplication
    _, panel, _ = make_panel(qtbot)
    panel.show()
    waves, lines = panel.waves, {}
    for width in (700, 1400):
        panel.resize(width, 330)
        for _ in range(5):
            QApplication.processEvents()
        assert waves.compact  # shorter than COMPACT_HEIGHT
        assert waves.canvas.ci.geometry().width() <= waves.canvas.width() + 1
        label = waves.formula
        lines[width] = round(label.heightForWidth(label.width()) / label.fontMetrics().lineSpacing())
    assert "sin" in waves.formula.text() and "cos" in waves.formula.text()
    assert lines[1400] < lines[700]


def test_a_hidden_panel_redraws_its_views_when_shown_not_while_hidden(qtbot):
    from PySide6.QtWidgets import QLabel, QTabWidget
    state, panel, _ = make_panel(qtbot)
    tabs = QTabWidget()  # a shown window where the panel is a tab behind another
    qtbot.addWidget(tabs)
    tabs.addTab(QLabel("another panel"), "front")
    tabs.addTab(panel, "positional")
    tabs.show()
    qtbot.waitExposed(tabs)
    waves = panel.pages.built_pages()["waves"]
    drawn = []
    original = waves.set_table
    waves.set_table = lambda table, *rest: (drawn.append(table.shape), original(table, *rest))
    state.set_bundle(random_bundle("reverse", d_model=64, n_heads=4, d_ff=64, n_encoder_layers=1,
                                   n_decoder_layers=1, dropout=0.0, max_len=40))  # another scene's model
    assert drawn == []
    tabs.setCurrentWidget(panel)
    assert drawn == [panel.table.shape] and panel.table.shape[1] == 64  # shown: the new table, once
    assert waves.pairs_list.count() == 32
    tabs.removeTab(1)
    panel.setParent(None)  # (qtbot closes the panel and the tabs each)


def test_this_inputs_maps_stand_level_so_each_row_reads_across(qtbot):
    """E, + PE and = sum side by side: a token's row at the same height in each map."""
    state, panel, bundle = make_panel(qtbot)
    state.set_result(bundle.run("abcdefgh", target="hgfedcba"))
    panel.show()
    panel.tabs.setCurrentWidget(panel.pages.holder("input_view"))
    view = panel.input_view
    qtbot.waitExposed(panel)
    shown = [m for m in view.maps if m.isVisible()]
    assert len(shown) == 3

    def rows_level() -> bool:
        spans = {(round(m.plot.vb.sceneBoundingRect().top() + m.canvas.mapTo(view, m.canvas.rect().topLeft()).y()),
                  round(m.plot.vb.height())) for m in shown}
        return len(spans) == 1
    qtbot.waitUntil(rows_level, timeout=3000)


def test_the_shift_verdict_runs_under_both_views_leaving_the_plot_its_height(qtbot):
    state, panel, bundle = make_panel(qtbot)
    panel.resize(760, 470)
    panel.show()
    panel.tabs.setCurrentWidget(panel.pages.holder("similarity"))
    view = panel.similarity
    qtbot.waitExposed(panel)
    assert view.result.text().strip()
    assert view.result.width() > view.sim.width() + view.shift_canvas.width()
    assert view.shift_canvas.height() > view.result.height()
