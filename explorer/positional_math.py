"""The numbers behind the positional-encoding panel (Section 3.5), as plain numpy.

The sinusoid table comes from the model's own `get_positional_encoding`, so the panel shows
exactly what the model adds; the tests check it against `math.sin`/`math.cos` independently.
The linear-shift property the paper cites ("for any fixed offset k, PE_{pos+k} can be
represented as a linear function of PE_pos") is made concrete by `rotation`: each (sin, cos)
pair of frequency ω is rotated by the angle ω·k, independent of pos.
"""
from __future__ import annotations

import numpy as np

from model.positional import get_positional_encoding, wavelengths


def sinusoid_table(d_model: int, length: int) -> np.ndarray:
    """(length, d_model) float32: PE(pos, 2i) = sin(pos/10000^(2i/d)), PE(pos, 2i+1) = cos(…)."""
    return get_positional_encoding(d_model, length).numpy()


def pair_wavelength(d_model: int, i: int) -> float:
    """Wavelength of pair i (dims 2i and 2i+1): 2π·10000^(2i/d_model), from 2π up to 10000·2π."""
    return float(wavelengths(d_model)[2 * i])


def frequencies(d_model: int) -> np.ndarray:
    """ω_i = 1 / 10000^(2i/d_model) for each pair i (d_model/2 values)."""
    two_i = np.arange(0, d_model, 2, dtype=np.float64)
    return 1.0 / np.power(10000.0, two_i / d_model)


def rotation(d_model: int, k: int) -> np.ndarray:
    """M_k (d_model × d_model), block diagonal, such that PE(pos + k) = M_k · PE(pos) for every pos.

    sin(ω(p+k)) =  cos(ωk)·sin(ωp) + sin(ωk)·cos(ωp)
    cos(ω(p+k)) = −sin(ωk)·sin(ωp) + cos(ωk)·cos(ωp)
    """
    m = np.zeros((d_model, d_model))
    for i, w in enumerate(frequencies(d_model)):
        c, s = np.cos(w * k), np.sin(w * k)
        m[2 * i:2 * i + 2, 2 * i:2 * i + 2] = [[c, s], [-s, c]]
    return m


def rotate(rows: np.ndarray, k: int) -> np.ndarray:
    """M_k · PE for each row of `rows` (N, d_model), pair by pair — O(N·d) instead of a d × d product."""
    d_model = rows.shape[-1]
    w = frequencies(d_model) * k
    c, s = np.cos(w), np.sin(w)
    sin_part, cos_part = rows[..., 0::2].astype(np.float64), rows[..., 1::2].astype(np.float64)
    out = np.empty(rows.shape, dtype=np.float64)
    out[..., 0::2] = c * sin_part + s * cos_part
    out[..., 1::2] = -s * sin_part + c * cos_part
    return out


def shift_error(table: np.ndarray, k: int) -> float:
    """max over pos and dims of |M_k·PE(pos) − PE(pos+k)| for a sinusoid table (float32 rounding only)."""
    length = table.shape[0]
    if k >= length:
        return float("nan")
    return float(np.abs(rotate(table[: length - k], k) - table[k:]).max())


def similarity(table: np.ndarray) -> np.ndarray:
    """(L, L) dot products PE(p)·PE(q); for sinusoids = Σ_i cos(ω_i (p − q)), largest near the diagonal."""
    t = np.ascontiguousarray(table, dtype=np.float32)  # float32: a 1024 × 2048 table stays well under a second
    return t @ t.T


def default_pairs(d_model: int) -> list[int]:
    """A few pairs spread over the spectrum: the fastest waves and some slower ones."""
    half = d_model // 2
    return sorted({i for i in (0, half // 8, half // 2) if 0 <= i < half})


def sinusoid_curve(d_model: int, dim: int, positions: np.ndarray) -> np.ndarray:
    """PE(pos, dim) at any (also fractional) positions: the smooth wave the integer samples lie on."""
    w = 1.0 / np.power(10000.0, (dim // 2 * 2) / d_model)
    return np.sin(positions * w) if dim % 2 == 0 else np.cos(positions * w)
