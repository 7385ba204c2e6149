"""The output before → after head surgery, as rich text: both outputs, and each changed position
with its token and probability before and after (`model.interpret.output_change`)."""
from __future__ import annotations

import html

from explorer.style import prob_text
from model.interpret.frame import Frame
from model.interpret.output_change import TokenChange, describe_changes, output_changes

MAX_LISTED = 3  # changed positions listed one by one (the rest are counted): it fits a projector


def _esc(piece: str) -> str:
    """A token as rich text inside a {role} template (braces doubled)."""
    return html.escape(piece).replace("{", "{{").replace("}", "}}")


def _token(piece: str | None, prob: float | None) -> str:
    if piece is None:
        return "(ended)"
    return f"“{_esc(piece)}” {prob_text(prob)}"


def _line(changes: list[TokenChange], before: bool) -> str:
    """The output as tokens, the changed ones in the `changed` colour."""
    out = []
    for c in changes:
        piece = c.before if before else c.after
        if piece is None:
            continue
        text = _esc(piece)
        out.append(f"<b><u><span style='color:{{accent_text}}'>{text}</span></u></b>" if c.changed and not before
                   else text)
    return " ".join(out) or "(nothing)"


def _unit(frame) -> str:
    """What an output's number counts, as the panel showing it does: a decoder's step or a [MASK]."""
    decoded = getattr(frame, "decode", None) is not None \
        or getattr(getattr(frame, "baseline", None), "decode", None) is not None
    return "step" if decoded else "[MASK]"


def describe(frame: Frame | None) -> str:
    """The view's rich text (with {role} colour fields) for a frame."""
    if frame is None:
        return "Run an input to see what the edited heads change."
    if not frame.interventions:
        return "No head is edited: click heads above to zero them, replace them by their mean, or make them uniform."
    changes = output_changes(frame)
    if not changes:
        return ("The attention maps show the edit; this model has no trained output to compare "
                "(a pretrained encoder has no task head).")
    lines = [f"<b>{describe_changes(changes)}</b>",
             f"before: {_line(changes, True)}", f"after: {_line(changes, False)}"]
    changed = [c for c in changes if c.changed]
    items = []
    for c in changed[:MAX_LISTED]:
        kept = f" (now p(“{_esc(c.before)}”) = {prob_text(c.after_prob_of_before)})" \
            if c.after_prob_of_before is not None and c.before is not None else ""
        items.append(f"{c.position + 1}: {_token(c.before, c.before_prob)} → {_token(c.after, c.after_prob)}{kept}")
    unit = _unit(frame)
    if changed:
        more = f" · … {len(changed) - MAX_LISTED} more" if len(changed) > MAX_LISTED else ""
        lines.append(f"{unit} " + " · ".join(items) + more)
    if not changed:
        worst = min(changes, key=lambda c: (c.after_prob or 0) - (c.before_prob or 0))
        drop = (worst.before_prob or 0) - (worst.after_prob or 0)
        if drop < 0.005:  # "0.92 → 0.92" said nothing: say that nothing moved
            lines.append("No token's probability fell by 0.005 or more: at two decimals the edit changes nothing here.")
        else:
            lines.append(f"Largest drop: {unit} {worst.position + 1}, {_token(worst.before, worst.before_prob)} → "
                         f"{_token(worst.after, worst.after_prob)}")
    return "<br>".join(lines)

