"""Mosaics too large for the screen: averaged down to about one cell per pixel, detailed on zoom.

all-MiniLM-L6-v2 on a 512-token input has 6 × 12 maps of 512 × 512: a 3,500 × 6,900 cell
mosaic (24 M cells) shown in ~1,100 × 550 pixels. Composing it at full resolution and letting
pyqtgraph average it down took ~230 ms a frame; averaging each map first (one
`adaptive_avg_pool2d` over all maps) and composing the small result takes a fraction of that.
What is averaged is what the screen would have blended anyway: a pixel shows the mean weight of
the cells under it. Zooming in replaces the overview, where the view is, by a crop composed at
full resolution (or averaged only as much as the zoom still needs), so every cell comes back.
A frame from the compute step carries its long maps already summed over blocks of 2 and 4 cells
(`model.interpret.map_sums`, made off the GUI thread): the overview is then summed from those, and only
the zoom's crop reads the weights themselves.

Blocked cells stay honest: a pixel averages only the cells the model allowed, and a pixel whose
cells are all blocked is NaN (transparent over the hatch).
"""
from __future__ import annotations

import math
import numpy as np

from explorer.drawing.mosaic import MosaicLayout
from model.interpret.map_sums import SumLevel, block_means


def overview_factor(layout: MosaicLayout, px_wide: float, px_high: float) -> int:
    """Cells per screen pixel of the whole mosaic fitted (aspect kept) into px_wide × px_high."""
    rows, cols = layout.shape
    if px_wide < 2 or px_high < 2:
        return 1
    px_per_cell = min(px_wide / cols, px_high / rows)
    return max(1, math.floor(1.0 / px_per_cell))


def compose_pooled(weights, allowed: np.ndarray, layout: MosaicLayout, factor: int, level: SumLevel | None = None):
    """(L, h, T_q, T_k) weights (an array, or L arrays of (h, T_q, T_k): nothing is stacked)
    → (image, width_cells, height_cells): each pixel the mean of a
    `factor` × `factor` block of one map's cells, each map placed at its own origin ÷ factor
    (rounded: within half a pixel of where the full mosaic has it), so the image drawn in the rect
    (0, 0, width_cells, height_cells) lines up with the ticks, the selection box and the hatch.
    `level`: the same maps already summed over blocks (`model.interpret.map_sums`, its `sums` laid out as
    `weights`), whose factor divides `factor`: the means are then summed from it, not from every weight."""
    if level is not None:
        assert factor % level.factor == 0, (factor, level.factor)  # (`model.interpret.map_sums.pick_level` picks so)
        pooled = [block_means(sums, level.counts, factor // level.factor) for sums in level.sums]
    else:
        keep = np.ascontiguousarray(allowed, dtype=np.float32)
        masked = not bool(allowed.all())
        pooled = [block_means(layer * keep if masked else layer, keep, factor) for layer in weights]
    L, (h, p_q, p_k) = len(pooled), pooled[0].shape  # L × (h, ⌈T_q/f⌉, ⌈T_k/f⌉)
    rows, cols = layout.shape
    image = np.full((math.ceil(rows / factor), math.ceil(cols / factor)), np.nan, dtype=np.float32)
    for layer in range(L):
        for head in range(h):
            r, c = layout.origin(layer, head)
            r, c = round(r / factor), round(c / factor)
            block = image[r:r + p_q, c:c + p_k]
            block[...] = pooled[layer][head, :block.shape[0], :block.shape[1]]
    return image, image.shape[1] * factor, image.shape[0] * factor


def compose_region(weights, allowed: np.ndarray, layout: MosaicLayout,
                   rows: tuple[int, int], cols: tuple[int, int]) -> np.ndarray:
    """The full-resolution mosaic's cells rows[0]:rows[1] × cols[0]:cols[1] (NaN on gaps and
    blocked cells), composed from only the maps that overlap the region."""
    r0, r1 = rows
    c0, c1 = cols
    out = np.full((max(0, r1 - r0), max(0, c1 - c0)), np.nan, dtype=np.float32)
    pr, pc = layout.t_q + layout.gap, layout.t_k + layout.gap
    for layer in range(max(0, r0 // pr), min(layout.layers, (r1 - 1) // pr + 1)):
        for head in range(max(0, c0 // pc), min(layout.heads, (c1 - 1) // pc + 1)):
            top, left = layout.origin(layer, head)
            q0, q1 = max(r0, top), min(r1, top + layout.t_q)
            k0, k1 = max(c0, left), min(c1, left + layout.t_k)
            if q0 >= q1 or k0 >= k1:
                continue
            block = weights[layer][head, q0 - top:q1 - top, k0 - left:k1 - left]  # array or list of layers
            ok = allowed[q0 - top:q1 - top, k0 - left:k1 - left]
            out[q0 - r0:q1 - r0, k0 - c0:k1 - c0] = np.where(ok, block, np.nan)
    return out


def average_down(image: np.ndarray, factor: int) -> np.ndarray:
    """Mean of each factor × factor block, ignoring NaN (a block of NaN stays NaN); the edges'
    partial blocks average the cells they have."""
    if factor <= 1:
        return image
    image = np.asarray(image, dtype=np.float32)
    return block_means(np.nan_to_num(image)[None], ~np.isnan(image), factor)[0]  # NaN: no cell counted
