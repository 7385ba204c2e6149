"""Checks shared by the tests that compare two ways of computing one frame (pytest puts tests/ on
sys.path, so `from frame_checks import …`): every recorded step, decoding step and parallel-pass
row the panels draw, the same up to float rounding."""
from __future__ import annotations

import torch

CLOSE = dict(atol=1e-4, rtol=1e-3)  # float32 sums in another order, never another meaning


def assert_same_trace(ours, full) -> None:
    """Two traces with the same steps in the same order, shapes, axes and texts, and the same numbers."""
    assert ours.names() == full.names()
    for a, b in zip(ours, full):
        assert (a.shape, a.axes, a.formula, a.description) == (b.shape, b.axes, b.formula, b.description), a.name
        assert a.tensor.dtype == b.tensor.dtype and a.tensor.device.type == "cpu", a.name
        if a.tensor.is_floating_point():
            torch.testing.assert_close(a.tensor, b.tensor, **CLOSE, msg=a.name)
        else:
            assert torch.equal(a.tensor, b.tensor), a.name


def assert_same_forward(ours, full) -> None:
    """Two `ForwardResult`s: labels, output and recorded steps."""
    assert (ours.tgt_pieces, ours.out_pieces, ours.n_prompt) == (full.tgt_pieces, full.out_pieces, full.n_prompt)
    assert ours.output_text == full.output_text
    assert_same_trace(ours.trace, full.trace)


def assert_same_run(ours, full) -> None:
    """Two `DecodeRun`s: the tokens, each step's prefix, mask, distribution, top tokens and
    attention, and the masked parallel pass."""
    assert ours.output_ids == full.output_ids and ours.text == full.text and ours.n_prompt == full.n_prompt
    assert len(ours.steps) == len(full.steps)
    for a, b in zip(ours.steps, full.steps):
        assert (a.t, a.prefix, a.chosen) == (b.t, b.prefix, b.chosen) and torch.equal(a.mask, b.mask)
        torch.testing.assert_close(a.model_probs, b.model_probs, **CLOSE)
        torch.testing.assert_close(a.probs, b.probs, **CLOSE)
        top, other = a.model_probs.topk(5), b.model_probs.topk(5)  # what the top-token bars show
        assert top.indices[0] == other.indices[0]
        torch.testing.assert_close(top.values, other.values, **CLOSE)
        torch.testing.assert_close(a.self_attention, b.self_attention, **CLOSE)
    m, n = ours.masked, full.masked
    assert (m.tgt_in, m.causal, m.predicted) == (n.tgt_in, n.causal, n.predicted) and torch.equal(m.mask, n.mask)
    torch.testing.assert_close(m.probs, n.probs, **CLOSE)
    torch.testing.assert_close(m.self_attention, n.self_attention, **CLOSE)
