"""The training curves' texts, short by design: each plot's title says what it plots in a word
or two, its tooltip says the rest (which line is smoothed, which equation the rate follows), and
the held-out score's name for each objective. The same titles on every screen; only where the
legend is folded away (PROJECTOR, NARROW or a narrow canvas) does the accuracy title name its
colours, as the legend would."""
from __future__ import annotations

from explorer import style
from explorer.screen import ScreenClass

# The held-out score each objective reports (EvalEvent.metric): legend name, colour-key word.
METRIC_NAMES = {"exact_match": ("exact match (held-out)", "exact"),
                "masked_accuracy": ("masked-token accuracy (held-out)", "masked"),
                "next_token_accuracy": ("next-token accuracy (held-out)", "next")}

TITLES = {"loss": "Loss", "acc": "Accuracy", "lr": "Learning rate", "speed": "Throughput"}

TOOLTIPS = {
    "loss": "Training loss (cross-entropy) of each step: thin line each step's own, thick line smoothed "
            "(debiased exponential moving average).",
    "acc": "Token accuracy on the training batches (line) and the held-out score (points).",
    "speed": "Training throughput in thousands of tokens per second (smoothed).",
}

# Each value axis' title per screen class: the full word where there is room (WIDE), the
# abbreviation on a projector's or a narrow screen's shorter plots.
AXIS_LABELS = {
    ScreenClass.WIDE: {"loss": "cross-entropy", "acc": "accuracy", "speed": "k tokens / s"},
    ScreenClass.PROJECTOR: {"loss": "CE", "acc": "accuracy", "speed": "k tok/s"},
    ScreenClass.NARROW: {"loss": "CE", "acc": "accuracy", "speed": "k tok/s"},
}


def colour_key_title(metric: str = "exact_match", two_lines: bool = False) -> str:
    """The accuracy title that names its colours ("tokens · exact") in place of the legend; on two
    lines for a NARROW screen's plots."""
    short = METRIC_NAMES.get(metric, (metric, metric))[1]
    tokens = f"<span style='color:{style.current().accuracy}'>tokens</span>"
    held_out = f"<span style='color:{style.current().exact}'>{short}</span>"
    return f"{tokens} ·{'<br>' if two_lines else ' '}{held_out}"


def lr_tooltip(decay_steps: int = 0) -> str:
    """The rate's rule as the run uses it: Eq. 3 throughout, or Eq. 3's warm-up then a linear
    decay (`TrainConfig.lr_decay_steps`, the lecture preset). The plot spans the whole run (its
    step axis is not the other plots')."""
    rule = (f"warm-up, then a linear decay to step {decay_steps:,}" if decay_steps
            else "Eq. 3: warm-up, then decay as 1/√step")
    return f"Learning rate ({rule}), over the whole run: dashed ahead, a dot where the run is now."
