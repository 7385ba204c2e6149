"""Dropout (Srivastava et al. 2014; the paper's Section 5.4) with a cheaper mask on the CPU.

Profiling a training step of the bundled models on the CPU showed a third of the time in
`aten::bernoulli_`: torch draws one 32-bit random number per element to decide what to drop.
Here one 64-bit draw decides eight elements: its bytes are compared with a threshold, so the
drop rate is `p` rounded to the nearest 1/256 (0.1 → 26/256 ≈ 0.1016), and the kept values
are scaled by 1 / (1 − that rate) so every activation keeps its expected value, as in
`nn.Dropout`. On other devices, and in evaluation, this is `nn.Dropout` itself, as it is for a
rate that 1/256 steps cannot match within 2% (below about 0.04).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

_INT64 = torch.iinfo(torch.int64)


def byte_threshold(p: float) -> int:
    """How many of a byte's 256 values drop an element: p rounded to 1/256, never all of them."""
    return min(255, max(1, round(p * 256)))


def random_bytes(shape: torch.Size) -> torch.Tensor:
    """Uniform random bytes of `shape`, eight per 64-bit draw of torch's (seeded) CPU generator."""
    n = shape.numel()
    words = torch.randint(_INT64.min, _INT64.max, ((n + 7) // 8,), dtype=torch.int64)  # (⌈n/8⌉,)
    return words.view(torch.uint8)[:n].view(shape)


def byte_rate_close(p: float) -> bool:
    """Whether p rounded to 1/256 is within 2% of p (0.1 → 0.1016 is; 0.01 → 0.0117 is not)."""
    return abs(byte_threshold(p) / 256 - p) <= 0.02 * p


def byte_dropout(x: torch.Tensor, p: float) -> torch.Tensor:
    """x with each element zeroed with probability byte_threshold(p)/256, the rest scaled up."""
    drop = byte_threshold(p)
    keep = random_bytes(x.shape) >= drop  # (…) bool, True with probability 1 − drop/256
    return x * (keep * (256.0 / (256 - drop))).to(x.dtype)


class Dropout(nn.Dropout):
    """`nn.Dropout` (same name, no parameters, same state dict) with the byte mask on the CPU."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0.0:
            return x
        if x.device.type == "cpu" and 0.0 < self.p < 1.0 and not self.inplace and byte_rate_close(self.p):
            return byte_dropout(x, self.p)
        return F.dropout(x, self.p, self.training, self.inplace)


__all__ = ["Dropout", "byte_dropout", "byte_threshold", "byte_rate_close", "random_bytes"]
