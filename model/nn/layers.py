"""Encoder and decoder layers (Section 3.1): sublayers wrapped in residual + LayerNorm."""
from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from model.nn.attention import MultiHeadAttention
from model.nn.config import TransformerConfig
from model.nn.dropout import Dropout
from model.nn.hooks import site

# The FFN's non-linearity. Eq. 2 uses ReLU; BERT uses GELU (Hendrycks & Gimpel 2016, the exact
# erf form, as torch's default), Marian/opus-mt uses swish = x·sigmoid(x) (torch's SiLU).
FFN_ACTIVATIONS = {"relu": torch.relu, "gelu": nn.functional.gelu, "swish": nn.functional.silu}


class FeedForward(nn.Module):
    """Eq. 2: FFN(x) = max(0, x W1 + b1) W2 + b2, applied to each position separately.

    `activation` swaps max(0, ·) for a later model's GELU or swish (config.activation).
    """

    STEP_GROUP = "ffn"
    HOOK_SITES = ("hidden", "output")

    def __init__(self, d_model: int, d_ff: int, dropout: float, axis: str, activation: str = "relu"):
        super().__init__()
        self.w_1 = nn.Linear(d_model, d_ff)
        self.w_2 = nn.Linear(d_ff, d_model)
        self.dropout = Dropout(dropout)
        self.axis = axis
        self.step_axes = {"t": axis}
        self.activation = activation
        self.act = FFN_ACTIVATIONS[activation]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = site(self, "hidden", self.act(self.w_1(x)))  # (B, T, d_ff)
        return site(self, "output", self.w_2(self.dropout(hidden)))  # (B, T, d_model)


class AddNorm(nn.Module):
    """'Add & Norm': post-LN LayerNorm(x + Dropout(Sublayer(x))) as in the paper, or
    pre-LN x + Dropout(Sublayer(LayerNorm(x))) when `norm_first`."""

    STEP_GROUP = "add_norm"
    HOOK_SITES = ("norm", "residual")

    def __init__(self, d_model: int, dropout: float, norm_first: bool, eps: float, axis: str):
        super().__init__()
        self.norm = nn.LayerNorm(d_model, eps=eps)
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


class EncoderLayer(nn.Module):
    """Self-attention then feed-forward, each inside Add & Norm."""

    def __init__(self, cfg: TransformerConfig, axis: str = "src"):
        super().__init__()
        self.self_attn = MultiHeadAttention(cfg.d_model, cfg.n_heads, cfg.dropout, axes=(axis, axis))
        self.add_norm1 = AddNorm(cfg.d_model, cfg.dropout, cfg.norm_first, cfg.layer_norm_eps, axis)
        self.ffn = FeedForward(cfg.d_model, cfg.d_ff, cfg.dropout, axis, cfg.activation) if cfg.d_ff else None
        self.add_norm2 = AddNorm(cfg.d_model, cfg.dropout, cfg.norm_first, cfg.layer_norm_eps, axis) if cfg.d_ff else None

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        x = self.add_norm1(x, lambda y: self.self_attn(y, y, y, mask))
        return x if self.ffn is None else self.add_norm2(x, self.ffn)


class DecoderLayer(nn.Module):
    """Masked self-attention, encoder-decoder (cross) attention, feed-forward (Section 3.1).

    With `cross_attention=False` the same layer serves a decoder-only (GPT-like) model.
    """

    def __init__(self, cfg: TransformerConfig, cross_attention: bool = True):
        super().__init__()
        self.self_attn = MultiHeadAttention(cfg.d_model, cfg.n_heads, cfg.dropout, axes=("tgt", "tgt"))
        self.add_norm1 = AddNorm(cfg.d_model, cfg.dropout, cfg.norm_first, cfg.layer_norm_eps, "tgt")
        if cross_attention:
            self.cross_attn = MultiHeadAttention(cfg.d_model, cfg.n_heads, cfg.dropout, axes=("tgt", "src"))
            self.add_norm2 = AddNorm(cfg.d_model, cfg.dropout, cfg.norm_first, cfg.layer_norm_eps, "tgt")
        else:
            self.cross_attn = None
        # d_ff = 0: no feed-forward sublayer at all (an attention-only model)
        self.ffn = FeedForward(cfg.d_model, cfg.d_ff, cfg.dropout, "tgt", cfg.activation) if cfg.d_ff else None
        self.add_norm3 = AddNorm(cfg.d_model, cfg.dropout, cfg.norm_first, cfg.layer_norm_eps, "tgt") if cfg.d_ff else None

    def forward(self, x: torch.Tensor, memory: torch.Tensor | None, src_mask: torch.Tensor | None,
                tgt_mask: torch.Tensor | None) -> torch.Tensor:
        x = self.add_norm1(x, lambda y: self.self_attn(y, y, y, tgt_mask))
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
        self.norm = nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps) if cfg.norm_first else None

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x, mask)
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
        self.norm = nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps) if cfg.norm_first else None

    def forward(self, x, memory, src_mask, tgt_mask) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x, memory, src_mask, tgt_mask)
        if self.norm is not None:
            x = site(self, "final_norm", self.norm(x))
        return x
