"""Claiming a target score only on a large held-out check.

A periodic check is small (the lecture preset's scores 100 pairs, to keep the clock cheap),
and a lucky 99 of 100 says little about the next 1,000. Whoever stops a run at a target —
`transformer-explorer train --stop-at`, the training panel's lecture clock — calls `confirm`:
a check that reaches the target on fewer than `CONFIRM_SIZE` pairs is repeated on at least
that many before anything says the target was reached.
"""
from __future__ import annotations

from model.train.config import EvalEvent

CONFIRM_SIZE = 500  # held-out pairs a target is confirmed on (more when the caller's final check is larger)


def confirm(trainer, event: EvalEvent, target: float | None, size: int = CONFIRM_SIZE) -> EvalEvent:
    """The check that decides whether `target` is reached: `event` itself when it misses the
    target or was already scored on at least `size` pairs, else `trainer.evaluate(size)` (whose
    pairs begin with the quick check's). A task with fewer held-out pairs is scored on all."""
    if target is None or event.score < target or event.n >= size:
        return event
    return trainer.evaluate(size)


__all__ = ["CONFIRM_SIZE", "confirm"]
