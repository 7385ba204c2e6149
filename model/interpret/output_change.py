"""What head surgery changed in the output: the frame's tokens and probabilities before → after.

A `Frame` computed with interventions carries `baseline`, the same frame without them;
`output_changes(frame)` lines the two outputs up position by position (decoded tokens for a
model with a decoder, the [MASK] fill-ins for a masked LM) so a view can print
"before (p) → after (p)" and mark what changed; `describe_html` is that text for a label.
"""
from __future__ import annotations

import html
from collections.abc import Callable
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


def describe_changes(changes: list[TokenChange], counted: str = "output tokens") -> str:
    """One line for a status bar or a screenshot: how many positions (`counted`: what they are) changed."""
    if not changes:
        return "No output to compare."
    n = sum(c.changed for c in changes)
    return "The output is unchanged." if n == 0 else f"{n} of {len(changes)} {counted} changed."


MAX_LISTED = 3  # changed positions listed one by one (the rest are counted): it fits a projector


def _token(piece: str | None, prob: float | None, prob_text: Callable[[float], str]) -> str:
    return "(ended)" if piece is None else f"“{html.escape(piece)}” {prob_text(prob)}"


def describe_html(frame: Frame | None, prob_text: Callable[[float], str], mark: str = "<b><u>{}</u></b>") -> str:
    """Rich text of what the frame's head edits changed: both outputs (changed tokens in `mark`), the
    changed positions with their probabilities before → after (in `prob_text`), or the largest drop.
    Positions are counted as the panel showing them does: a decoder's step, a masked LM's [MASK]."""
    if frame is None:
        return "Run an input to see what the edited heads change."
    if not frame.interventions:
        return "No head is edited: click heads above to zero them, replace them by their mean, or make them uniform."
    changes = output_changes(frame)
    if not changes:
        return ("The attention maps show the edit; this model has no trained output to compare "
                "(a pretrained encoder has no task head).")
    before = " ".join(html.escape(c.before) for c in changes if c.before is not None) or "(nothing)"
    after = " ".join(mark.format(html.escape(c.after)) if c.changed else html.escape(c.after)
                     for c in changes if c.after is not None) or "(nothing)"
    decoded = getattr(frame, "decode", None) is not None \
        or getattr(getattr(frame, "baseline", None), "decode", None) is not None
    unit = "step" if decoded else "[MASK]"
    # a decoder counts its steps, the last one's <eos> included (the output line counts tokens without it)
    counted = "decoding steps" if decoded else "[MASK] fill-ins"
    lines = [f"<b>{describe_changes(changes, counted)}</b>", f"before: {before}", f"after: {after}"]
    changed = [c for c in changes if c.changed]
    if changed:
        items = [f"{c.position + 1}: {_token(c.before, c.before_prob, prob_text)} → "
                 f"{_token(c.after, c.after_prob, prob_text)}"
                 + (f" (now p(“{html.escape(c.before)}”) = {prob_text(c.after_prob_of_before)})"
                    if c.after_prob_of_before is not None and c.before is not None else "")
                 for c in changed[:MAX_LISTED]]
        more = f" · … {len(changed) - MAX_LISTED} more" if len(changed) > MAX_LISTED else ""
        lines.append(f"{unit} " + " · ".join(items) + more)
    else:
        worst = min(changes, key=lambda c: (c.after_prob or 0) - (c.before_prob or 0))
        if (worst.before_prob or 0) - (worst.after_prob or 0) < 0.005:  # "0.92 → 0.92" said nothing
            lines.append("No token's probability fell by 0.005 or more: at two decimals the edit changes nothing here.")
        else:
            lines.append(f"Largest drop: {unit} {worst.position + 1}, {_token(worst.before, worst.before_prob, prob_text)}"
                         f" → {_token(worst.after, worst.after_prob, prob_text)}")
    return "<br>".join(lines)
