"""The logit lens panel draws `Frame.lens`: layer × position, the output layer's row on top; a click
selects a cell (session state) and shows its top 5; [MASK] columns are marked; a model without an
output layer gets a plain note instead of a grid."""
import numpy as np
import pytest
import torch
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QFontMetricsF
from PySide6.QtTest import QTest

from explorer.drawing.label_axis import label_font
from explorer.panels.lens.panel import LensPanel
from explorer.runner import Runner
from explorer.state import SessionState
from model.interpret.cell_views import parse_cell
from model.io.checkpoints import bundled_checkpoints, load_checkpoint, random_bundle


@pytest.fixture(scope="module")
def bert():
    torch.set_num_threads(1)
    return load_checkpoint(bundled_checkpoints()["bert-facts"])


def _panel(qtbot, bundle, text):
    state = SessionState()
    panel = LensPanel(state)
    runner = Runner(state, synchronous=True)
    qtbot.addWidget(panel)
    panel.resize(1100, 600)
    panel.show()
    qtbot.waitExposed(panel)
    runner.set_bundle(bundle, then_run=text)
    runner.wait()
    return state, panel


def test_the_grid_is_the_frames_lens_with_the_output_layer_on_top(qtbot, bert):
    state, panel = _panel(qtbot, bert, "the cat can [MASK] .")
    lens, grid = state.frame.lens, panel.grid
    n, t = lens.n_layers, len(lens.positions)
    assert grid.values.shape == (n, t) and grid.row_labels[0] == f"Layer {n}"
    assert np.allclose(grid.values[0], lens.top_probs[-1, :, 0].numpy())  # top row = the last layer
    assert np.allclose(grid.values[-1], lens.top_probs[0, :, 0].numpy())
    mask = state.result.mask_predictions[0]
    marked = grid.marks.path().boundingRect()  # the dashed outline drawn over the [MASK] column
    assert (marked.left(), marked.width(), marked.height()) == (mask.position, 1, n)
    assert grid.texts[0][mask.position][0] == mask.pieces[0]  # the last layer's pick = the model's guess
    # by default the last layer at the [MASK] is selected, and its top 5 are listed
    assert grid.selected == (0, mask.position)
    for piece in mask.pieces:
        assert f"<b>{piece}</b>" in panel.detail.text()


def test_clicking_a_cell_selects_it_in_the_session(qtbot, bert):
    state, panel = _panel(qtbot, bert, "the cat can [MASK] .")
    grid, lens = panel.grid, state.frame.lens
    scene = grid.plot.vb.mapViewToScene(QPointF(1.5, grid.values.shape[0] - 0.5))  # the bottom row: layer 1
    QTest.mouseClick(grid.canvas.viewport(), Qt.LeftButton, Qt.NoModifier, grid.canvas.mapFromScene(scene))
    assert parse_cell(state.session.view("lens"), 2) == (0, 1)
    assert grid.selected == (grid.values.shape[0] - 1, 1)
    assert "Layer 1, position 1" in panel.detail.text()  # positions from 0, as pos in PE
    assert f"<b>{lens.top_pieces[0][1][4]}</b>" in panel.detail.text()  # the fifth of that cell too


def test_a_model_without_an_output_layer_says_so(qtbot):
    torch.manual_seed(0)
    bundle = random_bundle("reverse", kind="encoder_only", n_decoder_layers=0, output_layer=False)
    state, panel = _panel(qtbot, bundle, "abc")
    assert state.frame.lens is None and state.frame.embedding is not None
    assert "no output layer" in panel.note.text() and grid_empty(panel)


def grid_empty(panel) -> bool:
    return panel.grid.values.size == 0


def test_a_label_smoothed_model_says_where_its_last_layer_aims(qtbot, bert):
    """The last layer of a model trained with ε = 0.1 gives its best guess about 1 − ε + ε/V, so an
    earlier layer may read surer (1.00 under 0.91): the detail says what the last layer aims at,
    with the reason in its tooltip; an untrained model (ε unknown) gets no such line."""
    _state, panel = _panel(qtbot, bert, "the cat can [MASK] .")
    top = 1 - 0.1 + 0.1 / bert.model.generator.out_features  # V: what the output layer scores
    assert bert.model.generator.out_features == len(bert.src_tokenizer)  # (an encoder-only model: its inputs')
    assert bert.label_smoothing == 0.1
    assert f"at a [MASK] the last layer aims at {top:.2f}" in panel.detail.text()  # (scored only there)
    assert "Section 5.4" in panel.detail.toolTip()
    _state, plain = _panel(qtbot, random_bundle("reverse"), "abc")
    assert "aims at" not in plain.detail.text() and "Section 5.4" not in plain.detail.toolTip()


def test_a_costly_lens_is_computed_off_the_gui_thread_when_the_panel_shows(qtbot, bert, monkeypatch):
    """An LLM's lens is too costly for every frame (`Frame.lens_deferred`): the panel computes it
    in a worker when shown and draws the same grid the frame would have carried."""
    import model.interpret.frame as frame_module
    expected = _panel(qtbot, bert, "the cat can [MASK] .")[0].frame.lens
    monkeypatch.setattr(frame_module, "LENS_EAGER_MACS", 0)
    state, panel = _panel(qtbot, bert, "the cat can [MASK] .")
    assert state.frame.lens_deferred or state.frame.lens is not None
    qtbot.waitUntil(lambda: panel.lens is not None, timeout=10_000)
    assert state.frame.lens is panel.lens and not state.frame.lens_deferred
    torch.testing.assert_close(panel.lens.top_probs, expected.top_probs)
    assert np.allclose(panel.grid.values[0], expected.top_probs[-1, :, 0].numpy())


def test_every_column_is_numbered_and_every_token_in_view_fits_its_cell(qtbot, bert):
    """Columns carry their position and token; the view shows only as many columns as are wide
    enough for the widest predicted token (the rest a drag away), so no cell cuts its token."""
    state, panel = _panel(qtbot, bert, "the cat can [MASK] .")
    panel.resize(520, 400)
    qtbot.waitUntil(lambda: panel.grid.width() < 560)
    grid, lens = panel.grid, state.frame.lens
    for t, (label, piece) in enumerate(zip(grid.col_labels, lens.positions)):
        assert label.split("\u2009")[0] == str(t) and piece.strip() in label
    metrics = QFontMetricsF(label_font())
    widest = max(metrics.horizontalAdvance(line) for row in grid.texts for cell in row for line in cell)
    (x0, x1), _ = grid.plot.vb.viewRange()
    assert grid.plot.vb.width() / (x1 - x0) >= widest
    assert x1 - x0 < len(lens.positions)  # this narrow, not every column fits: the view says so


def test_a_deferred_lens_that_fails_is_said_not_retried_and_keeps_no_model_alive(qtbot, bert, monkeypatch):
    """A lens the worker could not compute is told in words; showing the panel again does not ask
    for it again, and a replaced model is freed (the panel remembers the frame only weakly)."""
    import gc
    import weakref

    import model.interpret.frame as frame_module
    from explorer.panels.lens import panel as lens_module

    calls = []

    def failing(bundle, forward):
        calls.append(bundle)
        raise RuntimeError("out of memory")

    monkeypatch.setattr(frame_module, "LENS_EAGER_MACS", 0)
    monkeypatch.setattr(lens_module, "forward_lens", failing)
    state, panel = _panel(qtbot, bert, "the cat can [MASK] .")
    qtbot.waitUntil(lambda: "could not be computed: out of memory" in panel.note.text(), timeout=10_000)
    panel.hide()
    panel.show()
    assert panel.wait_until_drawn() and len(calls) == 1 and panel.lens is None
    monkeypatch.undo()  # the next model's lens comes with its frame: nothing asks for another
    gone = weakref.ref(state.frame)
    Runner(state, synchronous=True).set_bundle(random_bundle("reverse", dropout=0.0), then_run="abc")
    gc.collect()
    assert gone() is None
