"""The words and the shape of a live run's curves, without widgets: each plot's title, tooltip
and value-axis name (full where there is room, abbreviated on a compact screen), the rule the
learning rate follows, the rate axis' unit, and how the four plots share their canvas."""
from __future__ import annotations

import math
from typing import NamedTuple

from model.train.config import METRIC_LABELS

# Short by design: a title says what a plot shows in a word or two, its tooltip says the rest.
TITLES = {"loss": "Loss", "acc": "Accuracy", "lr": "Learning rate", "speed": "Throughput"}
TOOLTIPS = {
    "loss": "Training loss (cross-entropy) of each step: thin line each step's own, thick line smoothed "
            "(debiased exponential moving average).",
    "acc": "Token accuracy on the training batches (line) and the held-out score (points).",
    "speed": "Training throughput in thousands of tokens per second (smoothed).",
}
AXIS_LABELS = {  # each value axis' name: in full, or abbreviated (compact)
    False: {"loss": "cross-entropy", "acc": "accuracy", "lr": "lr", "speed": "k tokens / s"},
    True: {"loss": "CE", "acc": "accuracy", "lr": "lr", "speed": "k tok/s"},
}
KEY_WORDS = {"exact_match": "exact", "masked_accuracy": "masked", "next_token_accuracy": "next"}  # colour keys
SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def held_out_name(metric: str) -> str:
    """The legend's name of the held-out points (what they measure)."""
    return METRIC_LABELS.get(metric, metric)


def lr_tooltip(decay_steps: int = 0) -> str:
    """The rate's rule as the run uses it: Eq. 3, or Eq. 3's warm-up then a linear decay (the
    lecture preset's `TrainConfig.lr_decay_steps`)."""
    rule = (f"warm-up, then a linear decay to step {decay_steps:,}" if decay_steps
            else "Eq. 3: warm-up, then decay as 1/√step")
    return f"Learning rate ({rule}), over the whole run: dashed ahead, a dot where the run is now."


TOOLTIPS["lr"] = lr_tooltip()


def rate_axis(peak: float) -> tuple[int, str]:
    """(exponent, axis name) counting rates in units of 10**exponent of their peak ("lr (×10⁻³)"
    beside "0 2 4 6"), not numbers like "0.0006" that widen the axis; plain "lr" for no rates."""
    exponent = math.floor(math.log10(peak)) if peak > 0 else 0
    return exponent, f"lr (×10{str(exponent).translate(SUPERSCRIPT)})" if exponent else "lr"


def colour_key_title(metric: str, tokens_colour: str, held_out_colour: str, two_lines: bool = False) -> str:
    """The accuracy plot's title naming its colours ("tokens · exact") where no legend is shown;
    on two lines for a narrow screen's plots."""
    tokens = f"<span style='color:{tokens_colour}'>tokens</span>"
    held_out = f"<span style='color:{held_out_colour}'>{KEY_WORDS.get(metric, metric)}</span>"
    return f"{tokens} ·{'<br>' if two_lines else ' '}{held_out}"


ROW_RATIO = 2.4  # a canvas wider than this × its height: the four plots in one row
SHORT_ROW = 230  # px: a row of plots lower than this drops the step axis' name
NARROW = 620  # px: a plot narrower than this has no room for a legend beside its data


class CurveShape(NamedTuple):
    in_a_row: bool  # the four plots in one row, else 2 × 2
    short_rows: bool  # no "step" under the plots (their titles say it)
    legend: bool  # a legend in the accuracy plot, else its title names the colours


def curve_shape(width: float, height: float, narrow_screen: bool, compact: bool) -> CurveShape:
    """How a canvas of `width` × `height` shows the four plots: one row on a wide, low canvas
    (never on a narrow screen), short rows without step names, a legend only with room for it."""
    in_a_row = not narrow_screen and width > ROW_RATIO * height
    short = height / (1 if in_a_row else 2) < SHORT_ROW
    return CurveShape(in_a_row, short, not compact and width / (2 if in_a_row else 1) >= NARROW)


__all__ = ["AXIS_LABELS", "KEY_WORDS", "NARROW", "TITLES", "TOOLTIPS", "CurveShape", "colour_key_title",
           "curve_shape", "held_out_name", "lr_tooltip", "rate_axis"]
