"""Scaled dot-product attention (Eq. 1) and multi-head attention (Section 3.2.2).

The forward is written once: Eq. 1 spelled out (`attention`) whenever a hook is set on one of
its sites (model.nn.hooks), torch's fused kernel otherwise."""
from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from model.nn.dropout import Dropout
from model.nn.hooks import hooked, site
from model.nn.steps import ATTENTION


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None,
              dropout: nn.Module | None = None,
              hook: Callable[[str, torch.Tensor], torch.Tensor] | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Eq. 1: softmax(QKᵀ/√d_k) V, as a pure function returning (output, weights).

    mask: boolean, broadcastable to (..., T_q, T_k); True where a query may attend a key.
    hook: called as hook(name, tensor) on each intermediate ("scores", "mask", "masked_scores",
    "weights", "context"), which goes on with what it returns (`MultiHeadAttention` passes its
    hook sites).
    """
    d_k = q.size(-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (B, h, T_q, T_k)
    if hook is not None:
        scores = hook("scores", scores)
    if mask is not None:
        if hook is not None:
            mask = hook("mask", mask.expand(q.size(0), 1, q.size(2), k.size(2))[:, 0])[:, None]  # (B, 1, T_q, T_k)
        scores = scores.masked_fill(~mask, float("-inf"))
        if hook is not None:
            scores = hook("masked_scores", scores)
    weights = scores.softmax(dim=-1)  # (B, h, T_q, T_k)
    if hook is not None:
        weights = hook("weights", weights)
    if dropout is not None:
        weights = dropout(weights)
    out = weights @ v  # (B, h, T_q, d_k)
    if hook is not None:
        out = hook("context", out)
    return out, weights


class MultiHeadAttention(nn.Module):
    """MultiHead(Q, K, V) = Concat(head_1..head_h) W^O, head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V).

    `axes` names what the query and key positions index ("src" or "tgt") so a recorded
    trace can be labelled with the right tokens. Its hook sites are `HOOK_SITES`, each with
    the text the step catalogue (model.nn.steps) gives it.
    """

    STEP_GROUP = "attention"
    HOOK_SITES = tuple(ATTENTION)  # q, k, v, scores, mask, masked_scores, weights, context, concat, output

    def __init__(self, d_model: int, n_heads: int, dropout: float = 0.0, axes: tuple[str, str] = ("src", "src")):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")
        self.n_heads, self.d_k = n_heads, d_model // n_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.dropout_p = dropout
        self.dropout = Dropout(dropout)
        self.q_axis, self.k_axis = axes
        self.step_axes = {"q": self.q_axis, "k": self.k_axis}

    def _project(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor):
        """Q W^Q, K W^K, V W^V. When the inputs are one tensor (self-attention) or key is value
        (cross-attention), the projections run as one wider matrix product: the same numbers
        and parameters, fewer and larger kernels."""
        if query is key and key is value:
            layers = (self.w_q, self.w_k, self.w_v)
            weight = torch.cat([m.weight for m in layers])  # (3·d_model, d_model)
            bias = torch.cat([m.bias for m in layers])
            return F.linear(query, weight, bias).chunk(3, dim=-1)  # 3 × (B, T, d_model)
        if key is value:
            weight = torch.cat([self.w_k.weight, self.w_v.weight])  # (2·d_model, d_model)
            bias = torch.cat([self.w_k.bias, self.w_v.bias])
            k, v = F.linear(key, weight, bias).chunk(2, dim=-1)
            return self.w_q(query), k, v
        return self.w_q(query), self.w_k(key), self.w_v(value)

    def _split(self, x: torch.Tensor) -> torch.Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.n_heads, self.d_k).transpose(1, 2)  # (B, h, T, d_k)

    def forward(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                mask: torch.Tensor | None = None) -> torch.Tensor:
        """query (B, T_q, d_model), key/value (B, T_k, d_model), mask bool (B|1, 1, T_q|1, T_k)."""
        B, T_q, d_model = query.shape
        q, k, v = (self._split(x) for x in self._project(query, key, value))  # (B, h, T, d_k) each
        dropout_p = self.dropout_p if self.training else 0.0
        if hooked(self):  # recording, head surgery, patching: Eq. 1 spelled out, every step a hook site
            def hook(local: str, tensor: torch.Tensor) -> torch.Tensor:
                return site(self, local, tensor, mask)

            q, k, v = hook("q", q), hook("k", k), hook("v", v)
            ctx, _ = attention(q, k, v, mask, self.dropout, hook)
        elif dropout_p > 0 and q.device.type == "cpu":
            # On the CPU torch's fused kernel falls back to a slower path when it must drop
            # weights; Eq. 1 written out is ~1.5x faster for training there.
            ctx, _ = attention(q, k, v, mask, self.dropout)
        else:  # torch's fused kernel: no hook needs the weights
            ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p)
        concat = site(self, "concat", ctx.transpose(1, 2).reshape(B, T_q, d_model))  # (B, T_q, h*d_k)
        return site(self, "output", self.w_o(concat))  # (B, T_q, d_model)
