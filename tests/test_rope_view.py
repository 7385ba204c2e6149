"""The Positional panel's RoPE tab: the score table is the model's own first-layer scores moved to
other positions. With rotary positions every row (one offset m − n) holds the score the model
itself recorded for its query and key at that distance; with added sinusoids the row varies
along n and its entry at the tokens' real places is the recorded score."""
import numpy as np
import pytest
import torch

from explorer.panels.positional.panel import PositionalPanel
from explorer.panels.positional.rope_view import RopeView
from explorer.runner import Runner
from explorer.state import SessionState
from model.io.checkpoints import random_bundle


def _view(qtbot, **overrides) -> tuple[SessionState, RopeView]:
    torch.manual_seed(0)
    bundle = random_bundle("reverse", kind="decoder_only", n_encoder_layers=0, n_decoder_layers=1, d_model=32,
                           n_heads=4, d_ff=64, dropout=0.0, **overrides)
    state = SessionState()
    panel = PositionalPanel(state)
    qtbot.addWidget(panel)
    panel.resize(1200, 650)
    runner = Runner(state, synchronous=True)
    runner.set_bundle(bundle)
    runner.run("abc", "cb")  # <bos> a b c c b: the query (last, position 5) is 4 after the key (position 1)
    runner.wait()
    view = panel.rope_view  # (built when first asked for: explorer.deferred_pages)
    assert isinstance(view, RopeView)
    return state, view


def recorded_score(state, head: int) -> float:
    return float(state.trace["decoder.layers.0.self_attn.scores"].tensor[0, head, 5, 1])


@pytest.mark.parametrize("head", [0, 3])
def test_with_rope_each_offset_has_one_score_the_one_the_model_recorded(qtbot, head):
    state, view = _view(qtbot, positional="rope", n_kv_heads=2, norm="rms")
    view.head.setValue(head + 1)  # the spinner counts heads from 1
    s = view.scores
    assert s.rotary and s.head == head and s.key_at == 1
    assert view.table.title.text().endswith(f"head {head + 1}")
    row = view.table.values[s.offsets.index(4)]  # m − n = 4, for every n
    assert np.allclose(row, recorded_score(state, head), atol=1e-4)
    assert s.spread_within < 1e-4 < s.spread_between  # equal along a row, different between offsets
    assert "only m − n matters" in view.verdict.text()


def test_with_added_sinusoids_the_score_depends_on_where_the_tokens_are(qtbot):
    state, view = _view(qtbot)
    s = view.scores
    assert not s.rotary
    at_real_places = view.table.values[s.offsets.index(4), s.starts.index(1)]  # the key at 1, the query at 5
    assert np.isclose(at_real_places, recorded_score(state, 0), atol=1e-4)
    assert s.spread_within > 1e-3  # the same offset scores differently elsewhere
    assert "absolute positions" in view.verdict.text()


def test_the_angle_map_is_m_times_theta_in_turns(qtbot):
    _state, view = _view(qtbot, positional="rope", n_kv_heads=2, norm="rms")
    d_k, m, i = 8, 7, 1
    theta = 10000.0 ** (-2 * i / d_k)
    assert np.isclose(view.angles.values[m, i], (m * theta / (2 * np.pi)) % 1.0, atol=1e-5)


def test_the_score_table_names_every_offset_in_a_low_view(qtbot):
    """The verdict runs under both maps, so the table keeps the height for a label per row."""
    _state, view = _view(qtbot)
    panel = view.parent()
    while not isinstance(panel, PositionalPanel):
        panel = panel.parent()
    panel.resize(760, 470)
    panel.show()
    panel.tabs.setCurrentWidget(panel.pages.holder("rope_view"))
    qtbot.waitExposed(panel)
    rows = len(view.scores.offsets)
    qtbot.waitUntil(lambda: view.table.label_counts()[0] == (rows, rows), timeout=3000)
    assert view.verdict.width() > view.table.width() + view.angles.width()
