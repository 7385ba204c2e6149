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
    pos = torch.arange(max_len, dtype=torch.float64, device="cpu").unsqueeze(1)  # (max_len, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64, device="cpu")  # (d_model/2,)
    angle = pos / torch.pow(10000.0, two_i / d_model)  # (max_len, d_model/2)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64, device="cpu")
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


# -- rotary positions (RoFormer, Su et al. 2021; Llama) ------------------------------------------
def rope_angles(positions: torch.Tensor, d_k: int, base: float = 10000.0) -> torch.Tensor:
    """The rotation angles m·θ_i, θ_i = base^(−2i/d_k), for each position m: (T, d_k/2) float32.

    Pair i of a head vector, dimensions (2i, 2i+1), turns by m·θ_i: slow pairs for large i,
    fast ones for small i, the same wavelengths as the paper's sinusoids (Section 3.5).
    """
    if d_k <= 0 or d_k % 2:
        raise ValueError(f"rotary positions rotate pairs of dimensions: d_k must be positive and even, got {d_k}")
    two_i = torch.arange(0, d_k, 2, dtype=torch.float32, device=positions.device)
    inv_freq = 1.0 / (float(base) ** (two_i / d_k))  # θ_i, as float32 like the reference implementations
    return positions.to(torch.float32)[:, None] * inv_freq[None, :]


def apply_rope(x: torch.Tensor, positions: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """Rotate each pair (x_2i, x_2i+1) of x (..., T, d_k) by the angle m·θ_i of its position m.

    (x_2i, x_2i+1) → (x_2i cos − x_2i+1 sin, x_2i sin + x_2i+1 cos). A query at m and a key at n
    then score q_m·k_n = f(q, k, m − n): only their distance enters attention.
    """
    return rotate_pairs(x, *rope_cos_sin(rope_angles(positions, x.size(-1), base), x.dtype))


def rope_cos_sin(angles: torch.Tensor, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin of `rope_angles`, in the dtype of the vectors they rotate."""
    return angles.cos().to(dtype), angles.sin().to(dtype)


def rotate_pairs(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """x (..., T, d_k) with pairs (2i, 2i+1) rotated by angles given as cos, sin (T, d_k/2)."""
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1).flatten(-2)


class RotaryPositions(nn.Module):
    """Rotary positions: nothing is added to the embeddings; attention rotates q and k.

    Keeps cos/sin of `rope_angles` for positions [0, max_len) as non-saved buffers so each
    layer slices them instead of recomputing; `table` is the angles for a panel to draw.
    """

    def __init__(self, d_k: int, max_len: int, base: float):
        super().__init__()
        self.d_k, self.base = d_k, float(base)
        angles = rope_angles(torch.arange(max_len, device="cpu"), d_k, base)
        self.register_buffer("angles", angles, persistent=False)
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)

    def cos_sin(self, start: int, length: int, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        """cos, sin (length, d_k/2) for positions start … start + length − 1."""
        if start + length > self.cos.size(0):
            raise ValueError(f"sequence of {start + length} positions is longer than max_len {self.cos.size(0)}")
        return self.cos[start:start + length].to(dtype), self.sin[start:start + length].to(dtype)

    @property
    def table(self) -> torch.Tensor:
        return self.angles
