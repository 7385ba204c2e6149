"""The head atlas panel: it scores the shown model off the GUI thread, draws one cell per head
in its type's colour, and a click selects the head for the Attention maps panel, through the
session, and brings that panel forward."""
import pytest
from PySide6.QtCore import Qt

from explorer.theme import DARK, LIGHT
from model.interpret.head_scores import head_scores
from model.interpret.interventions import all_heads
from support import make_main_window


@pytest.fixture
def window(qtbot, tmp_path):
    return make_main_window(qtbot, tmp_path)


def test_the_atlas_scores_every_head_off_the_gui_thread_and_draws_it(window):
    window.focus_panel("atlas")
    panel = window.panels["atlas"]
    assert panel.wait_until_drawn()
    bundle = window.state.bundle
    assert set(panel.grid.cells) == set(all_heads(bundle.model))
    same = head_scores(bundle)  # deterministic: the panel shows these numbers
    for h in same.heads:
        cell = panel.grid.cells[h.key]
        assert cell.text() == h.letter
        assert LIGHT.head_kinds[h.kind] in cell.styleSheet()
        for name, score in h.scores.items():
            assert f"{name}: {score:.2f}" in cell.toolTip()
    window.lecture.set_theme("dark")
    h = same.heads[0]
    assert DARK.head_kinds[h.kind] in panel.grid.cells[h.key].styleSheet()
    assert all(DARK.head_kinds[k] in panel.swatches[k].styleSheet() for k in DARK.head_kinds)


def test_clicking_a_head_selects_it_for_the_attention_panel_and_brings_that_forward(window, qtbot):
    window.focus_panel("atlas")
    panel = window.panels["atlas"]
    assert panel.wait_until_drawn()
    qtbot.mouseClick(panel.grid.cells[("cross", 1, 2)], Qt.MouseButton.LeftButton)
    state = window.state
    assert (state.kind, state.layer, state.head) == ("cross", 1, 2)
    assert state.session.view("attention") == "single"
    attention = window.panels["attention"]
    assert (attention.kind, attention.layer, attention.head) == ("cross", 1, 2)
    assert attention.picker.head_box.currentData() == 2 and attention.picker.kind_box.currentData() == "cross"
    def in_front(name):  # on screen, not behind another dock's tab
        return window.docks[name].isVisible() and not window.docks[name].visibleRegion().isEmpty()

    qtbot.waitUntil(lambda: in_front("attention") and not in_front("atlas"), timeout=5000)
    assert "Cross L2 H3" in panel.readout.text()  # the atlas shows the selected head's scores
    assert panel.grid.chosen == ("cross", 1, 2)


def test_a_new_model_is_scored_again(window, qtbot):
    from model.io.checkpoints import bundled_checkpoints, load_checkpoint
    window.focus_panel("atlas")
    panel = window.panels["atlas"]
    assert panel.wait_until_drawn()
    window.runner.set_bundle(load_checkpoint(bundled_checkpoints()["gpt-facts"]))
    qtbot.waitUntil(lambda: window.state.bundle.name == "gpt-facts", timeout=20_000)
    assert panel.wait_until_drawn()
    assert {k[0] for k in panel.grid.cells} == {"decoder_self"}
    assert panel.atlas.model_name == "gpt-facts" and "gpt-facts" in panel.status.text()


def test_a_replaced_model_is_not_kept_alive_by_the_atlas_or_the_head_ranking(qtbot):
    """The atlas and the head ranking remember which model their numbers belong to without
    holding it: a 135M model replaced in a lecture is freed, not kept beside the new one."""
    import gc
    import weakref

    from explorer.panels.atlas.panel import AtlasPanel
    from explorer.panels.heads.panel import HeadsPanel
    from explorer.runner import Runner
    from explorer.state import SessionState
    from model.io.checkpoints import random_bundle

    state = SessionState()
    runner = Runner(state, synchronous=True)
    atlas, heads = AtlasPanel(state), HeadsPanel(state)
    for panel in (atlas, heads):
        qtbot.addWidget(panel)
        panel.show()
    first = random_bundle("reverse", dropout=0.0)
    runner.set_bundle(first, then_run="abc")
    assert atlas.wait_until_drawn()
    heads.pairs_spin.setValue(heads.pairs_spin.minimum())
    heads.run_importance()
    qtbot.waitUntil(lambda: not heads.job.running, timeout=60_000)
    gone = weakref.ref(first)
    runner.set_bundle(random_bundle("reverse", dropout=0.0), then_run="abc")
    assert atlas.wait_until_drawn()
    del first
    gc.collect()
    assert gone() is None



def test_a_deep_models_heads_are_paged_to_the_room_and_never_run_under_the_readout(qtbot):
    """30 layers in a short panel (a projector): a page holds the rows of heads the room has, so
    no shown head leaves the panel or lies under the readout, and every head is a tab away."""
    from PySide6.QtCore import QRect

    from explorer.panels.atlas.panel import AtlasPanel
    from explorer.runner import Runner
    from explorer.state import SessionState
    from support import small_bundle

    state = SessionState()
    panel = AtlasPanel(state)
    qtbot.addWidget(panel)
    panel.resize(1000, 380)
    panel.show()
    Runner(state, synchronous=True).set_bundle(small_bundle(kind="decoder_only", n_encoder_layers=0,
                                                            n_decoder_layers=30), then_run="abc")
    assert panel.wait_until_drawn()
    qtbot.waitUntil(lambda: len(panel.grid.cells) == 30 * 4)
    tabs = panel.grid.pages["decoder_self"][0]
    seen = set()
    for page in range(tabs.count()):
        tabs.setCurrentIndex(page)
        qtbot.wait(20)  # (the page's rows laid out)
        shown = {key: cell for key, cell in panel.grid.cells.items() if cell.isVisibleTo(panel)}
        assert shown
        for key, cell in shown.items():
            box = QRect(cell.mapTo(panel, cell.rect().topLeft()), cell.size())
            assert panel.rect().contains(box), key
            assert box.bottom() < panel.readout.geometry().top(), key  # the readout stays clear of the heads
        seen |= set(shown)
    assert seen == set(panel.grid.cells) and tabs.count() > 3  # every head reachable; this short, more pages
