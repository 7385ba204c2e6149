"""The compare panel: drive the session, then look at the view (napari's way)."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from model.io.checkpoints import random_bundle  # noqa: E402
from model.io.snapshots import save_snapshot  # noqa: E402
from support import make_main_window  # noqa: E402


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    """A "run" of two snapshots of the reverse architecture (two seeds stand in for two steps)."""
    folder = tmp_path_factory.mktemp("run") / "rev-steps"
    for step, seed in ((100, 5), (200, 6)):
        torch.manual_seed(seed)
        save_snapshot(random_bundle("reverse"), folder, step)
    return folder


def settle(qtbot, rounds: int = 4) -> None:
    for _ in range(rounds):
        QApplication.processEvents()
        qtbot.wait(5)


def test_slider_changes_b_and_the_view(qtbot, tmp_path, run_folder):
    window = make_main_window(qtbot, tmp_path)
    state, panel = window.state, window.panels["compare"]
    window.focus_panel("compare")
    state.session.set_compare(str(run_folder))  # a run's folder: its newest snapshot is B
    assert panel.wait_until_drawn()
    first = panel.comparison
    assert first is not None and first.label_b == "rev-steps, step 200"
    assert panel.slider_row.isVisible() and (panel.slider.maximum(), panel.slider.value()) == (1, 1)
    kind, layer, head = panel.kind, panel.layer, panel.head
    a, b, diff = panel.maps.values
    np.testing.assert_array_equal(diff, first.attention_b[kind][layer, head] - first.attention_a[kind][layer, head])
    assert panel.maps.scale == pytest.approx(np.abs(diff[first.allowed[kind]]).max())
    panel.slider.setValue(0)
    qtbot.waitUntil(lambda: state.session.compare == str(run_folder / "step-000100"), timeout=3000)
    assert panel.wait_until_drawn()
    second = panel.comparison
    assert second is not first and second.label_b == "rev-steps, step 100"
    assert panel.slider_label.text() == "step 100 (1 of 2)"
    assert not np.array_equal(panel.maps.values[1], b)  # B's map is the other snapshot's
    np.testing.assert_array_equal(panel.maps.values[0], a)  # A's is unchanged
    state.select_attention("cross", 1, 2)  # the session's head: the maps follow without recomputing
    np.testing.assert_array_equal(panel.maps.values[2], second.difference("cross")[1, 2])
    assert second.most_changed("cross") == np.unravel_index(
        np.argmax(second.mean_abs_difference("cross")), second.mean_abs_difference("cross").shape)
    assert state.session.to_scene_dict()["compare"] == str(run_folder / "step-000100")  # a scene saves B
    # a mismatch: said in the error colours, the model's own picture kept
    state.session.set_compare("translation")  # another task's model: other sizes and vocabulary
    assert panel.wait_until_drawn()
    assert panel.comparison is None and not panel.tabs.isVisible()
    assert panel.note.text().startswith("Cannot compare:") and "vocabulary differs" in panel.note.text()
    assert "error_bg" in panel.note.property("themeSheet")
    assert state.frame is not None and state.frame.source == "attention"  # the model's own picture stays


def test_a_comparison_names_b_and_says_what_both_maps_read(qtbot, tmp_path, run_folder):
    """With a comparison shown: B named by its run and step, the most-changed button offered,
    and the outputs line says what both maps read. (Whether it fits a beamer: the layout sweep.)"""
    window = make_main_window(qtbot, tmp_path, size=(1280, 720))
    window.focus_panel("compare")
    window.state.session.set_compare(str(run_folder))
    panel = window.panels["compare"]
    assert panel.wait_until_drawn() and panel.comparison is not None
    assert panel.b_name.text() == "rev-steps, step 200"
    assert panel.most_changed_button.isVisible() and panel.most_changed_button.isEnabled()
    assert panel.outputs_line.text().startswith(("Same output", "Different outputs"))
    from model.interpret.attention_maps import token_names
    queries, _ = token_names(panel.comparison.frame_a.bundle.model_kind, panel.kind)
    shared = panel.shared_line.text()  # what the maps read, and which tokens their rows and columns are
    assert panel.shared_line.isVisible() and shared.startswith(f"Both maps read {panel.comparison.shared_input} · ")
    assert queries in shared and "query" in shared and "key" in shared


def test_most_changed_shows_the_head_that_differs_most(qtbot, tmp_path, run_folder):
    window = make_main_window(qtbot, tmp_path)
    state, panel = window.state, window.panels["compare"]
    window.focus_panel("compare")
    assert not panel.most_changed_button.isEnabled()  # nothing compared yet
    state.session.set_compare(str(run_folder))
    assert panel.wait_until_drawn()
    for kind in panel.comparison.kinds:
        changes = panel.comparison.mean_abs_difference(kind)
        state.select_attention(kind, *np.unravel_index(np.argmin(changes), changes.shape))  # the least changed
        panel.most_changed_button.click()
        layer, head = np.unravel_index(np.argmax(changes), changes.shape)
        assert (state.kind, state.layer, state.head) == (kind, layer, head)
        assert changes[layer, head] == changes.max() > changes.min()  # a real choice among the heads
        np.testing.assert_array_equal(panel.maps.values[2], panel.comparison.difference(kind)[layer, head])


def test_a_scene_keeps_the_compared_checkpoint():
    from explorer.session import Session
    from model.io.scenes import parse_tour

    scene = parse_tour({"version": 2, "scenes": [{"name": "x", "compare": "runs/a/step-000100",
                                                   "views": {"compare": "heads"}}]}).scenes[0]
    assert scene.compare == "runs/a/step-000100" and scene.to_dict()["compare"] == scene.compare
    session, heard = Session(), []
    session.events.compare.connect(heard.append)
    session.reset_view_state(scene.views, scene.decoding, scene.causal_mask, scene.compare)
    assert session.compare == scene.compare and session.view("compare") == "heads" and heard == [scene.compare]
    session.reset_view_state()  # a scene without one: nothing compared, whatever was before
    assert session.compare is None and heard == [scene.compare, None]


def test_a_zero_difference_says_identical_instead_of_a_blank_box(qtbot):
    """B − A = 0 everywhere drew a box of the diverging map's middle colour (a glaring pale
    square on the dark theme); the map's place now says "identical". A real difference draws."""
    from explorer.panels.compare.panel import ComparisonMaps

    maps = ComparisonMaps()
    qtbot.addWidget(maps)
    a = np.random.default_rng(0).dirichlet(np.ones(5), size=5).astype(np.float32)
    allowed = np.ones((5, 5), dtype=bool)
    tokens = list("abcde")
    maps.set_maps(a, a.copy(), allowed, tokens, tokens, "L1 H1")
    assert maps.identical.isVisible() and not maps.map_diff.image.isVisible() and not maps.diff_bar.isVisible()
    assert maps.map_diff.title.text() == "B − A = 0"
    b = a.copy()
    b[2, 3] += 0.1
    maps.set_maps(a, b, allowed, tokens, tokens, "L1 H1")
    assert not maps.identical.isVisible() and maps.map_diff.image.isVisible() and maps.diff_bar.isVisible()
    assert maps.map_diff.title.text() == "B − A" and "0.1" in maps.map_diff.title.toolTip()
    assert maps.diff_bar.levels() == pytest.approx((-0.1, 0.1))  # the scale on the bar: its ends named
    assert [text for _, text in maps.diff_ticks] == ["−0.1", "0", "0.1"]
    b = a.copy()
    b[0, 0] += 3e-7  # below the colour scale's floor, but not zero: drawn, and its size said
    maps.set_maps(a, b, allowed, tokens, tokens, "L1 H1")
    tiny = float(np.abs(b - a).max())
    assert 0 < tiny < 1e-6 and not maps.identical.isVisible()
    assert maps.diff_ticks[-1][1] == f"{max(tiny, 1e-6):.2g}"


def test_untrained_b_is_the_models_own_architecture_freshly_initialised(qtbot, tmp_path):
    """"Untrained B": what did training change? B is A's architecture and tokenizers with fresh
    weights (model.io.checkpoints.untrained_like): the trained reverse model writes the reversal,
    the untrained one does not, and B's maps are its own (not A's)."""
    from explorer.runner import load_bundle
    from model.io.checkpoints import UNTRAINED, untrained_like
    window = make_main_window(qtbot, tmp_path)
    state, panel = window.state, window.panels["compare"]
    window.runner.set_bundle(load_bundle("reverse"), then_run="transformer")
    qtbot.waitUntil(lambda: state.frame is not None and state.frame.source == "transformer", timeout=20_000)
    window.focus_panel("compare")
    panel.untrained_button.click()
    assert state.session.compare == UNTRAINED
    assert panel.wait_until_drawn()
    comparison = panel.comparison
    assert comparison is not None and comparison.label_b == "untrained copy"
    assert "".join(comparison.output_a.pieces[:-1]) == "remrofsnart"
    assert comparison.output_b.pieces != comparison.output_a.pieces
    kind = panel.kind
    assert not np.allclose(comparison.attention_a[kind], comparison.attention_b[kind])
    # B itself: A's config and tokenizers, other weights, the same for the same seed, and the
    # caller's random state untouched
    a = state.bundle
    state_before = torch.random.get_rng_state()
    b1, b2 = untrained_like(a), untrained_like(a)
    assert torch.equal(torch.random.get_rng_state(), state_before)
    assert b1.config == a.config and b1.src_tokenizer is a.src_tokenizer and b1.tgt_tokenizer is a.tgt_tokenizer
    for (name, p1), p2, _pa in zip(b1.model.named_parameters(), b2.model.parameters(), a.model.parameters()):
        assert torch.equal(p1, p2), name
    assert any(not torch.equal(p1, pa) for p1, pa in zip(b1.model.parameters(), a.model.parameters()))


def test_the_output_bars_count_the_labels_they_stride_and_keep_no_legend_over_the_bars(qtbot):
    """The one label policy on the bar charts: a strided token axis says "k of n labels" (k and n
    what it drew and what is in view); every label drawn: the plain name. The colours are named
    in the titles, so nothing sits over a bar near 1."""
    from types import SimpleNamespace

    import pyqtgraph as pg

    from explorer.panels.compare.outputs import OutputBars

    def scored(writer, n):
        return SimpleNamespace(writer=writer, pieces=[f"tok{i}" for i in range(n)],
                               own=np.full(n, 0.99), other=np.full(n, 0.5))

    bars = OutputBars()
    qtbot.addWidget(bars)
    bars.resize(700, 360)
    bars.show()
    bars.set_outputs(scored("A", 60), scored("B", 3))
    axis_a, axis_b = bars.bars_a.axis, bars.bars_b.axis
    qtbot.waitUntil(lambda: axis_a.drawn > 0 and axis_b.drawn > 0, timeout=3000)
    settle(qtbot)
    assert 0 < axis_a.drawn < axis_a.in_view == 60
    assert axis_a.labelText == f"output token · {axis_a.drawn} of 60 labels"
    assert axis_b.drawn == axis_b.in_view == 3 and axis_b.labelText == "output token"
    assert not any(isinstance(item, pg.LegendItem) for item in bars.canvas.scene().items())
    assert "A" in bars.bars_a.plot.titleLabel.text and "B" in bars.bars_a.plot.titleLabel.text


def test_a_b_and_their_difference_are_drawn_the_same_size_side_by_side(qtbot):
    """The colour bars stand beside the maps, not inside one of them: A, B and B − A get equal room."""
    from explorer.panels.compare.panel import ComparisonMaps

    maps = ComparisonMaps()
    qtbot.addWidget(maps)
    maps.resize(1100, 420)
    maps.show()
    qtbot.waitExposed(maps)
    a = np.random.default_rng(1).dirichlet(np.ones(6), size=6).astype(np.float32)
    tokens = list("abcdef")
    maps.set_maps(a, a[::-1].copy(), np.ones((6, 6), dtype=bool), tokens, tokens, "L1 H1")
    settle(qtbot)
    boxes = [m.plot.vb.sceneBoundingRect() for m in maps.plots]
    widths, heights = [b.width() for b in boxes], [b.height() for b in boxes]
    assert min(widths) > 0 and max(widths) - min(widths) <= 0.02 * max(widths), widths
    assert max(heights) - min(heights) <= 0.02 * max(heights), heights
    lefts = [m.mapTo(maps, m.rect().topLeft()).x() for m in maps.plots]
    assert lefts == sorted(lefts)  # side by side, A then B then B − A


def test_a_compare_panel_out_of_sight_compares_nothing_until_shown(qtbot, tmp_path, run_folder):
    window = make_main_window(qtbot, tmp_path)
    state, panel = window.state, window.panels["compare"]
    window.focus_panel("compare")
    window.docks["compare"].hide()  # its dock closed, the window shown
    assert window.isVisible() and not panel.isVisible()
    submitted = []
    panel.job.busy.connect(lambda busy: busy and submitted.append(state.session.compare))
    state.session.set_compare(str(run_folder))
    qtbot.wait(50)
    assert submitted == [] and panel.comparison is None
    window.docks["compare"].show()
    assert panel.wait_until_drawn() and panel.comparison is not None and submitted


def test_presenting_on_a_small_projector_every_tab_keeps_its_titles_whole_and_the_maps_their_labels(qtbot, tmp_path):
    from layout_checks import panel_problems, settle_until_still

    window = make_main_window(qtbot, tmp_path, size=(1024, 768))
    window.lecture.presentation.enter(full_screen=False)
    try:
        window.resize(1024, 768)
        window.focus_panel("compare")
        window.state.session.set_compare("untrained")
        panel = window.panels["compare"]
        assert panel.wait_until_drawn() and panel.comparison is not None
        for index in range(panel.tabs.count()):
            panel.tabs.setCurrentIndex(index)
            settle_until_still(qtbot, window)
            assert panel_problems(panel, window) == [], panel.tabs.tabText(index)
            assert panel.maps.switch.isVisible() == (panel.tabs.currentWidget() is panel.maps)
        panel.tabs.setCurrentWidget(panel.maps)  # one of A and B beside B − A: every token named on both
        for shown in (panel.maps.show_a, panel.maps.show_b):
            shown.click()
            settle_until_still(qtbot, window)
            visible = [m for m in panel.maps.plots if m.isVisible()]
            assert len(visible) == 2 and visible[-1] is panel.maps.map_diff
            assert visible[0] is (panel.maps.map_a if shown is panel.maps.show_a else panel.maps.map_b)
            assert all(m.count_text() == "" for m in visible), [m.label_counts() for m in visible]
    finally:
        window.lecture.presentation.leave()
    window.resize(1920, 1080)  # wide: the three maps side by side, no switch
    settle_until_still(qtbot, window)
    assert all(m.isVisible() for m in panel.maps.plots) and not panel.maps.switch.isVisible()
