"""The numbers behind the positional-encoding panel (Section 3.5), as plain numpy.

The sinusoid table comes from the model's own `get_positional_encoding`, so the panel shows
exactly what the model adds; the tests check it against `math.sin`/`math.cos` independently.
The linear-shift property the paper cites ("for any fixed offset k, PE_{pos+k} can be
represented as a linear function of PE_pos") is made concrete by `rotation`: each (sin, cos)
pair of frequency ω is rotated by the angle ω·k, independent of pos.

`layout` is where a pair lives: "interleaved" (the paper, and our models: sin in dim 2i, cos
in dim 2i+1) or "halves" (Marian/opus-mt: sin in dim i, cos in dim d/2 + i). The values are
the same; only the columns differ.
"""
from __future__ import annotations

import numpy as np

from model.nn.positional import get_positional_encoding, wavelengths

LAYOUTS = ("interleaved", "halves")


def pair_columns(d_model: int, layout: str = "interleaved") -> tuple[np.ndarray, np.ndarray]:
    """(sin dims, cos dims) of every pair i, in the table's own columns."""
    if layout == "halves":
        half = d_model // 2
        return np.arange(half), np.arange(half, 2 * half)
    if layout != "interleaved":
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    return np.arange(0, d_model, 2), np.arange(1, d_model, 2)


def pair_dims(d_model: int, i: int, layout: str = "interleaved") -> tuple[int, int]:
    """(sin dim, cos dim) of pair i: (2i, 2i+1) in the paper's layout, (i, d/2 + i) in Marian's."""
    return (i, d_model // 2 + i) if layout == "halves" else (2 * i, 2 * i + 1)


def sinusoid_table(d_model: int, length: int, layout: str = "interleaved") -> np.ndarray:
    """(length, d_model) float32: PE(pos, 2i) = sin(pos/10000^(2i/d)), PE(pos, 2i+1) = cos(…)
    (layout "halves": the sines in the first d/2 dims, the cosines in the second)."""
    return get_positional_encoding(d_model, length, layout=layout).numpy()


def pair_wavelength(d_model: int, i: int) -> float:
    """Wavelength of pair i (dims 2i and 2i+1): 2π·10000^(2i/d_model), from 2π up to 10000·2π."""
    return float(wavelengths(d_model)[2 * i])


def frequencies(d_model: int) -> np.ndarray:
    """ω_i = 1 / 10000^(2i/d_model) for each pair i (d_model/2 values)."""
    two_i = np.arange(0, d_model, 2, dtype=np.float64)
    return 1.0 / np.power(10000.0, two_i / d_model)


def rotation(d_model: int, k: int, layout: str = "interleaved") -> np.ndarray:
    """M_k (d_model × d_model), block diagonal, such that PE(pos + k) = M_k · PE(pos) for every pos.

    sin(ω(p+k)) =  cos(ωk)·sin(ωp) + sin(ωk)·cos(ωp)
    cos(ω(p+k)) = −sin(ωk)·sin(ωp) + cos(ωk)·cos(ωp)
    (in the "halves" layout the same 2×2 blocks act on dims i and d/2 + i).
    """
    m = np.zeros((d_model, d_model))
    sin_dims, cos_dims = pair_columns(d_model, layout)
    for w, a, b in zip(frequencies(d_model), sin_dims, cos_dims):
        c, s = np.cos(w * k), np.sin(w * k)
        m[a, a], m[a, b], m[b, a], m[b, b] = c, s, -s, c
    return m


def rotate(rows: np.ndarray, k: int, layout: str = "interleaved") -> np.ndarray:
    """M_k · PE for each row of `rows` (N, d_model), pair by pair — O(N·d) instead of a d × d product."""
    d_model = rows.shape[-1]
    w = frequencies(d_model) * k
    c, s = np.cos(w), np.sin(w)
    sin_dims, cos_dims = pair_columns(d_model, layout)
    sin_part, cos_part = rows[..., sin_dims].astype(np.float64), rows[..., cos_dims].astype(np.float64)
    out = np.empty(rows.shape, dtype=np.float64)
    out[..., sin_dims] = c * sin_part + s * cos_part
    out[..., cos_dims] = -s * sin_part + c * cos_part
    return out


def shift_error(table: np.ndarray, k: int, layout: str = "interleaved") -> float:
    """max over pos and dims of |M_k·PE(pos) − PE(pos+k)| for a sinusoid table (float32 rounding only)."""
    length = table.shape[0]
    if k >= length:
        return float("nan")
    return float(np.abs(rotate(table[: length - k], k, layout) - table[k:]).max())


def similarity(table: np.ndarray) -> np.ndarray:
    """(L, L) dot products PE(p)·PE(q); for sinusoids = Σ_i cos(ω_i (p − q)), largest near the diagonal."""
    t = np.ascontiguousarray(table, dtype=np.float32)  # float32: a 1024 × 2048 table stays well under a second
    return t @ t.T


def default_pairs(d_model: int) -> list[int]:
    """A few pairs spread over the spectrum: the fastest waves and some slower ones."""
    half = d_model // 2
    return sorted({i for i in (0, half // 8, half // 2) if 0 <= i < half})


def sinusoid_curve(d_model: int, dim: int, positions: np.ndarray, layout: str = "interleaved") -> np.ndarray:
    """PE(pos, dim) at any (also fractional) positions: the smooth wave the integer samples lie on."""
    if layout == "halves":
        half = d_model // 2
        i, is_sin = (dim, True) if dim < half else (dim - half, False)
    else:
        i, is_sin = dim // 2, dim % 2 == 0
    w = 1.0 / np.power(10000.0, 2 * i / d_model)
    return np.sin(positions * w) if is_sin else np.cos(positions * w)
