"""What Olsson et al. (2022) measure while induction heads form, on `RepeatBatch` rows.

- in-context-learning score: the loss on the second copy minus the loss on the first (their
  "loss at a late token minus loss at an early token"). Both sums cover the L-1 predictions
  made inside a copy (position q predicts token q+1). Near 0 before the phase change (neither
  copy is predictable without looking back); strongly negative after it.
- induction score of a head: its mean attention from each token of the second copy to the
  token just after that token's first occurrence (from position q = s+L+j to s+j+1), the
  key an induction head reads. Uniform causal attention gives about 1/q.
- the phase-change step: where a curve has come half of its way from where it started to
  where it ends, and stays past that point.
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from model.train.induction_data import RepeatBatch


def position_losses(logits: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """(B, T-1): cross-entropy of predicting ids[:, q+1] from the logits at q (nats)."""
    vocab = logits.size(-1)
    return F.cross_entropy(logits[:, :-1].reshape(-1, vocab).float(), ids[:, 1:].reshape(-1),
                           reduction="none").view(ids.size(0), -1)


def copy_masks(batch: RepeatBatch) -> tuple[torch.Tensor, torch.Tensor]:
    """Boolean (B, T-1) masks of the prediction positions inside the first and the second copy:
    q ∈ [s, s+L-2] and q ∈ [s+L, s+2L-2]."""
    q = torch.arange(batch.ids.size(1) - 1, device=batch.ids.device)[None, :]
    s, n = batch.start[:, None], batch.length[:, None]
    first = (q >= s) & (q <= s + n - 2)
    second = (q >= s + n) & (q <= s + 2 * n - 2)
    return first, second


def copy_losses(losses: torch.Tensor, batch: RepeatBatch) -> tuple[float, float]:
    """(mean loss inside the first copy, mean loss inside the second copy)."""
    first, second = copy_masks(batch)
    return float(losses[first].mean()), float(losses[second].mean())


def icl_score(losses: torch.Tensor, batch: RepeatBatch) -> float:
    """Loss on the second copy minus loss on the first (nats; negative = learning in context)."""
    first, second = copy_losses(losses, batch)
    return second - first


def induction_scores(attention: torch.Tensor, batch: RepeatBatch) -> torch.Tensor:
    """(h,): each head's mean attention from second-copy position q to key q - L + 1, over
    q ∈ [s+L, s+2L-2] of every row. `attention` is (B, h, T, T), queries × keys."""
    _, second = copy_masks(batch)  # (B, T-1) over q
    b, q = second.nonzero(as_tuple=True)
    keys = q - batch.length[b] + 1
    return attention[b, :, q, keys].mean(0)  # (n, h) → (h,)


def phase_change_step(steps, values, min_change: float) -> int | None:
    """The first step from which `values` stay past half their way from the first value to the
    final one (the mean of the last few, against one noisy reading); None while the whole
    change is under `min_change` (no phase change yet)."""
    steps, values = np.asarray(steps), np.asarray(values, dtype=float)
    if len(values) < 3:
        return None
    tail = max(1, len(values) // 20)
    start, final = values[0], values[-tail:].mean()
    change = final - start
    if abs(change) < min_change:
        return None
    past = (values - start) / change >= 0.5
    not_past = np.flatnonzero(~past)
    first = 0 if len(not_past) == 0 else not_past[-1] + 1
    return int(steps[first]) if first < len(steps) else None


__all__ = ["position_losses", "copy_masks", "copy_losses", "icl_score", "induction_scores", "phase_change_step"]
