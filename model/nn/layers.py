"""Encoder and decoder layers (Section 3.1): sublayers wrapped in residual + LayerNorm."""
from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from model.nn.attention import MultiHeadAttention
from model.nn.config import TransformerConfig
from model.nn.dropout import Dropout
from model.nn.hooks import site
from model.nn.weight_layout import joined_linear

# The FFN's non-linearity. Eq. 2 uses ReLU; BERT uses GELU (Hendrycks & Gimpel 2016, the exact
# erf form, as torch's default), Marian/opus-mt uses swish = x·sigmoid(x) (torch's SiLU).
# SwiGLU (Shazeer 2020; Llama) gates with swish too: swish(x W1) ⊙ (x W3).
FFN_ACTIVATIONS = {"relu": torch.relu, "gelu": nn.functional.gelu, "swish": nn.functional.silu,
                   "swiglu": nn.functional.silu}


class FeedForward(nn.Module):
    """Eq. 2: FFN(x) = max(0, x W1 + b1) W2 + b2, applied to each position separately.

    `activation` swaps max(0, ·) for a later model's GELU or swish (config.activation);
    "swiglu" is Llama's gated form (swish(x W1) ⊙ x W3) W2 with a third matrix W3 ("up"; W1 is
    the "gate", W2 the "down" projection).
    """

    STEP_GROUP = "ffn"
    HOOK_SITES = ("gate", "up", "hidden", "output")
    JOINED_LINEARS = (("w_1", "w_3"),)  # SwiGLU's gate and up read one input (model.nn.weight_layout)

    def __init__(self, d_model: int, d_ff: int, dropout: float, axis: str, activation: str = "relu",
                 bias: bool = True):
        super().__init__()
        self.w_1 = nn.Linear(d_model, d_ff, bias=bias)
        self.w_2 = nn.Linear(d_ff, d_model, bias=bias)
        self.w_3 = nn.Linear(d_model, d_ff, bias=bias) if activation == "swiglu" else None
        self.dropout = Dropout(dropout)
        self.axis = axis
        self.step_axes = {"t": axis}
        self.activation = activation
        self.act = FFN_ACTIVATIONS[activation]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.w_3 is None:
            hidden = site(self, "hidden", self.act(self.w_1(x)))  # (B, T, d_ff)
        else:
            w1x, w3x = joined_linear(x, (self.w_1, self.w_3)) or (self.w_1(x), self.w_3(x))
            gate = site(self, "gate", self.act(w1x))  # (B, T, d_ff)
            hidden = site(self, "hidden", gate * site(self, "up", w3x))
        return site(self, "output", self.w_2(self.dropout(hidden)))  # (B, T, d_model)


def make_norm(cfg: TransformerConfig) -> nn.Module:
    """The configured normalisation over d_model: the paper's LayerNorm or Llama's RMSNorm."""
    if cfg.norm == "rms":
        return nn.RMSNorm(cfg.d_model, eps=cfg.layer_norm_eps)
    return nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps)


class AddNorm(nn.Module):
    """'Add & Norm': post-LN LayerNorm(x + Dropout(Sublayer(x))) as in the paper, or
    pre-LN x + Dropout(Sublayer(LayerNorm(x))) when `norm_first`."""

    STEP_GROUP = "add_norm"
    HOOK_SITES = ("norm", "residual")

    def __init__(self, d_model: int, dropout: float, norm_first: bool, eps: float, axis: str,
                 norm: nn.Module | None = None):
        super().__init__()
        self.norm = norm if norm is not None else nn.LayerNorm(d_model, eps=eps)
        self.dropout = Dropout(dropout)
        self.norm_first = norm_first
        self.axis = axis
        self.step_axes = {"t": axis}

    def forward(self, x: torch.Tensor, sublayer: Callable[[torch.Tensor], torch.Tensor]) -> torch.Tensor:
        if self.norm_first:
            normed = site(self, "norm", self.norm(x))
            return site(self, "residual", x + self.dropout(sublayer(normed)))
        summed = site(self, "residual", x + self.dropout(sublayer(x)))
        return site(self, "norm", self.norm(summed))


def _attention(cfg: TransformerConfig, axes: tuple[str, str]) -> MultiHeadAttention:
    return MultiHeadAttention(cfg.d_model, cfg.n_heads, cfg.dropout, axes=axes, kv_heads=cfg.kv_heads, bias=cfg.bias)


def _add_norm(cfg: TransformerConfig, axis: str) -> AddNorm:
    return AddNorm(cfg.d_model, cfg.dropout, cfg.norm_first, cfg.layer_norm_eps, axis, make_norm(cfg))


def _ffn(cfg: TransformerConfig, axis: str) -> FeedForward:
    return FeedForward(cfg.d_model, cfg.d_ff, cfg.dropout, axis, cfg.activation, cfg.bias)


Rotary = tuple[torch.Tensor, torch.Tensor] | None  # (cos, sin) of the positions, for RoPE self-attention


class EncoderLayer(nn.Module):
    """Self-attention then feed-forward, each inside Add & Norm."""

    def __init__(self, cfg: TransformerConfig, axis: str = "src"):
        super().__init__()
        self.self_attn = _attention(cfg, (axis, axis))
        self.add_norm1 = _add_norm(cfg, axis)
        self.ffn = _ffn(cfg, axis) if cfg.d_ff else None  # d_ff = 0: attention only
        self.add_norm2 = _add_norm(cfg, axis) if cfg.d_ff else None

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None, rotary: Rotary = None) -> torch.Tensor:
        x = self.add_norm1(x, lambda y: self.self_attn(y, y, y, mask, rotary))
        return x if self.ffn is None else self.add_norm2(x, self.ffn)


class DecoderLayer(nn.Module):
    """Masked self-attention, encoder-decoder (cross) attention, feed-forward (Section 3.1).

    With `cross_attention=False` the same layer serves a decoder-only (GPT-like) model.
    """

    def __init__(self, cfg: TransformerConfig, cross_attention: bool = True):
        super().__init__()
        self.self_attn = _attention(cfg, ("tgt", "tgt"))
        self.add_norm1 = _add_norm(cfg, "tgt")
        if cross_attention:
            self.cross_attn = _attention(cfg, ("tgt", "src"))
            self.add_norm2 = _add_norm(cfg, "tgt")
        else:
            self.cross_attn = None
        # d_ff = 0: no feed-forward sublayer at all (an attention-only model)
        self.ffn = _ffn(cfg, "tgt") if cfg.d_ff else None
        self.add_norm3 = _add_norm(cfg, "tgt") if cfg.d_ff else None

    def forward(self, x: torch.Tensor, memory: torch.Tensor | None, src_mask: torch.Tensor | None,
                tgt_mask: torch.Tensor | None, rotary: Rotary = None, cache=None) -> torch.Tensor:
        """cache: this layer's self-attention key/value cache, or None."""
        x = self.add_norm1(x, lambda y: self.self_attn(y, y, y, tgt_mask, rotary, cache))
        if self.cross_attn is not None:
            x = self.add_norm2(x, lambda y: self.cross_attn(y, memory, memory, src_mask))
        return x if self.ffn is None else self.add_norm3(x, self.ffn)


class Encoder(nn.Module):
    """A stack of N encoder layers; pre-LN adds the final LayerNorm the residual stream then needs."""

    STEP_GROUP = "stack"
    HOOK_SITES = ("final_norm",)

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.step_axes = {"t": "src"}
        self.layers = nn.ModuleList(EncoderLayer(cfg) for _ in range(cfg.n_encoder_layers))
        self.norm = make_norm(cfg) if cfg.norm_first else None

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None, rotary: Rotary = None) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x, mask, rotary)
        if self.norm is not None:
            x = site(self, "final_norm", self.norm(x))
        return x


class Decoder(nn.Module):
    """A stack of N decoder layers (with or without cross-attention)."""

    STEP_GROUP = "stack"
    HOOK_SITES = ("final_norm",)

    def __init__(self, cfg: TransformerConfig, cross_attention: bool = True):
        super().__init__()
        self.step_axes = {"t": "tgt"}
        self.layers = nn.ModuleList(DecoderLayer(cfg, cross_attention) for _ in range(cfg.n_decoder_layers))
        self.norm = make_norm(cfg) if cfg.norm_first else None

    def forward(self, x, memory, src_mask, tgt_mask, rotary: Rotary = None, cache=None) -> torch.Tensor:
        """cache: a key/value cache with one entry per layer (`cache.layer(i)`), or None."""
        for i, layer in enumerate(self.layers):
            x = layer(x, memory, src_mask, tgt_mask, rotary, None if cache is None else cache.layer(i))
        if self.norm is not None:
            x = site(self, "final_norm", self.norm(x))
        return x
