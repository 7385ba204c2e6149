"""Scaled dot-product attention (Eq. 1) and multi-head attention (Section 3.2.2)."""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from model.nn.dropout import Dropout
from model.nn.head_edits import edit_context, edit_weights, plan_for
from model.nn.hooks import current_trace, emit


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None,
              dropout: nn.Module | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Eq. 1: softmax(QKᵀ/√d_k) V, as a pure function returning (output, weights).

    mask: boolean, broadcastable to (..., T_q, T_k); True where a query may attend a key.
    """
    d_k = q.size(-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (B, h, T_q, T_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(dim=-1)  # (B, h, T_q, T_k)
    if dropout is not None:
        weights = dropout(weights)
    return weights @ v, weights  # (B, h, T_q, d_k), (B, h, T_q, T_k)


class MultiHeadAttention(nn.Module):
    """MultiHead(Q, K, V) = Concat(head_1..head_h) W^O, head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V).

    `axes` names what the query and key positions index ("src" or "tgt") so a recorded
    trace can be labelled with the right tokens.
    """

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
        q, k, v = self._project(query, key, value)
        q, k, v = self._split(q), self._split(k), self._split(v)  # (B, h, T, d_k) each
        plan = plan_for(self)  # head surgery (model.interpret.interventions); None almost always
        if current_trace() is None:
            dropout_p = self.dropout_p if self.training else 0.0
            if dropout_p > 0 and q.device.type == "cpu":
                # On the CPU torch's fused kernel falls back to a slower path when it must drop
                # weights; Eq. 1 written out is ~1.5x faster for training there.
                ctx, _ = attention(q, k, v, mask, self.dropout)
            else:
                # Fast path: torch's fused kernel; nothing is recorded so nothing needs the weights.
                ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p)
            if plan is not None:
                ctx = edit_context(plan, ctx, v, mask, self.q_axis == "tgt", weights_edited=False)
        else:
            ctx = self._recorded(q, k, v, mask, plan)
        concat = ctx.transpose(1, 2).reshape(B, T_q, d_model)  # (B, T_q, h*d_k)
        out = self.w_o(concat)  # (B, T_q, d_model)
        if current_trace() is not None:
            qa = self.q_axis
            emit(self, "concat", concat, "Concat(head₁, …, head_h)",
                 "The heads' outputs side by side again: h × d_k = d_model numbers per token.", ("batch", qa, "d_model"))
            emit(self, "output", out, "MultiHead = Concat(heads) Wᴼ",
                 "The output projection Wᴼ mixes what the heads found into one vector per token.", ("batch", qa, "d_model"))
        return out

    def _recorded(self, q, k, v, mask, plan=None) -> torch.Tensor:
        """The same computation step by step, emitting every intermediate (Eq. 1 spelled out)."""
        qa, ka = self.q_axis, self.k_axis
        head = ("batch", "head")
        emit(self, "q", q, "Q_i = X W_i^Q", "Queries: what each token is looking for, one d_k vector per head.", head + (qa, "d_k"))
        emit(self, "k", k, "K_i = X W_i^K", "Keys: what each token offers to be found by, per head.", head + (ka, "d_k"))
        emit(self, "v", v, "V_i = X W_i^V", "Values: what each token passes on when attended to, per head.", head + (ka, "d_k"))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)  # (B, h, T_q, T_k)
        emit(self, "scores", scores, "Q Kᵀ / √d_k",
             "How well each query matches each key, scaled by √d_k so the softmax does not saturate.", head + (qa, ka))
        if mask is not None:
            full = mask.expand(q.size(0), 1, q.size(2), k.size(2))[:, 0]  # (B, T_q, T_k)
            emit(self, "mask", full, "mask (1 = may attend, 0 = blocked)",
                 "Which keys each query is allowed to see: padding and (in the decoder) the future are blocked.",
                 ("batch", qa, ka))
            scores = scores.masked_fill(~mask, float("-inf"))
            emit(self, "masked_scores", scores, "Q Kᵀ / √d_k + mask (−∞ where blocked)",
                 "Blocked positions get −∞, so the softmax gives them exactly zero weight.", head + (qa, ka))
        weights = scores.softmax(dim=-1)  # (B, h, T_q, T_k)
        if plan is not None:
            weights = edit_weights(plan, weights, mask)  # uniform heads: 1/T_k over the allowed keys
        emit(self, "weights", weights, "softmax(Q Kᵀ / √d_k + mask)",
             "Attention weights: each row sums to 1 and says how much each query takes from each key.", head + (qa, ka))
        ctx = self.dropout(weights) @ v  # (B, h, T_q, d_k)
        if plan is not None:
            ctx = edit_context(plan, ctx, v, mask, self.q_axis == "tgt", weights_edited=True)
        emit(self, "context", ctx, "head_i = softmax(…) V_i",
             "Each head's output: the weighted average of the values.", head + (qa, "d_k"))
        return ctx
