"""What head surgery changed in the output: the frame's tokens and probabilities before → after.

A `Frame` computed with interventions carries `baseline`, the same frame without them;
`output_changes(frame)` lines the two outputs up position by position (decoded tokens for a
model with a decoder, the [MASK] fill-ins for a masked LM) so a view can print
"before (p) → after (p)" and mark what changed.
"""
from __future__ import annotations

from dataclasses import dataclass

from model.interpret.frame import Frame


@dataclass(frozen=True)
class TokenChange:
    """One output position: the token and its probability without the edit and with it
    (None where that run's output ended earlier), and `after_prob_of_before`, the edited
    model's probability of the original token when both saw the same prefix."""

    position: int
    before: str | None
    before_prob: float | None
    after: str | None
    after_prob: float | None
    after_prob_of_before: float | None = None

    @property
    def changed(self) -> bool:
        return self.before != self.after


def _decoded(frame: Frame) -> list[tuple[str, float, object]]:
    run = frame.decode
    if run is None:
        return []
    return [(run.pieces([s.chosen])[0], float(s.model_probs[s.chosen]), s) for s in run.steps]


def _filled(frame: Frame) -> list[tuple[str, float, object]]:
    return [(p.pieces[0], float(p.probs[0]), None) for p in frame.forward.mask_predictions if p.pieces]


def output_changes(frame: Frame) -> list[TokenChange]:
    """Before → after for every output position of an intervened frame ([] without a baseline
    or without an output to compare: a pretrained encoder has no trained output layer)."""
    before_frame = frame.baseline
    if before_frame is None:
        return []
    pick = _decoded if frame.decode is not None or before_frame.decode is not None else _filled
    before, after = pick(before_frame), pick(frame)
    changes = []
    for t in range(max(len(before), len(after))):
        b = before[t] if t < len(before) else (None, None, None)
        a = after[t] if t < len(after) else (None, None, None)
        same_prefix = b[2] is not None and a[2] is not None and list(b[2].prefix) == list(a[2].prefix)
        kept = None
        if same_prefix:
            kept = float(a[2].model_probs[b[2].chosen])
        changes.append(TokenChange(t, b[0], b[1], a[0], a[1], kept))
    return changes


def describe_changes(changes: list[TokenChange]) -> str:
    """One line for a status bar or a screenshot: how many positions changed."""
    if not changes:
        return "No output to compare."
    n = sum(c.changed for c in changes)
    return "The output is unchanged." if n == 0 else f"{n} of {len(changes)} output tokens changed."
