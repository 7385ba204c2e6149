"""Positional encodings (Section 3.5) and the scaled token embeddings (Section 3.4)."""
from __future__ import annotations

import math

import torch
from torch import nn

LAYOUTS = ("interleaved", "halves")


def get_positional_encoding(d_model: int, max_len: int, layout: str = "interleaved") -> torch.Tensor:
    """Section 3.5: PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(same).

    Returns (max_len, d_model) in float32 — a pure function, so a panel can draw any d_model.
    `layout="halves"` puts the same sines in dims [0, d/2) and the cosines in [d/2, d), as
    Marian (opus-mt) does (transformers' MarianSinusoidalPositionalEmbedding): the same
    numbers, permuted.
    """
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    if d_model <= 0 or d_model % 2:
        raise ValueError(f"d_model must be a positive even number, got {d_model}")
    if max_len <= 0:
        raise ValueError(f"max_len must be positive, got {max_len}")
    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)  # (max_len, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # (d_model/2,)
    angle = pos / torch.pow(10000.0, two_i / d_model)  # (max_len, d_model/2)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    if layout == "halves":
        pe[:, : d_model // 2] = torch.sin(angle)
        pe[:, d_model // 2:] = torch.cos(angle)
    else:
        pe[:, 0::2] = torch.sin(angle)
        pe[:, 1::2] = torch.cos(angle)
    return pe.float()


def wavelengths(d_model: int) -> torch.Tensor:
    """Wavelength 2π·10000^(2i/d_model) of each dimension (a geometric progression from 2π to 10000·2π)."""
    two_i = torch.arange(d_model, dtype=torch.float64) // 2 * 2
    return 2 * math.pi * torch.pow(10000.0, two_i / d_model)


class SinusoidalPositionalEncoding(nn.Module):
    """The fixed encoding as a (non-trainable, non-saved) buffer, sliced to the sequence length."""

    def __init__(self, d_model: int, max_len: int, layout: str = "interleaved"):
        super().__init__()
        self.register_buffer("pe", get_positional_encoding(d_model, max_len, layout), persistent=False)

    def forward(self, length: int) -> torch.Tensor:
        if length > self.pe.size(0):
            raise ValueError(f"sequence of {length} positions is longer than max_len {self.pe.size(0)}")
        return self.pe[:length]  # (T, d_model)

    @property
    def table(self) -> torch.Tensor:
        return self.pe


class LearnedPositionalEmbedding(nn.Module):
    """Table 3 row (E): learned positional embeddings instead of sinusoids."""

    def __init__(self, d_model: int, max_len: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(max_len, d_model) * d_model ** -0.5)

    def forward(self, length: int) -> torch.Tensor:
        if length > self.weight.size(0):
            raise ValueError(f"sequence of {length} positions is longer than max_len {self.weight.size(0)}")
        return self.weight[:length]  # (T, d_model)

    @property
    def table(self) -> torch.Tensor:
        return self.weight.detach()


class TokenEmbedding(nn.Module):
    """Section 3.4: a learned lookup table; the model multiplies its output by √d_model."""

    def __init__(self, vocab_size: int, d_model: int, pad_id: int):
        super().__init__()
        self.lut = nn.Embedding(vocab_size, d_model, padding_idx=pad_id)
        nn.init.normal_(self.lut.weight, mean=0.0, std=d_model ** -0.5)
        with torch.no_grad():
            self.lut.weight[pad_id].zero_()
        self.scale = math.sqrt(d_model)

    @property
    def weight(self) -> nn.Parameter:
        return self.lut.weight

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.lut(ids)  # (B, T, d_model), unscaled: the caller records it, then scales
