"""The KV-cache panel: at step t its maps hold exactly the keys and values a forward over
positions 0 … t alone computes (what a cache would hold), the attention row is that prefix's
last query, and the memory text is this model's real bytes, with GQA's saving against full
multi-head attention."""
import numpy as np
import pytest
import torch

from explorer.panels.kvcache.panel import KVCachePanel
from explorer.runner import Runner
from explorer.state import SessionState
from model.inference.kv_cache import human
from model.io.checkpoints import bundled_checkpoints, random_bundle
from model.nn.hooks import record


@pytest.fixture(scope="module")
def gqa():
    """A small decoder-only model with rotary positions and 4 query heads sharing 2 KV heads."""
    torch.manual_seed(0)
    return random_bundle("reverse", kind="decoder_only", n_encoder_layers=0, n_decoder_layers=2, d_model=32,
                         n_heads=4, n_kv_heads=2, positional="rope", norm="rms", dropout=0.0)


def _panel(qtbot, bundle, text):
    state = SessionState()
    panel = KVCachePanel(state)
    qtbot.addWidget(panel)
    panel.resize(1100, 650)
    panel.show()
    runner = Runner(state, synchronous=True)
    runner.set_bundle(bundle, then_run=text)
    runner.wait()
    return state, panel


def _prefix_forward(bundle, seq: list[int], layer: int):
    """Keys (as cached: rotated), values and attention of one forward over `seq` alone."""
    with torch.no_grad(), record(bundle.model) as trace:
        bundle.model(None, torch.tensor([seq]))
    base = f"decoder.layers.{layer}.self_attn."
    k = trace[base + ("k_rot" if bundle.config.positional == "rope" else "k")].tensor[0]
    return k, trace[base + "v"].tensor[0], trace.attention("decoder_self", layer)[0]


def test_step_t_shows_what_a_forward_over_the_prefix_alone_caches(qtbot, gqa):
    state, panel = _panel(qtbot, gqa, "abcd")
    tok = gqa.tgt_tokenizer
    seq = [tok.bos_id] + state.result.source.ids + tok.encode(state.result.output_text).ids  # <bos> prompt output
    assert len(seq) == len(panel.pieces)
    panel.layer.setValue(2)  # layers counted from 1
    panel.kv_head.setValue(2)  # heads counted from 1: the second KV head (index 1)
    t = 3
    panel.step.setValue(t)
    k, v, w = _prefix_forward(gqa, seq[: t + 1], layer=1)
    keys = panel.keys.values
    assert np.allclose(keys[: t + 1], k[1].numpy(), atol=1e-5)  # every cached row, the newest one too
    assert np.allclose(panel.values.values[: t + 1], v[1].numpy(), atol=1e-5)
    assert panel.keys.allowed[: t + 1].all() and not panel.keys.allowed[t + 1:].any()  # the rest not cached yet
    assert panel.reads.row_labels == ["q head 3", "q head 4"]  # the query heads (indices 2, 3) sharing it
    assert np.allclose(panel.reads.values[:, : t + 1], w[2:4, t].numpy(), atol=1e-5)
    assert np.allclose(panel.reads.values[:, : t + 1].sum(1), 1.0, atol=1e-5)
    panel.step.setValue(t + 1)
    assert panel.keys.allowed[: t + 2].all()  # one more row: the cache grew by the new token


def test_generation_steps_count_from_1_at_the_prompts_last_position(qtbot, gqa):
    """The prompt's last query is the first generation step; positions keep counting from 0."""
    state, panel = _panel(qtbot, gqa, "abcd")
    n = panel.n_prompt
    assert n == len(state.result.source.ids)  # position n: the prompt's last token (<bos> at 0)
    panel.step.setValue(0)
    assert panel.reading.text().startswith("pos 0, “<bos>” (prompt)")
    panel.step.setValue(n)
    assert panel.reading.text().startswith(f"Generation step 1: pos {n}, ")
    panel.step.setValue(n + 1)
    assert panel.reading.text().startswith(f"Generation step 2: pos {n + 1}, ")
    assert f"reads the {n + 2} cached keys" in panel.reading.text()


def test_the_memory_text_is_this_models_bytes_and_gqas_saving(qtbot, gqa):
    _state, panel = _panel(qtbot, gqa, "abcd")
    c = gqa.config
    per_token = 2 * c.n_decoder_layers * 2 * (c.d_model // c.n_heads) * 4  # K and V, layers, KV heads, d_k, float32
    full = per_token * c.n_heads // 2
    panel.step.setValue(4)
    text = panel.memory.text()
    assert human(per_token) in text and human(5 * per_token) in text and human(full) in text
    assert f"{1 - 2 / c.n_heads:.0%}" in text and "GQA" in text


def test_gpt_facts_says_it_has_no_gqa(qtbot):
    from model.io.checkpoints import load_checkpoint
    bundle = load_checkpoint(bundled_checkpoints()["gpt-facts"])
    _state, panel = _panel(qtbot, bundle, "the frog lives in the")
    assert "No GQA" in panel.memory.text() and "no GQA" in panel.note.text()
    assert panel.kv_head.maximum() == bundle.config.n_heads  # a key/value head per query head
    assert len(panel.reads.row_labels) == 1


def test_an_encoder_decoder_model_is_told_what_a_cache_needs(qtbot):
    torch.manual_seed(0)
    _state, panel = _panel(qtbot, random_bundle("reverse", d_model=32, n_heads=4, dropout=0.0), "abc")
    assert "not a decoder-only model" in panel.note.text() and not panel.step.isEnabled()


def test_the_maps_are_what_a_real_kv_cache_holds_fed_one_token_at_a_time(qtbot, gqa):
    """model.inference.kv_cache.KVCache, filled by cached decoding a token per step, holds exactly
    the rows the panel draws (keys rotated, as cached)."""
    from model.inference.kv_cache import KVCache
    state, panel = _panel(qtbot, gqa, "abcd")
    tok = gqa.tgt_tokenizer
    seq = [tok.bos_id] + state.result.source.ids + tok.encode(state.result.output_text).ids
    cache = KVCache(gqa.model)
    with torch.no_grad():
        for i in seq:
            gqa.model.decode(None, None, torch.tensor([[i]]), cache=cache)
    panel.layer.setValue(1)
    panel.kv_head.setValue(1)  # the first KV head
    panel.step.setValue(len(seq) - 1)
    layer = cache.layer(0)
    assert layer.keys.shape[2] == len(seq) == panel.keys.values.shape[0]
    assert np.allclose(panel.keys.values, layer.keys[0, 0].numpy(), atol=1e-5)
    assert np.allclose(panel.values.values, layer.values[0, 0].numpy(), atol=1e-5)
    per_token = cache.nbytes() // len(seq)
    assert human(per_token) in panel.memory.text()  # the bytes the real cache takes per token


def test_k_and_v_are_shown_one_at_a_time_each_with_its_title_and_ticks_whole(qtbot, gqa):
    """K and V share the maps' place as two tabs: the one chosen is shown, its title not cut and
    its tick labels readable (or their omission counted)."""
    from PySide6.QtWidgets import QApplication

    from layout_checks import cramped_titles, unreadable_ticks
    _state, panel = _panel(qtbot, gqa, "abcd")
    panel.resize(1024, 700)
    for shown, hidden in ((panel.values, panel.keys), (panel.keys, panel.values)):
        panel.maps.setCurrentWidget(shown)
        for _ in range(3):
            QApplication.processEvents()
        assert shown.isVisible() and not hidden.isVisible()
        assert cramped_titles(panel) == [] and unreadable_ticks(panel) == []


def test_the_bytes_are_shown_whole_and_k_is_as_wide_as_the_reads_beside_it(qtbot, gqa):
    """The memory text is never cut (no scrolling column beside the map) and the K map takes at
    least the width the query heads' reads beside it take."""
    from PySide6.QtWidgets import QApplication

    from layout_checks import clipped_texts
    _state, panel = _panel(qtbot, gqa, "abcdefgh")
    for size in ((1024, 600), (1280, 560)):
        panel.resize(*size)
        for _ in range(3):
            QApplication.processEvents()
        assert panel.memory.isVisible() and clipped_texts(panel) == []
        assert panel.maps.width() >= panel.reads.width()


def test_every_cached_rows_label_is_drawn_and_the_reads_ticks_are_whole(qtbot):
    """K takes the page's height: each position's label ("i token") is drawn, none strided away, and
    the reads' ticks (positions, colour bar) stay readable."""
    from PySide6.QtWidgets import QApplication

    from layout_checks import unreadable_ticks
    from model.io.checkpoints import load_checkpoint
    bundle = load_checkpoint(bundled_checkpoints()["gpt-facts"])
    _state, panel = _panel(qtbot, bundle, "the frog lives in the")
    for size in ((1024, 560), (1280, 500)):
        panel.resize(*size)
        for _ in range(3):
            QApplication.processEvents()
        rows = len(panel.keys.row_labels)
        assert rows == len(panel.pieces) > 8
        assert panel.keys.label_counts()[0] == (rows, rows)
        assert unreadable_ticks(panel) == []
