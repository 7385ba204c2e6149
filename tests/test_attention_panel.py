"""The attention panel shows the trace's exact weights, marks masked cells, and shares the selection."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from PySide6.QtCore import QPointF, QRectF, Qt  # noqa: E402

from explorer.panels.attention.panel import AttentionPanel  # noqa: E402
from explorer.state import SessionState  # noqa: E402
from model.interpret.attention_maps import AttentionData, rollout  # noqa: E402
from support import small_bundle  # noqa: E402

SOURCE, TARGET = "abcdefg", "gfedcba"


make_bundle = small_bundle


@pytest.fixture
def setup(qtbot):
    bundle = make_bundle()
    state = SessionState()
    panel = AttentionPanel(state)
    qtbot.addWidget(panel)
    panel.resize(1280, 720)
    panel.show()
    qtbot.waitExposed(panel)
    state.set_bundle(bundle)
    result = bundle.run(SOURCE, target=TARGET)
    state.set_result(result)
    return state, panel, result


def expected(trace, kind, layer, head):
    """The trace's weights with masked cells as NaN (what the image must hold)."""
    w = trace.attention(kind, layer)[0, head].numpy()
    mask_name = {"encoder": "encoder", "decoder_self": "decoder", "cross": "decoder"}[kind]
    sub = "cross_attn" if kind == "cross" else "self_attn"
    allowed = trace[f"{mask_name}.layers.{layer}.{sub}.mask"].tensor[0].numpy()
    return np.where(allowed, w, np.nan), allowed


@pytest.mark.parametrize("kind, layer, head", [("encoder", 1, 2), ("decoder_self", 2, 1), ("cross", 0, 3)])
def test_single_view_shows_the_selected_trace_tensor(setup, kind, layer, head):
    state, panel, result = setup
    panel.set_view("single")
    state.select_attention(kind, layer, head)
    want, _ = expected(result.trace, kind, layer, head)
    np.testing.assert_array_equal(panel.single.image.image, want)
    picker = panel.picker
    assert (picker.kind_box.currentData(), picker.layer_box.currentData(), picker.head_box.currentData()) == (kind, layer, head)
    # axis labels come from the result's pieces
    q_axis = result.tgt_pieces if kind != "encoder" else result.src_pieces
    assert panel.single.rows_axis.tokens == q_axis


def test_combo_boxes_change_the_shared_selection_and_the_image(setup):
    state, panel, result = setup
    panel.set_view("single")
    panel.picker.kind_box.setCurrentIndex(panel.picker.kind_box.findData("cross"))
    panel.picker.layer_box.setCurrentIndex(2)
    panel.picker.head_box.setCurrentIndex(1)
    assert (state.kind, state.layer, state.head) == ("cross", 2, 1)
    want, _ = expected(result.trace, "cross", 2, 1)
    np.testing.assert_array_equal(panel.single.image.image, want)
    assert panel.single.image.image.shape == (len(result.tgt_pieces), len(result.src_pieces))  # target × source


def test_grid_holds_every_head_of_the_selected_layer_labelled_with_the_frames_tokens(setup):
    state, panel, result = setup
    panel.set_view("grid")
    panel.all_kinds.setChecked(True)
    data = AttentionData.from_result(result)
    for kind in ("encoder", "decoder_self", "cross"):
        for layer in range(result.trace.n_layers(kind)):
            state.select_attention(kind, layer, 0)
            for head in range(4):
                heatmap = panel.grid.map_of(kind, head)
                want, _ = expected(result.trace, kind, layer, head)
                np.testing.assert_array_equal(np.where(heatmap.allowed, heatmap.values, np.nan), want)
                assert heatmap.title.text().startswith(f"L{layer + 1} H{head + 1}")  # the layer drawn
                assert heatmap.cols_axis.tokens == data.labels[kind][1]
                assert heatmap.rows_axis.tokens == data.labels[kind][0]
    panel.set_view("single")  # the one map too
    heatmap = panel.single
    rows, cols = heatmap.values.shape
    assert heatmap.edges.rect() == QRectF(0, 0, cols, rows) and heatmap.edges.isVisible()


def _pixel_patch(view, heatmap, row, col, half=2):
    """Mean RGB of a small patch near the corner of cell (row, col) as painted on screen (away
    from the number written in the middle)."""
    scene = heatmap.plot.vb.mapViewToScene(QPointF(col + 0.2, row + 0.2))
    pt = view.canvas.mapFromScene(scene)
    img = view.canvas.grab().toImage()
    pixels = [img.pixelColor(pt.x() + dx, pt.y() + dy) for dx in range(-half, half + 1) for dy in range(-half, half + 1)]
    return np.array([[c.red(), c.green(), c.blue()] for c in pixels], dtype=float).mean(axis=0)


def test_masked_cell_is_drawn_differently_from_a_zero_weight(setup, qtbot):
    state, panel, result = setup
    data = AttentionData.from_result(result)
    data.weights["decoder_self"][1, 0, 5, 2] = 0.0  # a lower-triangle (allowed) cell with weight 0
    assert data.allowed["decoder_self"][5, 2] and not data.allowed["decoder_self"][2, 5]
    panel.show_data(data)
    panel.set_view("single")
    state.select_attention("decoder_self", 1, 0)
    qtbot.wait(10)
    zero = _pixel_patch(panel.single, panel.single, 5, 2)
    masked = _pixel_patch(panel.single, panel.single, 2, 5)
    viridis0 = np.array(panel.single.image.lut[0][:3], dtype=float)
    assert np.abs(zero - viridis0).max() < 12  # weight 0 is the colormap's 0 ...
    assert np.abs(masked - zero).max() > 60  # ... and a blocked cell looks nothing like it
    assert abs(masked[0] - masked[1]) < 20 and abs(masked[1] - masked[2]) < 20  # grey


def test_clicking_a_grid_cell_selects_that_layer_and_head(setup, qtbot):
    state, panel, result = setup
    panel.set_view("grid")
    state.select_attention("encoder", 1, 0)
    heatmap = panel.grid.map_of("encoder", 3)
    panel.grid.scroll_area.ensureWidgetVisible(heatmap)
    qtbot.wait(20)
    scene = heatmap.plot.vb.mapViewToScene(QPointF(2.5, 2.5))
    pos = heatmap.canvas.mapFromScene(scene)
    qtbot.mouseClick(heatmap.canvas.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert (state.kind, state.layer, state.head) == ("encoder", 1, 3)
    assert panel.view == "single"  # opened large
    want, _ = expected(result.trace, "encoder", 1, 3)
    np.testing.assert_array_equal(panel.single.image.image, want)


def test_panel_follows_a_selection_made_elsewhere(setup):
    state, panel, _ = setup
    state.select_attention("decoder_self", 2, 3)
    assert (panel.kind, panel.layer, panel.head) == ("decoder_self", 2, 3)
    assert panel.picker.head_box.currentData() == 3


def test_hovering_a_token_in_the_line_view_keeps_only_its_lines(setup, qtbot):
    state, panel, _ = setup
    state.select_attention("encoder", 0, 1)
    panel.set_view("lines")
    lines = panel.lines
    before = lines.drawn_lines()
    assert len({q for q, _, _ in before}) > 1
    qtbot.mouseMove(lines, lines.token_rect("q", 3).center().toPoint())
    assert lines.hover == ("q", 3)
    shown = lines.drawn_lines()
    assert shown and {q for q, _, _ in shown} == {3}
    assert "query 3" in panel.readout.text()
    qtbot.mouseMove(lines, lines.token_rect("k", 2).center().toPoint())
    assert lines.hover == ("k", 2)
    assert {k for _, k, _ in lines.drawn_lines()} == {2}


def test_rollout_rows_sum_to_one_and_match_an_independent_computation(setup):
    state, panel, result = setup
    panel.set_view("derived")
    for kind in ("encoder", "decoder_self"):
        n = result.trace.n_layers(kind)
        state.select_attention(kind, n - 1, 0)
        shown = panel.derived.rollout.values
        np.testing.assert_allclose(shown.sum(axis=1), 1.0, atol=1e-5)
        # independent: torch, float64, right-to-left product Ã_{L-1} ··· Ã_0
        mats = []
        for layer in range(n):
            a = result.trace.attention(kind, layer)[0].double().mean(0)
            a = 0.5 * a + 0.5 * torch.eye(a.shape[0], dtype=torch.float64)
            mats.append(a / a.sum(-1, keepdim=True))
        want = mats[0]
        for a in mats[1:]:
            want = a @ want
        np.testing.assert_allclose(shown, want.numpy(), atol=1e-5)
        mean = result.trace.attention(kind, n - 1)[0].double().mean(0).numpy()
        np.testing.assert_allclose(panel.derived.mean.values, mean, atol=1e-6)
    state.select_attention("cross", 0, 0)
    assert panel.derived.rollout.values.size == 0  # no rollout: its note instead
    assert panel.derived.right.currentWidget() is panel.derived.note


def test_rollout_refuses_rectangular_maps():
    with pytest.raises(ValueError):
        rollout(np.ones((2, 1, 3, 4), dtype=np.float32) / 4)


def test_only_the_models_kinds_are_offered(qtbot):
    bundle = make_bundle(kind="decoder_only")
    state = SessionState()
    panel = AttentionPanel(state)
    qtbot.addWidget(panel)
    state.set_bundle(bundle)
    state.set_result(bundle.run("abc", target="cba"))
    kinds = [panel.picker.kind_box.itemData(i) for i in range(panel.picker.kind_box.count())]
    assert kinds == ["decoder_self"]


def test_a_bare_trace_can_be_streamed_in(qtbot):
    """Training snapshots arrive as traces without a state bundle: positions label the axes."""
    bundle = make_bundle()
    panel = AttentionPanel(SessionState())
    qtbot.addWidget(panel)
    trace = bundle.run("abcd", target="dcba").trace
    panel.set_view("single")
    panel.show_result(trace)
    assert panel.stack.currentWidget() is panel.tabs
    np.testing.assert_array_equal(panel.single.image.image, trace.attention("encoder", 0)[0, 0].numpy())
    assert panel.single.cols_axis.tokens == ["0", "1", "2", "3"]


def _count_near(image, rgb, tol=6) -> int:
    """How many pixels of a QImage are within `tol` of an RGB colour."""
    from PySide6.QtGui import QImage

    img = image.convertToFormat(QImage.Format.Format_RGB888)
    arr = np.frombuffer(img.constBits(), dtype=np.uint8).reshape(img.height(), img.bytesPerLine())[:, : img.width() * 3]
    arr = arr.reshape(img.height(), img.width(), 3).astype(int)
    return int((np.abs(arr - np.array(rgb)).max(axis=-1) <= tol).sum())


@pytest.mark.slow
def test_screenshot_cli_shows_the_attention_panel(tmp_path, qapp):
    from PySide6.QtGui import QImage

    from explorer.app import run_app

    out = tmp_path / "attention.png"
    assert run_app(["--panel", "attention", "--screenshot", str(out)]) == 0  # (in-process: the CLI's own code path)
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1280, 800)
    # the heatmaps are on screen: plenty of viridis colours, which nothing else in the window uses
    from explorer.drawing.plot_style import weight_cmap

    lut = weight_cmap().getLookupTable(nPts=256)
    assert sum(_count_near(image, lut[i][:3]) for i in (0, 20, 40)) > 2000


def test_value_under_the_mouse_is_the_exact_weight(setup, qtbot):
    state, panel, result = setup
    panel.set_view("single")
    state.select_attention("decoder_self", 1, 2)
    qtbot.wait(20)
    heatmap = panel.single

    def hover(row, col):
        scene = heatmap.plot.vb.mapViewToScene(QPointF(col + 0.5, row + 0.5))
        qtbot.mouseMove(panel.single.canvas.viewport(), panel.single.canvas.mapFromScene(scene))
        qtbot.wait(30)
        return panel.readout.text()

    text = hover(4, 1)
    weight = float(result.trace.attention("decoder_self", 1)[0, 2, 4, 1])
    assert f"{weight:.6f}" in text and f"“{result.tgt_pieces[4]}”" in text
    assert "blocked" in hover(1, 4)  # a future position: masked, not a number


def test_the_grid_draws_every_layer_only_where_they_fit_unscrolled(setup, qtbot):
    """A short panel draws the selected layer's heads alone (larger); a tall one every layer."""
    from explorer.drawing.heatmap_grid import least_side

    state, panel, result = setup
    panel.set_view("grid")
    state.select_attention("encoder", 1, 0)
    layers = result.trace.n_layers("encoder")
    panel.resize(1280, int(least_side() * 1.5))
    qtbot.waitUntil(lambda: panel.grid.drawn.get("encoder") == [1])
    one_side = panel.grid.map_of("encoder", 0).height()
    panel.resize(900, least_side() * (layers + 1) * 4)
    qtbot.waitUntil(lambda: panel.grid.drawn.get("encoder") == list(range(layers)))
    assert panel.grid.scroll_area.verticalScrollBar().maximum() == 0  # every layer, unscrolled
    assert all(m.height() >= least_side() for maps in panel.grid.maps for m in maps)
    assert one_side >= least_side()


def test_a_panel_built_after_a_scene_chose_every_kind_shows_every_kind(qtbot):
    """The session's view (a scene's "attention_grid": "all") holds for a panel built later."""
    state = SessionState()
    state.session.set_view("attention_grid", "all")
    panel = AttentionPanel(state)
    qtbot.addWidget(panel)
    assert panel.all_kinds.isChecked()
    panel.all_kinds.setChecked(False)
    assert state.session.view("attention_grid") == "selected"



def test_every_maps_label_count_is_drawn_whole_in_a_wide_window(qtbot, tmp_path):
    """The dates model at 1920x1080: every map of the grid shows its "k/n labels" whole, the
    second row's as the first's."""
    from PySide6.QtGui import QFontMetricsF

    from explorer.runner import load_bundle
    from support import make_main_window

    window = make_main_window(qtbot, tmp_path, size=(1920, 1080))
    window.runner.set_bundle(load_bundle("dates"), then_run="22 November 2026")
    window.focus_panel("attention")
    panel = window.panels["attention"]
    qtbot.waitUntil(lambda: panel.grid.maps and all(m.count.text() for maps in panel.grid.maps for m in maps),
                    timeout=20_000)
    for _ in range(5):
        qtbot.wait(20)
    counts = [m.count for maps in panel.grid.maps for m in maps]
    assert len(counts) >= 8
    for label in counts:
        assert label.width() >= QFontMetricsF(label.font()).horizontalAdvance(label.text()), (label.text(), label.width())


def test_every_view_tab_is_whole_beside_the_mask_legend_on_a_projector(qtbot, tmp_path):
    """Presenting at 1024x768 a decoder's masked maps put the legend beside the view tabs: the
    legend gives up words, never a tab (a cut tab scrolls the bar), and stays on screen."""
    from support import make_main_window

    window = make_main_window(qtbot, tmp_path, size=(1024, 768))
    window.lecture.presentation.enter()
    window.focus_panel("attention")
    panel = window.panels["attention"]
    window.state.select_attention("decoder_self", 0, 0)
    for _ in range(5):
        qtbot.wait(20)
    bar = panel.tabs.tabBar()
    assert panel.mask_legend.isVisible() and "masked" in panel.mask_legend.text()
    assert all(bar.rect().contains(bar.tabRect(i)) for i in range(bar.count())), [bar.tabText(i) for i in range(bar.count())]
    assert panel.mask_legend.geometry().left() >= bar.geometry().right()
    window.lecture.presentation.leave()
