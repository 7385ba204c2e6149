"""Eq. 1 and multi-head attention checked against independent references: a hand-written
softmax and torch.nn.MultiheadAttention carrying the same weights."""
import math

import pytest
import torch
from torch import nn

from model import record
from model.nn.attention import MultiHeadAttention, attention

D_MODEL, N_HEADS = 32, 4


def reference_attention(q, k, v, mask=None):
    """softmax(QKᵀ/√d_k) V with explicit loops over batch and head, in float64."""
    q, k, v = q.double(), k.double(), v.double()
    B, h, T_q, d_k = q.shape
    out = torch.zeros(B, h, T_q, v.size(-1), dtype=torch.float64)
    weights = torch.zeros(B, h, T_q, k.size(2), dtype=torch.float64)
    for b in range(B):
        for i in range(h):
            s = q[b, i] @ k[b, i].T / math.sqrt(d_k)  # (T_q, T_k)
            if mask is not None:
                allowed = mask.expand(B, h, T_q, k.size(2))[b, i]
                s = torch.where(allowed, s, torch.tensor(float("-inf"), dtype=torch.float64))
            e = torch.exp(s - s.max(dim=-1, keepdim=True).values)
            w = e / e.sum(dim=-1, keepdim=True)
            weights[b, i] = w
            out[b, i] = w @ v[b, i]
    return out, weights


def test_attention_function_matches_handwritten_softmax():
    torch.manual_seed(0)
    q, k, v = torch.randn(2, 3, 5, 8), torch.randn(2, 3, 7, 8), torch.randn(2, 3, 7, 8)
    mask = torch.rand(2, 1, 5, 7) > 0.4
    mask[..., 0] = True  # every query may see at least one key
    for m in (None, mask):
        out, weights = attention(q, k, v, m)
        ref_out, ref_weights = reference_attention(q, k, v, m)
        torch.testing.assert_close(out.double(), ref_out, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(weights.double(), ref_weights, atol=1e-6, rtol=1e-5)
    assert torch.all(weights.masked_select(~mask.expand_as(weights)) == 0)


def test_attention_scaling_by_sqrt_dk_matters():
    """Without the 1/√d_k factor the weights would be sharper: check we really scale."""
    torch.manual_seed(1)
    q, k, v = torch.randn(1, 1, 4, 64), torch.randn(1, 1, 4, 64), torch.randn(1, 1, 4, 64)
    _, weights = attention(q, k, v)
    unscaled = (q @ k.transpose(-2, -1)).softmax(-1)
    scaled = (q @ k.transpose(-2, -1) / 8.0).softmax(-1)
    torch.testing.assert_close(weights, scaled)
    assert not torch.allclose(weights, unscaled, atol=1e-3)


def torch_mha_like(mha: MultiHeadAttention) -> nn.MultiheadAttention:
    """An nn.MultiheadAttention holding the same W^Q, W^K, W^V (as in_proj) and W^O (as out_proj)."""
    ref = nn.MultiheadAttention(D_MODEL, N_HEADS, dropout=0.0, batch_first=True)
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([mha.w_q.weight, mha.w_k.weight, mha.w_v.weight]))
        ref.in_proj_bias.copy_(torch.cat([mha.w_q.bias, mha.w_k.bias, mha.w_v.bias]))
        ref.out_proj.weight.copy_(mha.w_o.weight)
        ref.out_proj.bias.copy_(mha.w_o.bias)
    return ref.eval()


def make_inputs(mask_kind: str, cross: bool):
    """query, key (= value), our boolean mask (True = may attend) and torch's masks (True = blocked)."""
    g = torch.Generator().manual_seed(3)
    B, T_q = 3, 6
    T_k = 9 if cross else T_q
    query = torch.randn(B, T_q, D_MODEL, generator=g)
    key = torch.randn(B, T_k, D_MODEL, generator=g) if cross else query
    lengths = torch.tensor([T_k, T_k - 2, T_k - 4])
    keep = torch.arange(T_k)[None, :] < lengths[:, None]  # (B, T_k) True on real tokens
    causal = torch.ones(T_q, T_k, dtype=torch.bool).tril()  # (T_q, T_k)
    ours = None
    key_padding_mask = attn_mask = None
    if mask_kind in ("padding", "both"):
        ours = keep[:, None, None, :]  # (B, 1, 1, T_k)
        key_padding_mask = ~keep
    if mask_kind in ("causal", "both"):
        c = causal[None, None]  # (1, 1, T_q, T_k)
        ours = c if ours is None else ours & c
        attn_mask = ~causal
    return query, key, ours, key_padding_mask, attn_mask


@pytest.mark.parametrize("cross", [False, True], ids=["self", "cross"])
@pytest.mark.parametrize("mask_kind", ["none", "padding", "causal", "both"])
@pytest.mark.parametrize("recorded", [False, True], ids=["sdpa", "recorded"])
def test_multihead_attention_matches_torch(mask_kind, cross, recorded):
    torch.manual_seed(0)
    mha = MultiHeadAttention(D_MODEL, N_HEADS, dropout=0.0).eval()
    ref = torch_mha_like(mha)
    query, key, mask, key_padding_mask, attn_mask = make_inputs(mask_kind, cross)
    with torch.no_grad():
        expected, expected_weights = ref(query, key, key, key_padding_mask=key_padding_mask,
                                         attn_mask=attn_mask, need_weights=True, average_attn_weights=False)
        if recorded:
            with record(mha) as trace:
                out = mha(query, key, key, mask)
        else:
            out = mha(query, key, key, mask)
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-5)
    if recorded:
        assert trace["weights"].shape == (3, N_HEADS, query.size(1), key.size(1))
        torch.testing.assert_close(trace["weights"].tensor, expected_weights, atol=1e-6, rtol=1e-5)
        torch.testing.assert_close(trace["output"].tensor, expected, atol=1e-5, rtol=1e-5)
        assert ("mask" in trace) == (mask is not None)


def test_recorded_mask_step_is_expanded_to_queries_by_keys():
    torch.manual_seed(0)
    mha = MultiHeadAttention(D_MODEL, N_HEADS).eval()
    query, key, mask, _, _ = make_inputs("padding", cross=True)
    with torch.no_grad(), record(mha) as trace:
        mha(query, key, key, mask)
    step = trace["mask"]
    assert step.shape == (3, 6, 9) and step.tensor.dtype == torch.bool
    assert step.axes == ("batch", "src", "src")
    assert torch.equal(step.tensor, mask[:, 0].expand(3, 6, 9))
    # blocked positions really are -inf before the softmax and 0 after it
    blocked = ~step.tensor[:, None]  # (B, 1, T_q, T_k)
    assert torch.all(trace["masked_scores"].tensor.masked_select(blocked.expand(3, N_HEADS, 6, 9)) == float("-inf"))
    assert torch.all(trace["weights"].tensor.masked_select(blocked.expand(3, N_HEADS, 6, 9)) == 0)


def test_gradients_flow_through_both_paths_equally():
    """Training uses the fused path; its gradients must equal those of the spelled-out path."""
    torch.manual_seed(0)
    mha = MultiHeadAttention(D_MODEL, N_HEADS, dropout=0.0)
    query, key, mask, _, _ = make_inputs("both", cross=False)
    grads = []
    for recorded in (False, True):
        mha.zero_grad()
        if recorded:
            with record(mha):
                mha(query, key, key, mask).square().sum().backward()
        else:
            mha(query, key, key, mask).square().sum().backward()
        grads.append(mha.w_q.weight.grad.clone())
    assert grads[0].abs().sum() > 0
    torch.testing.assert_close(grads[0], grads[1], atol=1e-5, rtol=1e-4)


def test_indivisible_heads_rejected():
    with pytest.raises(ValueError, match="divisible"):
        MultiHeadAttention(30, 4)


def test_a_cell_is_read_out_with_its_tokens_and_a_masked_one_says_why_it_is_zero():
    from types import SimpleNamespace

    import numpy as np

    from model.interpret.attention_maps import cell_text, head_label

    values = np.array([[1.0, 0.0], [0.25, 0.75]], dtype=np.float32)
    m = SimpleNamespace(values=values, allowed=np.array([[True, False], [True, True]]),
                        row_labels=["a", "b"], col_labels=["x", "y"])
    assert cell_text(m, 1, 1) == "weight 0.7500 · query 1 “b” → key 1 “y”"
    assert cell_text(m, 1, 0, "mean", 2, " · more") == "mean 0.25 · query 1 “b” → key 0 “x” · more"
    assert "blocked by the mask" in cell_text(m, 0, 1) and "0.0000" not in cell_text(m, 0, 1)
    assert head_label(1, 2) == "L2 H3"
