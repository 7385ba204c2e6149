"""Float maps drawn as 8-bit colour indices, with one index kept for "nothing here".

pyqtgraph draws a float image by scaling it to its colour table on every paint; when the image
holds NaN (the gaps between a mosaic's maps, cells the model blocked) it also finds every NaN
and builds a full RGBA copy to make them transparent. For a 512-token MiniLM overview
(~0.5 M pixels) that was ~8 ms of each frame. Turned once into colour indices, the image is
handed to Qt as it is (an indexed image whose colour table has a transparent entry), and the
scaling is one vectorised pass that runs with the averaging.

The colour of a value is the colour map's at that value with 255 steps instead of pyqtgraph's
256: the same map, a step 0.4% coarser.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import torch

NOTHING = 255  # the transparent index: NaN (a gap between maps, a cell the model blocked)
STEPS = NOTHING  # colours 0 … 254


def colour_table(cmap: pg.ColorMap) -> np.ndarray:
    """(256, 4) uint8 RGBA: the colour map in STEPS colours, then a transparent entry."""
    table = np.zeros((NOTHING + 1, 4), dtype=np.uint8)
    table[:STEPS] = cmap.getLookupTable(nPts=STEPS, alpha=True)
    return table


def to_indices(values: np.ndarray, levels: tuple[float, float]) -> np.ndarray:
    """Float values → uint8 colour indices: `levels` spread over 0 … STEPS − 1 (values outside
    clamped to the ends), NaN → NOTHING."""
    lo, hi = levels
    t = torch.from_numpy(np.ascontiguousarray(values, dtype=np.float32))
    scaled = (t - lo).mul_(STEPS / ((hi - lo) or 1.0)).clamp_(0, STEPS - 1)  # NaN stays NaN
    return torch.nan_to_num_(scaled, nan=float(NOTHING)).to(torch.uint8).numpy()
