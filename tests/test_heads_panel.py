"""Head surgery in the session, the Frame, scenes and the heads panel."""
from __future__ import annotations

import csv
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
import torch  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402

from explorer.scenes import capture  # noqa: E402
from explorer.session import Session  # noqa: E402
from model.interpret.frame import compute_frame  # noqa: E402
from model.interpret.interventions import InterventionError, intervene  # noqa: E402
from model.interpret.output_change import output_changes  # noqa: E402
from model.io.checkpoints import bundled_checkpoints, load_checkpoint  # noqa: E402
from model.io.scenes import SceneError, parse_tour  # noqa: E402
from support import make_main_window  # noqa: E402

ALL_CROSS = {("cross", layer, head): "zero" for layer in range(2) for head in range(4)}


@pytest.fixture(scope="module")
def reverse():
    return load_checkpoint(bundled_checkpoints()["reverse"])


def test_the_frame_runs_inside_the_intervention_and_keeps_the_plain_output(reverse):
    plain = compute_frame(reverse, "hello")
    cut = compute_frame(reverse, "hello", interventions=ALL_CROSS, previous=plain)
    assert plain.output_text == "olleh" and cut.output_text != "olleh"  # no source to read: no reversal
    assert cut.baseline.output_text == "olleh" and cut.interventions == ALL_CROSS
    assert torch.all(cut.forward.trace["decoder.layers.0.cross_attn.context"].tensor == 0)
    with torch.no_grad(), intervene(reverse.model, ALL_CROSS):  # the decode is the edited model's own
        again = compute_frame(reverse, "hello")
    assert [s.chosen for s in again.decode.steps] == [s.chosen for s in cut.decode.steps]
    changes = output_changes(cut)
    assert changes[0].before == "o" and changes[0].before_prob == pytest.approx(
        float(plain.decode.steps[0].model_probs.max()))
    assert any(c.changed for c in changes)
    back = compute_frame(reverse, "hello", previous=cut)  # the edited forward is never reused unedited
    assert back.output_text == "olleh" and not back.interventions
    with pytest.raises(InterventionError, match="out of range"):
        compute_frame(reverse, "hello", interventions={("cross", 5, 0): "zero"})


def test_session_field_event_and_scene_round_trip(reverse):
    session = Session()
    heard = []
    session.events.interventions.connect(heard.append)
    session.set_head_intervention("cross", 1, 0, "uniform")
    session.set_head_intervention("encoder", 0, 2, "zero")
    assert heard[-1] == {("cross", 1, 0): "uniform", ("encoder", 0, 2): "zero"}
    saved = session.to_scene_dict()
    assert saved["interventions"] == "cross:1:0=uniform,encoder:0:2=zero"
    session.reset_view_state()  # a scene without edits clears them
    assert session.interventions == {}
    session.reset_view_state(interventions=saved["interventions"])
    assert session.interventions == {("cross", 1, 0): "uniform", ("encoder", 0, 2): "zero"}
    session.set_bundle(load_checkpoint(bundled_checkpoints()["gpt-facts"]))  # no encoder, no cross
    assert session.interventions == {}
    with pytest.raises(ValueError):
        session.set_interventions({("cross", 0, 0): "drop"})
    with pytest.raises(SceneError, match="interventions"):
        parse_tour({"version": 2, "name": "x", "interventions": "cross:0=zero"})


@pytest.fixture
def window(qtbot, tmp_path):
    return make_main_window(qtbot, tmp_path)


def test_clicking_the_grid_changes_the_output_view_and_the_maps_and_heads_are_ranked(window, qtbot, tmp_path):
    panel = window.panels["heads"]
    window.focus_panel("heads")
    assert "No head is edited" in panel.changes.text()
    panel.edit_box.setCurrentIndex(panel.edit_box.findData("uniform"))
    qtbot.mouseClick(panel.grid.cells[("encoder", 1, 3)], Qt.MouseButton.LeftButton)
    window.runner.wait()
    frame = window.state.frame
    assert window.state.session.interventions == {("encoder", 1, 3): "uniform"}
    assert frame.interventions == {("encoder", 1, 3): "uniform"}
    weights = frame.forward.trace.attention("encoder", 1)[0, 3]
    assert torch.allclose(weights, torch.full_like(weights, 1 / weights.size(-1)))
    text = panel.changes.text()
    assert "before:" in text and "after:" in text
    assert panel.grid.cells[("encoder", 1, 3)].text() == "≡"
    assert capture(window, "s").interventions == "encoder:1:3=uniform"
    attention = window.panels["attention"]
    window.focus_panel("attention")
    attention.set_view("grid")
    attention._refresh(force=True)
    assert attention.grid.edits == {("encoder", 1, 3): "uniform"}
    window.state.select_attention("encoder", 1, 3)
    assert attention.grid.map_of("encoder", 3).title.text() == "L2 H4 (≡)"  # the edited head is marked
    figure = window.panels["architecture"]
    figure.set_expanded(True)  # Figure 1 rings the edited sublayer's block
    assert [k for k, b in figure.blocks().items() if b.edited] == ["encoder.layers.1.self_attn"]
    assert "head 4 uniform" in figure.block("encoder.layers.1.self_attn").toolTip()
    qtbot.mouseClick(panel.grid.cells[("encoder", 1, 3)], Qt.MouseButton.LeftButton)  # again: restored
    window.runner.wait()
    assert window.state.session.interventions == {} and not window.state.frame.interventions

    # the ranking on a pool thread, with progress, and its CSV
    panel.pairs_spin.setValue(10)
    panel.curve_points = 3
    panel.run_importance()
    assert not panel.run_button.isEnabled()
    qtbot.waitUntil(lambda: not panel.job.running and panel.importance is not None, timeout=60000)
    assert panel.bar.value() == panel.bar.maximum() and panel.run_button.isEnabled()
    result = panel.importance
    assert result is not None and result.n_pairs == 10 and len(result.curve_scores) == 3
    assert panel.view.curve.getData()[0].tolist() == result.curve_counts
    assert panel.view.bars.opts["height"] == [result.masking[k] for k in result.heads]  # one bar a head
    assert panel.view.ranking.text() == result.summary("masking")
    with open(panel.export_csv(tmp_path / "heads.csv"), encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(result.heads) + 1


def test_an_edit_that_moves_nothing_says_so_not_a_drop_of_zero(monkeypatch):
    """"Largest drop: 0.92 → 0.92" read as a change; below 0.005 the view says nothing moved,
    above it names the drop."""
    from types import SimpleNamespace

    from explorer.style import prob_text
    from model.interpret import output_change
    from model.interpret.output_change import TokenChange, describe_html

    frame = SimpleNamespace(interventions={("cross", 0, 1): "zero"}, decode=object())  # a decoder's frame
    same = [TokenChange(0, "r", 0.921, "r", 0.919), TokenChange(1, "e", 0.80, "e", 0.80)]
    monkeypatch.setattr(output_change, "output_changes", lambda _frame: same)
    text = describe_html(frame, prob_text)
    assert "Largest drop" not in text and "changes nothing" in text
    dropped = [TokenChange(0, "r", 0.92, "r", 0.61), TokenChange(1, "e", 0.80, "e", 0.80)]
    monkeypatch.setattr(output_change, "output_changes", lambda _frame: dropped)
    text = describe_html(frame, prob_text)
    assert "Largest drop: step 1" in text and "0.61" in text  # counted as the decoding panel counts steps
    frame.decode = None  # a masked LM's: its outputs are the [MASK]s, numbered as the fill-in view does
    assert "Largest drop: [MASK] 1" in describe_html(frame, prob_text)
    changed = [TokenChange(0, "r", 0.92, "e", 0.61), TokenChange(1, "<eos>", 0.80, "<eos>", 0.80)]
    monkeypatch.setattr(output_change, "output_changes", lambda _frame: changed)
    assert "1 of 2 [MASK] fill-ins changed" in describe_html(frame, prob_text)  # what is counted, said
    frame.decode = object()
    assert "1 of 2 decoding steps changed" in describe_html(frame, prob_text)  # <eos> a step, as listed


def test_a_deep_stack_is_paged_ten_layers_at_a_time_and_every_head_is_reachable(qtbot):
    """SmolLM2's shape (30 decoder layers of 9 heads): the grid shows one page of layers, each
    head reachable through its page's tab, and an edit on a hidden page is named on its tab."""
    from explorer.panels.heads.head_grid import HeadGrid
    from model.interpret.surgery_labels import PAGE_LAYERS
    from support import windows_shown

    grid = HeadGrid()
    qtbot.addWidget(grid)
    grid.resize(1200, 1000)  # room for more than ten rows of heads
    grid.show()
    with windows_shown() as seen:
        grid.set_model({"decoder_self": 30}, 9)  # (a model loaded while the panel is on screen)
    assert seen == []
    tabs = grid.pages["decoder_self"][0]
    assert not tabs.isHidden() and [tabs.tabText(i) for i in range(tabs.count())] == ["L1–10", "L11–20", "L21–30"]
    clicked = []
    grid.headClicked.connect(lambda *key: clicked.append(key))
    for page in range(tabs.count()):
        tabs.setCurrentIndex(page)
        shown = [layer for layer in range(30) if not grid.cells[("decoder_self", layer, 0)].isHidden()]
        assert shown == list(grid.shown_layers("decoder_self")) == list(range(10 * page, 10 * page + PAGE_LAYERS))
        for layer in shown:
            qtbot.mouseClick(grid.cells[("decoder_self", layer, 8)], Qt.MouseButton.LeftButton)
    assert clicked == [("decoder_self", layer, 8) for layer in range(30)]
    grid.set_heads({("decoder_self", 3, 2): "zero", ("decoder_self", 29, 0): "mean", ("decoder_self", 28, 1): "zero"})
    assert [tabs.tabText(i) for i in range(3)] == ["L1–10 (1 edited)", "L11–20", "L21–30 (2 edited)"]
    grid.set_model({"encoder": 2, "decoder_self": 2, "cross": 2}, 4)  # a small model: one page, no tabs
    assert all(tabs.isHidden() and len(pages) == 1 for tabs, pages, _rows, _grid in grid.pages.values())
    assert not any(button.isHidden() for button in grid.cells.values())


def test_an_edit_restyles_only_the_heads_it_changes(qtbot, monkeypatch):
    """270 heads (SmolLM2): an edit re-styles the edited head, not every button (a style sheet
    re-polishes its widget); the edited head wears the edited sheet, and loses it when undone."""
    from explorer.panels.heads import head_grid

    grid = head_grid.HeadGrid()
    qtbot.addWidget(grid)
    grid.set_model({"decoder_self": 30}, 9)
    styled = []
    monkeypatch.setattr(head_grid, "set_sheet", lambda button, sheet: styled.append((button, sheet)))
    key = ("decoder_self", 3, 2)
    grid.set_heads({key: "zero"})
    assert styled == [(grid.cells[key], head_grid.EDITED_SHEET)]
    styled.clear()
    grid.set_heads({})
    assert styled == [(grid.cells[key], head_grid.PLAIN_SHEET)]
