"""The training curves' titles: each plot's longest title first, so the plot shows the longest
that fits (a narrow accuracy plot names its colours in its title in place of a legend), and
the held-out score's name for each objective."""
from __future__ import annotations

import re

from explorer import style

# The held-out score each objective reports (EvalEvent.metric): legend name, narrow-title word.
METRIC_NAMES = {"exact_match": ("exact match (held-out)", "exact"),
                "masked_accuracy": ("masked-token accuracy (held-out)", "masked"),
                "next_token_accuracy": ("next-token accuracy (held-out)", "next")}


def acc_titles(metric: str = "exact_match") -> tuple[str, str]:
    """(wide title, narrow title): narrow, the title names the colours (no legend)."""
    return ("Accuracy", narrow_acc_titles(metric)[0])


def narrow_acc_titles(metric: str = "exact_match") -> tuple[str, ...]:
    """The accuracy title that names its colours, longest first: on one line, or on two where
    the plot is narrower than it."""
    short = METRIC_NAMES.get(metric, (metric, metric))[1]
    tokens = f"<span style='color:{style.current().accuracy}'>tokens</span>"
    held_out = f"<span style='color:{style.current().exact}'>{short}</span>"
    return (f"{tokens} · {held_out}", f"{tokens} ·<br>{held_out}")


def plain_lines(title: str) -> list[str]:
    """A title's lines as read (its HTML tags dropped): what its width is measured on."""
    return [re.sub(r"<[^>]+>", "", line) for line in title.split("<br>")]


def lr_titles(decay_steps: int = 0) -> tuple[str, ...]:
    """The rate's rule as the run uses it, longest first (the plot shows the longest that fits):
    Eq. 3 throughout, or Eq. 3's warm-up then a linear decay (`TrainConfig.lr_decay_steps`, the
    lecture preset). A title must not claim Eq. 3 for a curve that is not. Where there is room it
    says the plot spans the whole run (its step axis is not the other plots')."""
    if decay_steps:
        return (f"Learning rate (warm-up, linear decay to step {decay_steps:,}), whole run",
                f"Learning rate (warm-up, linear decay to step {decay_steps:,})", "Learning rate (linear decay)",
                "Learning rate")
    return ("Learning rate (Eq. 3), whole run", "Learning rate (Eq. 3)", "Learning rate")


def loss_titles(narrow: bool) -> tuple[str, ...]:
    """Longest first: the title names the thick line (the smoothed loss) where there is room, so
    the thin one beside it reads as each step's own loss (no legend on this plot)."""
    return (("Loss (thick: smoothed)", "Loss") if narrow else
            ("Training loss (thick: smoothed)", "Loss (thick: smoothed)", "Training loss"))


# (wide title, narrow title) per plot; a narrow accuracy plot names its colours in the title.
TITLES = {
    "loss": ("Training loss", "Loss"),
    "acc": acc_titles(),
    "lr": lr_titles()[::len(lr_titles()) - 1],
    "speed": ("Throughput", "Throughput"),
}
# a value axis shorter than its title says it in short; the learning rate's title changes with
# its unit, and is short already
SHORT_TITLES = {"cross-entropy": "CE", "accuracy": "acc.", "k tokens / s": "k tok/s"}
