"""The paper's optimiser (Section 5.3): Adam with β1 = 0.9, β2 = 0.98, ε = 1e-9 and the
learning rate of Eq. 3, warming up linearly then decaying as 1/√step. `model.train.trainer`
re-exports these.

A run that has a known, short horizon (a lecture's minute, `model.train.presets`) may instead decay
linearly from the same peak to a small floor by a given step (`linear_decay_lr`): Eq. 3's
1/√step keeps the rate high for long, and on the toy tasks held-out exact match then
oscillates around 90-97 % for a thousand steps; annealing settles it (measured in
`model.train.presets.REVERSE_MEASURED`). `model.train.trainer` re-exports these.
"""
from __future__ import annotations

import numpy as np
import torch
from torch import nn

ADAM_BETAS = (0.9, 0.98)  # Section 5.3
ADAM_EPS = 1e-9
FUSED_DEVICES = ("cpu", "cuda")  # where torch.optim.Adam(fused=True) runs


def noam_lr(step: int, d_model: int, warmup: int, scale: float = 1.0) -> float:
    """Eq. 3 (Section 5.3): scale · d_model^-0.5 · min(step^-0.5, step · warmup^-1.5).

    Rises linearly for `warmup` steps, peaks at step == warmup, then decays as 1/√step.
    Steps count from 1 (the first optimisation step).
    """
    if step < 1:
        raise ValueError(f"steps count from 1, got {step}")
    if warmup < 1:
        raise ValueError(f"warmup must be at least 1 step, got {warmup}")
    return scale * d_model ** -0.5 * min(step ** -0.5, step * warmup ** -1.5)


LINEAR_DECAY_FLOOR = 0.05  # the rate linear decay ends at, as a fraction of the peak (never 0: a run may go on)


def linear_decay_lr(step: int, d_model: int, warmup: int, scale: float, decay_steps: int,
                    floor: float = LINEAR_DECAY_FLOOR) -> float:
    """Eq. 3's warm-up to the same peak (scale · d_model^-0.5 · warmup^-0.5), then a straight
    line down to `floor` × peak at step `decay_steps`, held there after it."""
    if decay_steps <= warmup:
        raise ValueError(f"decay_steps ({decay_steps}) must come after the warm-up ({warmup} steps)")
    if step <= warmup:
        return noam_lr(step, d_model, warmup, scale)
    peak = noam_lr(warmup, d_model, warmup, scale)
    done = min(1.0, (step - warmup) / (decay_steps - warmup))
    return peak * (1.0 - (1.0 - floor) * done)


def make_optimizer(model: nn.Module, d_model: int, warmup: int, scale: float = 1.0, decay_steps: int = 0
                   ) -> tuple[torch.optim.Adam, torch.optim.lr_scheduler.LambdaLR]:
    """Adam(β1 0.9, β2 0.98, ε 1e-9) whose learning rate LambdaLR sets to `noam_lr` every step
    (`linear_decay_lr` when `decay_steps` is given)."""
    params = list(dict.fromkeys(model.parameters()))  # tied embeddings once
    # torch's fused Adam: the same update as one kernel over all tensors instead of ~10 small
    # ops per tensor; a CPU step of the bundled models spends ~4x less time in the optimiser.
    fused = bool(params) and all(p.device.type in FUSED_DEVICES and p.is_floating_point() for p in params)
    opt = torch.optim.Adam(params, lr=1.0, betas=ADAM_BETAS, eps=ADAM_EPS, fused=fused or None)
    # LambdaLR multiplies the base lr (1.0) by lambda(k), k = 0 before the first step → noam_lr(1).
    if decay_steps:
        linear_decay_lr(warmup + 1, d_model, warmup, scale, decay_steps)  # refuse a horizon inside the warm-up now
        sched = torch.optim.lr_scheduler.LambdaLR(
            opt, lambda k: linear_decay_lr(k + 1, d_model, warmup, scale, decay_steps))
    else:
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda k: noam_lr(k + 1, d_model, warmup, scale))
    return opt, sched


def planned_rates(scheduler: torch.optim.lr_scheduler.LambdaLR, steps: int, points: int = 1024,
                  keep: tuple[int, ...] = ()) -> tuple[np.ndarray, np.ndarray]:
    """The learning rate each step of a run will use, read from the run's own scheduler before
    it starts: step s (counted from 1) uses base × λ(s − 1). So a plot can draw the whole
    schedule of Section 5.3 ahead of the run (the warm-up's peak, the decay to come), and the
    rates the run then reports lie on it.

    At most about `points` steps, evenly spaced over 1…steps, plus every step in `keep` (the
    warm-up's end, a decay's end: the corners of the curve, exact rather than cut off)."""
    if steps < 1:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    at = np.arange(1, steps + 1) if steps <= points else np.linspace(1, steps, points).round().astype(np.int64)
    at = np.unique(np.concatenate([at, [k for k in keep if 1 <= k <= steps]]).astype(np.int64))
    base = scheduler.base_lrs[0]
    rate = scheduler.lr_lambdas[0]
    return at, np.array([base * rate(int(s) - 1) for s in at], dtype=float)


__all__ = ["noam_lr", "linear_decay_lr", "LINEAR_DECAY_FLOOR", "make_optimizer", "planned_rates", "ADAM_BETAS",
           "ADAM_EPS"]
