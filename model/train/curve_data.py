"""What a live run's curves plot, without widgets: the metrics' `Series` buffers, the held-out
scores, the learning rate planned ahead of the run and its warm-up step, and from them each
curve's points and the rate plot's unit and range (`CurveData.frame`). A view only draws it."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from model.train.curve_texts import rate_axis
from model.train.timeline import Series

SERIES = ("loss", "accuracy", "lr", "tokens_per_s")  # the columns of `MetricRows` kept
OFF_PLAN = 1.05  # a rate this far above its plan's peak widens the rate axis to show it


class CurveFrame(NamedTuple):
    """One redraw's worth: each curve's (x, y), whether no step has come yet, the rate axis'
    (exponent, name) and its top when the run left its plan (else None: the plan's range holds)."""

    lines: dict[str, tuple[np.ndarray, np.ndarray]]
    waiting: bool
    rate_unit: tuple[int, str]
    rate_top: float | None


class CurveData:
    """A run's metrics as the curves show them: the loss raw and smoothed (debiased EMA), the
    training accuracy smoothed, the throughput in thousands of tokens per second, the rate exact
    with a dot where the run is now, and the held-out scores as points."""

    def __init__(self):
        self.series = {name: Series() for name in SERIES}
        self.exact_steps: list[int] = []
        self.exact_values: list[float] = []
        self.held_out_metric = "exact_match"
        self.warmup_step: int | None = None
        self.lr_decay_steps = 0  # the run's TrainConfig.lr_decay_steps (0: Eq. 3)
        self.plan_steps, self.plan_rates = np.zeros(0), np.zeros(0)
        self.dirty = False  # new numbers since the last `frame`

    def reset(self, warmup: int | None = None, decay_steps: int = 0) -> None:
        """A new run: nothing recorded, no plan; its warm-up step and decay rule."""
        for s in self.series.values():
            s.clear()
        self.exact_steps.clear()
        self.exact_values.clear()
        self.warmup_step, self.lr_decay_steps, self.dirty = warmup, decay_steps, False
        self.plan_steps, self.plan_rates = np.zeros(0), np.zeros(0)

    def add_rows(self, rows) -> None:
        """Append a `MetricRows` batch to the buffers."""
        x = rows.step.astype(float)
        for name, series in self.series.items():
            series.extend(x, getattr(rows, name))
        self.dirty = True

    def add_score(self, step: int, score: float, metric: str = "exact_match") -> bool:
        """A held-out evaluation; True when it measured another metric than the last one."""
        changed = self.set_metric(metric)
        self.exact_steps.append(step)
        self.exact_values.append(score)
        self.dirty = True
        return changed

    def set_metric(self, metric: str) -> bool:
        """What the held-out points measure; True if it changed."""
        changed, self.held_out_metric = metric != self.held_out_metric, metric
        return changed

    def set_plan(self, steps, rates) -> None:
        """The rates the run's scheduler will use (`RunInfo.planned_rates`)."""
        self.plan_steps, self.plan_rates = np.asarray(steps, float), np.asarray(rates, float)

    def planned_peak(self) -> float:
        return float(self.plan_rates.max()) if len(self.plan_rates) else 0.0

    def plan_range(self) -> tuple[tuple[float, float], tuple[float, float]] | None:
        """The rate plot's (x, y) ranges spanning the whole planned run (None: no plan)."""
        if not len(self.plan_steps):
            return None
        return (0.0, float(self.plan_steps[-1])), (0.0, self.planned_peak())

    def frame(self) -> CurveFrame:
        """Every curve's points now (marks the numbers as drawn)."""
        self.dirty = False
        loss, acc, lr, speed = (self.series[k] for k in SERIES)
        lines = {"loss_raw": (loss.x, loss.y), "loss": (loss.x, loss.smoothed), "accuracy": (acc.x, acc.smoothed),
                 "tokens_per_s": (speed.x, speed.smoothed / 1000),  # short tick labels
                 "lr": (lr.x, lr.y), "lr_now": (lr.x[-1:], lr.y[-1:]),  # exact: the schedule is the point
                 "exact": (np.asarray(self.exact_steps, float), np.asarray(self.exact_values, float))}
        planned = self.planned_peak()
        peak = max(float(np.max(lr.y)) if lr.n else 0.0, planned)
        off_plan = bool(planned) and peak > planned * OFF_PLAN
        return CurveFrame(lines, loss.n == 0, rate_axis(peak), peak if off_plan else None)


__all__ = ["CurveData", "CurveFrame", "OFF_PLAN", "SERIES"]
