"""A training curve's data: a growing column of values with its debiased exponential moving
average, as TensorBoard smooths noisy series."""
from __future__ import annotations

import numpy as np

SMOOTHING = 0.9  # EMA factor per step


class Series:
    """A growing float column with its debiased EMA, stored in amortised-doubling buffers."""

    def __init__(self, smoothing: float = SMOOTHING):
        self.smoothing = smoothing
        self.n = 0
        self._x = np.empty(256)
        self._y = np.empty(256)
        self._s = np.empty(256)
        self._ema = 0.0

    def clear(self) -> None:
        self.n, self._ema = 0, 0.0

    @property
    def x(self) -> np.ndarray:
        return self._x[: self.n]

    @property
    def y(self) -> np.ndarray:
        return self._y[: self.n]

    @property
    def smoothed(self) -> np.ndarray:
        return self._s[: self.n]

    def extend(self, x: np.ndarray, y: np.ndarray) -> None:
        m = len(x)
        if self.n + m > len(self._x):
            size = max(2 * len(self._x), self.n + m)
            for name in ("_x", "_y", "_s"):
                grown = np.empty(size)
                grown[: self.n] = getattr(self, name)[: self.n]
                setattr(self, name, grown)
        self._x[self.n:self.n + m] = x
        self._y[self.n:self.n + m] = y
        b, ema, k = self.smoothing, self._ema, self.n
        for i, v in enumerate(np.asarray(y, dtype=float)):
            ema = b * ema + (1 - b) * (v if np.isfinite(v) else ema)
            self._s[k + i] = ema / (1 - b ** (k + i + 1))  # debiased: no pull towards 0 at the start
        self._ema = ema
        self.n += m
