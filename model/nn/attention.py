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
from model.nn.positional import rotate_pairs
from model.nn.steps import ATTENTION
from model.nn.weight_layout import joined_product


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


FUSE_ROWS = 128  # tokens (batch × length) from which the projections run as one matrix product


def grouped_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """Eq. 1 for one query position per head (a cached decoding step), each key/value head
    serving its group of query heads without copying it: q (B, h, 1, d_k), k/v (B, kv, T_k, d_k),
    mask (B|1, 1, 1, T_k) → (B, h, 1, d_k). Faster than the fused kernel for a single query."""
    B, h, _, d_k = q.shape
    kv = k.size(1)
    scores = q.view(B, kv, h // kv, d_k) @ k.transpose(-2, -1) / math.sqrt(d_k)  # (B, kv, g, T_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return (scores.softmax(-1) @ v).view(B, h, 1, d_k)


class MultiHeadAttention(nn.Module):
    """MultiHead(Q, K, V) = Concat(head_1..head_h) W^O, head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V).

    `axes` names what the query and key positions index ("src" or "tgt") so a recorded
    trace can be labelled with the right tokens. Its hook sites are `HOOK_SITES`, each with
    the text the step catalogue (model.nn.steps) gives it.

    Later models' options: `kv_heads` < n_heads is grouped-query attention (GQA: each key/value
    head serves n_heads / kv_heads query heads), `bias=False` drops the projections' biases, and
    a forward given `rotary` (cos, sin) rotates q and k by their positions (RoPE).
    """

    STEP_GROUP = "attention"
    JOINED_LINEARS = (("w_q", "w_k", "w_v"),)  # one input, side by side (model.nn.weight_layout)
    HOOK_SITES = tuple(ATTENTION)  # q, k, v, q_rot, k_rot, k_shared, v_shared, scores, …, output

    def __init__(self, d_model: int, n_heads: int, dropout: float = 0.0, axes: tuple[str, str] = ("src", "src"),
                 kv_heads: int | None = None, bias: bool = True):
        super().__init__()
        kv_heads = kv_heads or n_heads
        if d_model % n_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")
        if n_heads % kv_heads:
            raise ValueError(f"n_heads ({n_heads}) must be divisible by kv_heads ({kv_heads})")
        self.n_heads, self.d_k = n_heads, d_model // n_heads
        self.kv_heads, self.groups = kv_heads, n_heads // kv_heads
        self.w_q = nn.Linear(d_model, d_model, bias=bias)
        self.w_k = nn.Linear(d_model, kv_heads * self.d_k, bias=bias)
        self.w_v = nn.Linear(d_model, kv_heads * self.d_k, bias=bias)
        self.w_o = nn.Linear(d_model, d_model, bias=bias)
        self.dropout_p = dropout
        self.dropout = Dropout(dropout)
        self.q_axis, self.k_axis = axes
        self.step_axes = {"q": self.q_axis, "k": self.k_axis}

    def _project(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor):
        """(Q W^Q, K W^K, V W^V, QKV). When the inputs are one tensor (self-attention) or key is
        value (cross-attention), the projections run as one wider matrix product: the same
        numbers and parameters, fewer and larger kernels. Weights laid out side by side
        (`model.nn.weight_layout`) join at any size, and QKV is then self-attention's product
        q | k | v itself (None otherwise); other weights are joined by a copy, worth it only for
        many rows (few rows, a cached decoding step, run them one by one)."""
        if query is key and key is value:
            layers = (self.w_q, self.w_k, self.w_v)
        elif key is value:
            layers = (self.w_k, self.w_v)
        else:
            return self.w_q(query), self.w_k(key), self.w_v(value), None
        sizes = [m.out_features for m in layers]
        product = joined_product(key, layers)
        if product is None:
            if key.numel() < FUSE_ROWS * key.size(-1):
                return self.w_q(query), self.w_k(key), self.w_v(value), None
            weight = torch.cat([m.weight for m in layers])  # (d_q + 2·d_kv | 2·d_kv, d_model)
            bias = torch.cat([m.bias for m in layers]) if self.w_q.bias is not None else None
            product = F.linear(key, weight, bias)
        parts = product.split(sizes, dim=-1)
        return (*parts, product) if len(parts) == 3 else (self.w_q(query), *parts, None)

    def _rotate_together(self, qkv: torch.Tensor, rotary) -> tuple[torch.Tensor, torch.Tensor]:
        """RoPE on q and k in one pass over the joined product q | k | v (B, T, ·): the same
        products as rotating each, half the kernels. Returns them split into heads, (B, h, T, d_k)
        and (B, kv_heads, T, d_k)."""
        cos, sin = rotary
        both = qkv[..., :(self.n_heads + self.kv_heads) * self.d_k].unflatten(-1, (-1, self.d_k))  # (B, T, h + kv, d_k)
        turned = rotate_pairs(both, cos[:, None], sin[:, None])
        return turned[:, :, :self.n_heads].transpose(1, 2), turned[:, :, self.n_heads:].transpose(1, 2)

    def _split(self, x: torch.Tensor, heads: int) -> torch.Tensor:
        B, T, _ = x.shape
        return x.view(B, T, heads, self.d_k).transpose(1, 2)  # (B, heads, T, d_k)

    def forward(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                mask: torch.Tensor | None = None, rotary: tuple[torch.Tensor, torch.Tensor] | None = None,
                cache=None) -> torch.Tensor:
        """query (B, T_q, d_model), key/value (B, T_k, d_model), mask bool (B|1, 1, T_q|1, T_k).

        rotary: (cos, sin), each (T_q, d_k/2), to rotate q and k by their positions (self-attention).
        cache: this layer's key/value cache (`model.inference.kv_cache`): `append(k, v)` returns
        every key and value so far; the mask then covers all of them.
        """
        B, T_q, d_model = query.shape
        q, k, v, qkv = self._project(query, key, value)
        dropout_p = self.dropout_p if self.training else 0.0
        spelled_out = hooked(self)  # recording, head surgery, patching: Eq. 1 spelled out, every step a hook site

        def hook(local: str, tensor: torch.Tensor) -> torch.Tensor:
            return site(self, local, tensor, mask) if spelled_out else tensor

        if qkv is not None and rotary is not None and not spelled_out:
            (q, k), v = self._rotate_together(qkv, rotary), self._split(v, self.kv_heads)
        else:
            q, k, v = self._split(q, self.n_heads), self._split(k, self.kv_heads), self._split(v, self.kv_heads)
            q, k, v = hook("q", q), hook("k", k), hook("v", v)
            if rotary is not None:
                q, k = hook("q_rot", rotate_pairs(q, *rotary)), hook("k_rot", rotate_pairs(k, *rotary))
        if cache is not None:
            k, v = cache.append(k, v)  # (B, kv_heads, T_past + T_k, d_k)
        if spelled_out or (dropout_p > 0 and q.device.type == "cpu"):
            # On the CPU torch's fused kernel falls back to a slower path when it must drop
            # weights; Eq. 1 written out is ~1.5x faster for training there.
            if self.groups > 1:
                k = hook("k_shared", k.repeat_interleave(self.groups, dim=1))  # (B, h, T_k, d_k)
                v = hook("v_shared", v.repeat_interleave(self.groups, dim=1))
            ctx, _ = attention(q, k, v, mask, self.dropout, hook if spelled_out else None)
        elif T_q == 1 and dropout_p == 0:
            ctx = grouped_attention(q, k, v, mask)
        else:  # torch's fused kernel: no hook needs the weights
            ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p,
                                                 enable_gqa=self.groups > 1)
        concat = site(self, "concat", ctx.transpose(1, 2).reshape(B, T_q, d_model))  # (B, T_q, h*d_k)
        return site(self, "output", self.w_o(concat))  # (B, T_q, d_model)
