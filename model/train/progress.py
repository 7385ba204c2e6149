"""The training run's one-line progress, as a GUI's progress bar shows it: steps, the rate over
the last seconds and the time left; or, for a run timed to a held-out target (the lecture
preset), that clock instead.
"""
from __future__ import annotations

import numpy as np

ETA_WINDOW = 10.0  # s of recent running time used for the steps/s behind "time left"


def format_duration(seconds: float) -> str:
    if seconds != seconds or seconds == float("inf"):
        return "—"
    s = int(round(seconds))
    if s >= 3600:
        return f"{s // 3600} h {s // 60 % 60:02d} min"
    if s >= 60:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s} s"


def target_text(target: float, score: float | None, reached_at: float | None, wall: float) -> str:
    """The lecture preset's clock on held-out data: "87% → 99% · 23 s", then "99% at 41 s"."""
    if reached_at is not None:
        return f"{target:.0%} at {format_duration(reached_at)}"
    now = "—" if score is None else f"{score:.0%}"
    return f"{now} → {target:.0%} · {format_duration(wall)}"


def progress_text(step: int, total: int, phase: str, walls: np.ndarray, wall_steps: np.ndarray,
                  done: bool = False, target: str = "") -> str:
    """"step 120 / 2,000 · 6 % · 41.3 steps/s · 45 s left" (the rate over the last ETA_WINDOW s);
    with a `target` clock (lecture preset) that clock instead of the rate and time left.
    Before the first step, what is happening: the model is built, the untrained probe recorded
    and the first batch made for seconds, and "step 0 / 400 · 0 %" would look stuck."""
    if step == 0 and not done and phase in ("building", "running"):
        return "building the model…" if phase == "building" else "starting: the first steps…"
    if target:  # short: the bar is narrow on a projector
        return f"step {step:,} · {target}"  # (paused: the Resume button says so)
    total = max(1, total)
    text = f"step {step:,} / {total:,} · {100.0 * step / total:.0f} %"
    if phase == "paused":
        return text + " · paused"
    if done:
        return text + (" · done" if step >= total else " · stopped")
    if len(walls) >= 2:
        recent = walls >= walls[-1] - ETA_WINDOW
        w, s = walls[recent], wall_steps[recent]
        if len(w) >= 2 and w[-1] > w[0]:
            rate = (s[-1] - s[0]) / (w[-1] - w[0])
            text += f" · {rate:.1f} steps/s · {format_duration((total - step) / max(rate, 1e-9))} left"
    return text


class RunClock:
    """A run's running time by step (the rate behind "time left") and, for a run timed to a
    held-out target, its last score and when it got there: the progress line's numbers."""

    def __init__(self, target: float | None = None, keep: int = 4096):
        self.target, self.keep = target, keep
        self.score: float | None = None
        self.reached_at: float | None = None
        self.walls, self.steps = np.empty(0), np.empty(0)

    def add_rows(self, steps: np.ndarray, walls: np.ndarray) -> None:
        self.walls = np.concatenate([self.walls, walls])[-self.keep:]
        self.steps = np.concatenate([self.steps, np.asarray(steps, float)])[-self.keep:]

    def add_score(self, score: float) -> None:
        self.score = score
        if self.target is not None and self.reached_at is None and score >= self.target:
            self.reached_at = self.now()  # the running time at the evaluated step

    def now(self) -> float:
        return float(self.walls[-1]) if len(self.walls) else 0.0

    def text(self, step: int, total: int, phase: str, done: bool = False) -> str:
        clock = "" if self.target is None else target_text(self.target, self.score, self.reached_at, self.now())
        return progress_text(step, total, phase, self.walls, self.steps, done, clock)


__all__ = ["ETA_WINDOW", "RunClock", "format_duration", "progress_text", "target_text"]
