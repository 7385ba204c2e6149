"""The line view's content (as BertViz's head view), Qt-free: the query → key lines one head draws,
all of them or a hovered token's ("q" | "k", index), and what is said of the hovered token."""
from __future__ import annotations

import numpy as np

MIN_LINE_WEIGHT = 0.01  # lighter lines are left out: invisible anyway, and faster to paint


def drawn_lines(weights: np.ndarray, allowed: np.ndarray, hover: tuple[str, int] | None = None) -> list:
    """(query, key, weight) of each allowed weight ≥ MIN_LINE_WEIGHT; with `hover`, only that token's."""
    w = np.where(allowed, weights, 0.0)
    keep = w >= MIN_LINE_WEIGHT
    if hover is not None:  # the hovered query's row, or the hovered key's column
        keep &= (np.arange(w.shape[0])[:, None] if hover[0] == "q" else np.arange(w.shape[1])) == hover[1]
    return [(int(q), int(k), float(w[q, k])) for q, k in zip(*np.nonzero(keep))]


def hover_marks(weights: np.ndarray, allowed: np.ndarray, hover: tuple[str, int] | None):
    """({(side, index): weight} of the tokens the hovered one's lines reach, {(side, index)} of those
    the mask hides from it); nothing without a hover."""
    if hover is None:
        return {}, set()
    side, i = hover
    reached = {("k", k) if side == "q" else ("q", q): w for q, k, w in drawn_lines(weights, allowed, hover)}
    blocked = ~np.asarray(allowed, dtype=bool)
    hidden = np.nonzero(blocked[i] if side == "q" else blocked[:, i])[0]
    return reached, {("k" if side == "q" else "q", int(j)) for j in hidden}


def line_hover_text(weights: np.ndarray, allowed: np.ndarray, q_labels, k_labels, hover: tuple[str, int]) -> str:
    """The readout of a hovered token: a query's three strongest keys, a key's weight received."""
    side, i = hover
    w = np.where(allowed, weights, 0.0)
    if side == "q":
        best = ", ".join(f"“{k_labels[k]}” {w[i, k]:.3f}" for k in np.argsort(-w[i])[:3] if w[i, k] > 0)
        return f"query {i} “{q_labels[i]}” attends most to: {best}"
    return (f"key {i} “{k_labels[i]}”: total weight received {w[:, i].sum():.3f} "
            f"from {int((w[:, i] >= MIN_LINE_WEIGHT).sum())} queries")
