"""Long inputs' attention maps are summed over blocks where the frame is computed (off the GUI
thread): each level's sums and counts against plain loops and torch's own pooling."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import math  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from model.interpret.map_sums import LEVELS, attention_sums, block_sums, pick_level, sum_levels  # noqa: E402


def _maps(t: int, masked: bool, seed: int = 0):
    rng = np.random.default_rng(seed)
    allowed = np.tril(np.ones((t, t), bool)) if masked else np.ones((t, t), bool)
    w = np.where(allowed, rng.random((2, 3, t, t)), 0.0).astype(np.float32)
    return w / w.sum(-1, keepdims=True), allowed


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


@pytest.mark.parametrize("factor", [1, 2, 3, 5, 7])
@pytest.mark.parametrize("shape", [(3, 10, 10), (2, 9, 14), (1, 7, 5)])
def test_block_sums_match_avg_pool2d_times_block_area(shape, factor):
    """The hand-rolled block sums against torch's own pooling (ceil mode: edge blocks partial)."""
    import torch.nn.functional as F
    x = torch.rand(*shape)
    got = block_sums(x, factor)
    mean = F.avg_pool2d(x[:, None], factor, factor, ceil_mode=True)[:, 0]
    area = F.avg_pool2d(torch.ones(1, 1, *shape[1:]), factor, factor, ceil_mode=True, divisor_override=1)[0, 0]
    assert got.shape == mean.shape
    torch.testing.assert_close(got, mean * area, rtol=1e-5, atol=1e-5)
