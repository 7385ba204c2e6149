"""`Pacer`: spaces repeated work by time and by what it costs, so a live view (redrawing curves,
copying a model for other views) takes a bounded share of the time a training thread needs."""
from __future__ import annotations

import time


class Pacer:
    """At most one piece of work per `least_gap` seconds, and at most `share` of the time spent
    on it: the gap grows to cost / share when the last piece was costly."""

    def __init__(self, least_gap: float, share: float):
        if least_gap < 0 or not 0 < share <= 1:
            raise ValueError(f"a pacer needs a gap ≥ 0 and a share in (0, 1], got {least_gap} and {share}")
        self.least_gap, self.share = least_gap, share
        self.last = None  # monotonic time of the last piece (None: none yet)
        self.cost = 0.0  # seconds the last piece took

    def reset(self) -> None:
        """The next piece may go at once."""
        self.last = None

    def wait(self, cost: float | None = None, now: float | None = None) -> float:
        """Seconds until the next piece may go (0: now); `cost` overrides the last measured one."""
        if self.last is None:
            return 0.0
        now = time.monotonic() if now is None else now
        gap = max(self.least_gap, (self.cost if cost is None else cost) / self.share)
        return max(0.0, gap - (now - self.last))

    def started(self, now: float | None = None) -> None:
        self.last = time.monotonic() if now is None else now


__all__ = ["Pacer"]
