"""Compose every layer × head map of one attention kind into ONE image (a mosaic with gaps).

Painting one image is far cheaper than painting 48 (measured: 64 `ImageItem`s cost ~18 ms a
frame, one composed image a fraction of that), which is what lets the grid follow a training
run live. Masked cells (blocked future / padding keys) and the gaps between maps become NaN,
which pyqtgraph draws transparent; the mask overlay underneath paints blocked cells grey and
hatched, so a blocked cell never looks like a weight of ~0.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def gap_for(t_q: int, t_k: int) -> int:
    """Gap between maps in cells: about an eighth of a map, at least one cell."""
    return max(1, round(max(t_q, t_k) / 8))


@dataclass(frozen=True)
class MosaicLayout:
    """Where map (layer, head) sits: rows are layers (top = layer 0), columns are heads."""

    layers: int
    heads: int
    t_q: int
    t_k: int
    gap: int

    @classmethod
    def for_shape(cls, shape: tuple[int, int, int, int]) -> "MosaicLayout":
        L, h, t_q, t_k = shape
        return cls(L, h, t_q, t_k, gap_for(t_q, t_k))

    @property
    def shape(self) -> tuple[int, int]:
        return (self.layers * (self.t_q + self.gap) - self.gap, self.heads * (self.t_k + self.gap) - self.gap)

    def origin(self, layer: int, head: int) -> tuple[int, int]:
        """(row, column) of the map's top-left cell."""
        return layer * (self.t_q + self.gap), head * (self.t_k + self.gap)

    def locate(self, row: float, col: float) -> tuple[int, int, int, int] | None:
        """(layer, head, query, key) under mosaic coordinates, or None on a gap / outside."""
        if row < 0 or col < 0:
            return None
        r, c = int(row), int(col)
        layer, q = divmod(r, self.t_q + self.gap)
        head, k = divmod(c, self.t_k + self.gap)
        if layer >= self.layers or head >= self.heads or q >= self.t_q or k >= self.t_k:
            return None
        return layer, head, q, k

    def block(self, mosaic: np.ndarray, layer: int, head: int) -> np.ndarray:
        r, c = self.origin(layer, head)
        return mosaic[r:r + self.t_q, c:c + self.t_k]


def compose(weights: np.ndarray, allowed: np.ndarray, layout: MosaicLayout, out: np.ndarray | None = None) -> np.ndarray:
    """(L, h, T_q, T_k) weights → mosaic float32 with NaN on gaps and blocked cells.

    `out` is reused when its shape fits (no allocation per frame).
    """
    L, h, t_q, t_k, g = layout.layers, layout.heads, layout.t_q, layout.t_k, layout.gap
    padded = np.full((L, t_q + g, h, t_k + g), np.nan, dtype=np.float32)
    padded[:, :t_q, :, :t_k] = np.where(allowed[None, None], weights, np.nan).transpose(0, 2, 1, 3)
    full = padded.reshape(L * (t_q + g), h * (t_k + g))[: layout.shape[0], : layout.shape[1]]
    if out is not None and out.shape == full.shape:
        out[...] = full
        return out
    return np.ascontiguousarray(full)


def blocked_rects(allowed: np.ndarray, layout: MosaicLayout | None = None) -> list[tuple[int, int, int, int]]:
    """(x, y, width, height) rectangles covering the blocked cells of every map, one run per row
    (a causal mask gives T − 1 runs per map, not T²/2 cells)."""
    t_q, t_k = allowed.shape
    runs = []
    for q in range(t_q):
        row = ~allowed[q]
        k = 0
        while k < t_k:
            if row[k]:
                start = k
                while k < t_k and row[k]:
                    k += 1
                runs.append((start, q, k - start, 1))
            else:
                k += 1
    if layout is None:
        return runs
    rects = []
    for layer in range(layout.layers):
        for head in range(layout.heads):
            r, c = layout.origin(layer, head)
            rects.extend((x + c, y + r, w, hgt) for x, y, w, hgt in runs)
    return rects
