"""What a live view keeps of a run: a bounded timeline of probe snapshots, so a student can
scrub back through it, and the metrics' series with their smoothed curves (`Series`).

A run of thousands of steps sends a snapshot ~3× a second; keeping every one would grow
without bound. When the list is full every second *older* entry is dropped (the first and
the newest stay), so the timeline always spans the whole run with roughly even spacing —
dense near the present, where students look, after repeated thinning.
"""
from __future__ import annotations

from bisect import bisect_left
from typing import Generic, TypeVar

import numpy as np

T = TypeVar("T")
MAX_SNAPSHOTS = 200


class SnapshotTimeline(Generic[T]):
    """(step, item) pairs in step order, at most `capacity` of them."""

    def __init__(self, capacity: int = MAX_SNAPSHOTS):
        if capacity < 4:
            raise ValueError(f"a timeline needs room for at least 4 snapshots, got {capacity}")
        self.capacity = capacity
        self._steps: list[int] = []
        self._items: list[T] = []

    def __len__(self) -> int:
        return len(self._steps)

    def __getitem__(self, index: int) -> tuple[int, T]:
        return self._steps[index], self._items[index]

    @property
    def steps(self) -> list[int]:
        return list(self._steps)

    def clear(self) -> None:
        self._steps.clear()
        self._items.clear()

    def add(self, step: int, item: T) -> None:
        """Append (a snapshot at the same step as the last one replaces it: e.g. a new probe)."""
        if self._steps and step < self._steps[-1]:
            raise ValueError(f"snapshots arrive in step order: {step} after {self._steps[-1]}")
        if self._steps and step == self._steps[-1]:
            self._items[-1] = item
            return
        self._steps.append(step)
        self._items.append(item)
        if len(self._steps) > self.capacity:
            self._thin()

    def _thin(self) -> None:
        """Keep the first, every second one after it, and always the newest."""
        keep = list(range(0, len(self._steps) - 1, 2)) + [len(self._steps) - 1]
        keep = sorted(set(keep))
        self._steps = [self._steps[i] for i in keep]
        self._items = [self._items[i] for i in keep]

    def index_of_step(self, step: int) -> int:
        """Index of the snapshot nearest to `step` (−1 when empty)."""
        if not self._steps:
            return -1
        i = bisect_left(self._steps, step)
        if i == len(self._steps):
            return i - 1
        if i > 0 and step - self._steps[i - 1] <= self._steps[i] - step:
            return i - 1
        return i


class ViewedTimeline(SnapshotTimeline[T]):
    """A timeline and the snapshot a view shows: the newest while `live`, else the one picked,
    which stays on its step while newer snapshots arrive and older ones are thinned."""

    def __init__(self, capacity: int = MAX_SNAPSHOTS):
        super().__init__(capacity)
        self.live = True
        self.viewed = -1  # index on show (-1: none yet)

    def clear(self) -> None:
        super().clear()
        self.live, self.viewed = True, -1

    def add_viewed(self, step: int, item: T, follow: bool = False) -> bool:
        """Add a snapshot (`follow`: go live again); True if the view should show the newest."""
        self.live = self.live or follow
        past = self[self.viewed][0] if not self.live and 0 <= self.viewed < len(self) else None
        self.add(step, item)
        if not self.live:
            self.viewed = self.index_of_step(past)
        return self.live

    def select(self, index: int) -> int | None:
        """View snapshot `index`, clamped (the newest: live again); None if there is none."""
        if not len(self):
            return None
        self.viewed = max(0, min(int(index), len(self) - 1))
        self.live = self.viewed == len(self) - 1
        return self.viewed

    def viewed_step(self) -> int:
        """The step of the snapshot on show (0: none)."""
        return self[self.viewed][0] if 0 <= self.viewed < len(self) else 0


def timeline_texts(count: int, index: int, step: int, live: bool, running: bool) -> tuple[str, str, str]:
    """(label, its tooltip, the slider's tooltip) of a timeline of `count` snapshots viewing
    `index` (taken at `step`): "live" while a run follows it (its step is the progress bar's to
    name), else the snapshot's step, "latest" or "past" (a stopped run's newest is not live)."""
    if count == 0:
        return "step —", "", ""
    label = "live" if live and running else f"step {step:,} ({'latest' if live else 'past'})"
    return (label, f"The snapshot shown was taken at step {step:,}",
            f"Snapshot {index + 1} of {count}: drag to go back to an earlier step of the run")


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


__all__ = ["SnapshotTimeline", "ViewedTimeline", "timeline_texts", "MAX_SNAPSHOTS", "Series", "SMOOTHING"]
