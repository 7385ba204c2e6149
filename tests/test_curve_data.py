"""What the live curves plot, without widgets: the smoothed loss is a debiased EMA (checked
against a hand-written loop), throughput reads in thousands, the rate's dot is the newest rate,
the held-out points keep their steps, and the rate axis follows the plan unless the run leaves it."""
from __future__ import annotations

import numpy as np
import pytest

from model.train.curve_data import OFF_PLAN, CurveData
from model.train.live_messages import MetricRows
from model.train.timeline import SMOOTHING


def rows(steps, loss, lr=1e-3):
    n = len(steps)
    return MetricRows(step=np.asarray(steps), loss=np.asarray(loss, float), accuracy=np.linspace(0.1, 0.9, n),
                      lr=np.full(n, lr), tokens_per_s=np.full(n, 2500.0), wall=np.arange(n) * 0.1)


def debiased_ema(values, b=SMOOTHING):
    out, ema = [], 0.0
    for i, v in enumerate(values, start=1):
        ema = b * ema + (1 - b) * v
        out.append(ema / (1 - b ** i))
    return out


def test_each_curve_plots_its_series_the_loss_smoothed_as_a_debiased_ema():
    data = CurveData()
    assert data.frame().waiting  # nothing yet: the plots say the steps are coming
    loss = [4.0, 3.0, 3.5, 2.0, 1.0, 1.5]
    data.add_rows(rows([1, 2, 3], loss[:3]))
    data.add_rows(rows([4, 5, 6], loss[3:], lr=2e-3))  # in two batches: the EMA carries over
    assert data.dirty
    frame = data.frame()
    assert not data.dirty and not frame.waiting
    x, raw = frame.lines["loss_raw"]
    assert list(x) == [1, 2, 3, 4, 5, 6] and list(raw) == loss
    assert frame.lines["loss"][1] == pytest.approx(debiased_ema(loss))
    assert frame.lines["tokens_per_s"][1] == pytest.approx([2.5] * 6)  # thousands of tokens per second
    assert list(frame.lines["lr_now"][0]) == [6] and list(frame.lines["lr_now"][1]) == [2e-3]
    assert frame.rate_unit == (-3, "lr (×10⁻³)") and frame.rate_top is None  # no plan: nothing to leave


def test_held_out_scores_keep_their_steps_and_a_new_metric_is_reported():
    data = CurveData()
    assert not data.add_score(10, 0.25)  # exact match, as before
    assert data.add_score(20, 0.5, "masked_accuracy")
    x, y = data.frame().lines["exact"]
    assert list(x) == [10, 20] and list(y) == [0.25, 0.5]
    assert data.held_out_metric == "masked_accuracy"


def test_the_rate_axis_spans_the_plan_and_widens_only_when_the_run_leaves_it():
    data = CurveData()
    steps = np.arange(1, 101)
    data.set_plan(steps, np.minimum(steps, 40) * 1e-5)
    assert data.plan_range() == ((0.0, 100.0), (0.0, pytest.approx(4e-4)))
    data.add_rows(rows([1, 2], [3.0, 2.0], lr=4e-4 * OFF_PLAN * 0.99))
    assert data.frame().rate_top is None  # within the plan
    data.add_rows(rows([3], [1.0], lr=1e-3))
    assert data.frame().rate_top == pytest.approx(1e-3)
    data.reset(warmup=40, decay_steps=80)
    assert data.plan_range() is None and data.frame().waiting and data.exact_steps == []
    assert (data.warmup_step, data.lr_decay_steps) == (40, 80)
