"""What a training run sends the GUI: plain data, never a live tensor or the model being trained.

`model.train.live_loop.TrainingLoop` yields one of these at a time; a GUI routes each to its
own handler (the explorer's `TrainingRun`: to the Qt signal of the same meaning, `rows`,
`evaluated`, `saved` …). Besides these, a held-out `model.train.trainer.EvalEvent` is sent as it is.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from model.inference.bundle import ForwardResult, ModelBundle

COLUMNS = ("step", "loss", "accuracy", "lr", "tokens_per_s", "wall")


@dataclass
class MetricRows:
    """Steps since the last batch as numpy columns (`wall`: seconds of running, pauses excluded)."""

    step: np.ndarray
    loss: np.ndarray
    accuracy: np.ndarray
    lr: np.ndarray
    tokens_per_s: np.ndarray
    wall: np.ndarray

    def __len__(self) -> int:
        return len(self.step)

    @classmethod
    def from_tuples(cls, rows: list[tuple]) -> MetricRows:
        """One tuple per step, in COLUMNS order."""
        cols = list(zip(*rows))
        return cls(np.asarray(cols[0], dtype=np.int64), *(np.asarray(c, dtype=np.float64) for c in cols[1:]))


@dataclass
class RunInfo:
    task: str
    model: str
    device: str
    steps: int
    warmup: int
    probe: str
    threads: int
    config: dict  # the model's TransformerConfig.to_dict()
    src_vocab: list
    tgt_vocab: list
    # (steps, rates): the learning rate the run will use at each step, read from its scheduler
    # (`model.train.optimizer.planned_rates`), drawn ahead of the run
    planned_rates: tuple = ()

    def headline(self) -> str:
        """What the panel says once the model is built (rich text)."""
        threads = f"{self.threads} thread{'s' if self.threads != 1 else ''}"
        sizes, _, parameters = self.model.rpartition(" · ")  # "d_model 64, … · 239,262 parameters"
        # The essentials make the first sentence, the sizes the second.
        first = f"Training <b>{self.task}</b> on <b>{self.device}</b> ({threads}): {parameters}."
        rest = f" Sizes: {sizes}; warm-up {self.warmup:,} steps." if sizes else f" Warm-up {self.warmup:,} steps."
        return first + rest


@dataclass
class Snapshot:
    """The probe's recorded forward at one step of the run."""

    step: int
    result: ForwardResult
    probe: str


@dataclass
class Offer:
    """A CPU copy of the trained model (nobody trains it). The panel shows it in the other
    panels (`Session.show_model`) or makes it the session's model; the pipeline runs it."""

    bundle: ModelBundle
    step: int
    reason: str  # "show" (a live view) | "asked" (use it) | "finished" | "stopped" (the run's end)
    cost: float = 0.0  # s the worker spent copying it (paces the live views)


def shown_elsewhere(label: str, own_name: str) -> str:
    """The sentence that says other views show the run's model (named `label`) for a while."""
    return (f" The other panels show this run's model (“{label}”) in place of “{own_name}” "
            f"until it ends or you go back.")


def run_ended(outcome: str, step: int, offer: Offer | None, own_name: str | None, was_shown: bool) -> str:
    """What a GUI says when a run ends ("finished" all its steps, or "stopped"): how far it got,
    that the session's own model (`own_name`) is back where the run's was shown, and how to keep
    the trained copy `offer` the run handed over at its end."""
    text = f"Training {'finished' if outcome == 'finished' else 'stopped'} after {step:,} steps."
    if offer is not None and offer.reason == outcome and own_name is not None:
        back = f" The panels show “{own_name}” again." if was_shown else ""
        text += f"{back} “Use this model” makes the trained model (step {offer.step:,}) the session's model."
    return text


# One line of text each, for the run's str signals.
@dataclass(frozen=True)
class Phase:
    text: str  # "building" | "running" | "paused" | "finishing"


@dataclass(frozen=True)
class Saved:
    text: str  # the checkpoint's folder


@dataclass(frozen=True)
class SaveFailed:
    text: str


@dataclass(frozen=True)
class ProbeFailed:
    text: str  # why the probe input cannot be read


@dataclass(frozen=True)
class Failed:
    text: str  # a training error: the run pauses (or could not start), nothing is lost


# What a GUI says of each text message: (its words, its level, also in the window's status line)
REPORTS = {ProbeFailed: ("Probe input: {}", "warning", False), Saved: ("Checkpoint saved to {}", "info", True),
           SaveFailed: ("Could not save the checkpoint: {}", "error", True), Failed: ("{}", "error", True)}


def report(message: ProbeFailed | Saved | SaveFailed | Failed) -> tuple[str, str, bool]:
    """(text, level, whether the status line says it too) of a text message (`REPORTS`)."""
    words, level, everywhere = REPORTS[type(message)]
    return words.format(message.text), level, everywhere


__all__ = ["COLUMNS", "REPORTS", "MetricRows", "RunInfo", "Snapshot", "Offer", "Phase", "Saved", "SaveFailed",
           "ProbeFailed", "Failed", "report", "run_ended", "shown_elsewhere"]
