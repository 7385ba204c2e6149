"""Attention maps summed over blocks of cells, once, where the frame is computed.

all-MiniLM-L6-v2 on a 512-token input records 6 × 12 maps of 512 × 512: 75 MB of weights.
The attention panel's all-heads view shows them at about one screen pixel per f × f block of
cells (f ≈ 3–8), and averaging them down reads every weight: ~20 ms on a laptop core, half of
what drawing a new frame cost on the GUI thread. The compute step (off the GUI thread, see
`model.interpret.frame`) sums them here into blocks of 2 and 4 cells a side; the panel then sums a
level down by the few cells more its room needs (f = 8 from the 4-level reads 16× fewer
numbers than from the maps).

Sums, not means, each with its block's count of allowed cells: a mean over a larger block is
then Σ sums / Σ counts, exact for the edges' partial blocks and for masked maps (a block
whose cells are all blocked counts 0 and is drawn transparent over the hatch). Pure torch
and numpy: no Qt, testable on its own.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from model.nn.kinds import AttentionKind
from model.nn.trace import Trace

LEVELS = (2, 4)  # every factor f ≥ 2 rounds up to an even one at most 4/3 of it (3 → 4, 5 → 6, 7 → 8);
# a 3-level would make 3, 6, 9 exact but costs the worker another read of every weight (~20 ms)
LEAST_CELLS = 1 << 20  # fewer weights than this (every toy model; MiniLM below ~120 tokens): summed when drawn, < 1 ms


@dataclass(frozen=True)
class SumLevel:
    """One kind's maps summed over `factor` × `factor` blocks."""

    factor: int
    sums: list[np.ndarray]  # per layer, (h, ⌈T_q/f⌉, ⌈T_k/f⌉) float32: the sum of the allowed cells' weights
    counts: np.ndarray  # (⌈T_q/f⌉, ⌈T_k/f⌉) float32: how many cells of each block the model allowed


def block_sums(x: torch.Tensor, factor: int) -> torch.Tensor:
    """(n, R, C) → (n, ⌈R/f⌉, ⌈C/f⌉): the sum of each f × f block (the edges' partial blocks sum
    what they have). Rows first, as f strided adds of contiguous row runs, then columns on the
    f-times smaller result: ~1.6× faster than `avg_pool2d` on a MiniLM layer (12 × 512 × 512)."""
    return _run_sums(_run_sums(x, 1, factor), 2, factor)


def _run_sums(x: torch.Tensor, dim: int, factor: int) -> torch.Tensor:
    """Sums of runs of `factor` along `dim` (the last run partial), as f adds of strided slices."""
    size = x.shape[dim]
    q = size // factor
    body = x.narrow(dim, 0, q * factor).unflatten(dim, (q, factor))
    shape = list(x.shape)
    shape[dim] = -(-size // factor)
    out = x.new_empty(shape)
    whole = out.narrow(dim, 0, q)
    if factor == 1:
        whole.copy_(body.select(dim + 1, 0))
    else:  # the first two runs added straight into place: one pass over the result less than a copy first
        torch.add(body.select(dim + 1, 0), body.select(dim + 1, 1), out=whole)
    for i in range(2, factor):
        whole += body.select(dim + 1, i)
    if q * factor < size:
        out.narrow(dim, q, 1).copy_(x.narrow(dim, q * factor, size - q * factor).sum(dim, keepdim=True))
    return out


def block_means(sums, counts, factor: int) -> np.ndarray:
    """(h, R, C) sums with their (R, C) counts → (h, ⌈R/f⌉, ⌈C/f⌉) means over f × f blocks of
    them: Σ sums / Σ counts, NaN where a block has no allowed cell."""
    s = torch.from_numpy(np.ascontiguousarray(sums, dtype=np.float32))
    c = torch.from_numpy(np.ascontiguousarray(counts, dtype=np.float32))
    if factor > 1:
        s, c = block_sums(s, factor), block_sums(c[None], factor)[0]
    else:
        s = s.clone()
    s /= c.clamp_min(1e-12)
    if not bool((c > 0).all()):
        s[:, c <= 0] = float("nan")
    return s.numpy()


def sum_levels(layers: list[torch.Tensor], allowed: torch.Tensor, levels=LEVELS) -> dict[int, SumLevel]:
    """Per-layer (h, T_q, T_k) weights and the (T_q, T_k) mask (True = may attend) → factor → level.
    The 4-level is summed from the 2-level (a quarter of the reading)."""
    keep = allowed.to(torch.float32)
    masked = not bool(allowed.all())

    def kept(layer: torch.Tensor) -> torch.Tensor:  # one layer at a time: a masked copy of all would double the memory
        return layer.to(torch.float32) * keep if masked else layer.to(torch.float32)

    out: dict[int, SumLevel] = {}
    for f in sorted(levels):
        base = out.get(f // 2) if f % 2 == 0 and f // 2 in out else None
        if base is not None:
            sums = [block_sums(torch.from_numpy(s), 2) for s in base.sums]
            counts = block_sums(torch.from_numpy(base.counts)[None], 2)[0]
        else:
            sums = [block_sums(kept(layer), f) for layer in layers]
            counts = block_sums(keep[None], f)[0]
        out[f] = SumLevel(f, [s.numpy() for s in sums], counts.numpy())
    return out


def attention_sums(trace: Trace, batch: int = 0, least_cells: int = LEAST_CELLS) -> dict[str, dict[int, SumLevel]]:
    """kind → factor → `SumLevel` for each kind whose maps hold at least `least_cells` weights
    (smaller recordings are cheap to average when drawn, and get nothing here)."""
    out = {}
    for kind in trace.attention_kinds():
        n = trace.n_layers(kind)
        layers = [trace.attention(kind, layer)[batch].detach().cpu() for layer in range(n)]
        if not layers or n * math.prod(layers[0].shape) < least_cells:
            continue
        mask_name = AttentionKind(kind).module_name(0) + ".mask"
        mask = trace[mask_name].tensor[batch].cpu().bool() if mask_name in set(trace.names()) else None
        allowed = mask if mask is not None else torch.ones(layers[0].shape[-2:], dtype=torch.bool)
        out[kind] = sum_levels(layers, allowed)
    return out


def pick_level(factor: int, levels: dict[int, SumLevel] | None) -> tuple[int, SumLevel | None]:
    """The averaging factor to draw with and the level to sum it from: the smallest multiple of
    a level's factor that is at least `factor` (at most 4/3 of it), the largest level on a tie.
    (factor, None) — sum the maps themselves — for factor 1 or when there are no levels."""
    if factor <= 1 or not levels:
        return factor, None
    drawn, level = min((p * -(-factor // p), -p) for p in levels)
    return drawn, levels[-level]
