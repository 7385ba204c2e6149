"""The texts of the explorer's rows of next-token candidates, without Qt: a masked LM's blanks in
their sentence, the sampling playground's rows (which filter cut a token) and a decoding step's
rank tips. The panels only draw them."""
from __future__ import annotations

import html
from collections.abc import Sequence

from model.inference.labels import display_piece

MASK_EXPLAIN = ("Encoder-only (BERT-like): the whole sentence is read at once — no causal mask, so each blank is "
                "guessed from the words on both sides. Bars: the model's softmax at that position (top 5; orange = "
                "the filling).")


def words_html(pieces: Sequence[str], marks: dict[int, str], lo: int = 0, hi: int | None = None) -> str:
    """Pieces lo…hi as words (escaped for rich text), the rich text `marks[i]` in place of each
    position i it has; "…" where words are left out."""
    hi = len(pieces) if hi is None else hi
    words = [marks[i] if i in marks else html.escape(display_piece(pieces[i])) for i in range(lo, hi)]
    return ("… " if lo > 0 else "") + " ".join(words) + (" …" if hi < len(pieces) else "")


def mask_heading(number: int, position: int, candidates: Sequence[str]) -> tuple[str, str]:
    """The heading of the number-th [MASK] (counted from 1), in two parts a title may set on two
    lines: where it is, and its best guess."""
    best = candidates[0] if candidates else "?"
    return f"[MASK] {number} · position {position}:", f"best guess “{display_piece(best)}”"


def mask_hint(mask_token: str, example: str) -> str:
    """What to type when the input has no mask symbol."""
    return (f"No {mask_token} in the input. Type {mask_token} where a word is missing, "
            f"e.g. “{example}”, and the model guesses the word from the words around it.")


def sampled_rows(notes: Sequence[str], tempered: Sequence[float], final: Sequence[float]) -> list[str]:
    """Each row's value: its renormalised probability, or the filter that cut it and what it had."""
    return [f"✂ {note}  (was {t:.3f})" if note else f"{f:.3f}" for note, t, f in zip(notes, tempered, final)]


def rows_title(n: int, vocab: int) -> str:
    return f"The {n} most probable of {vocab:,} tokens" if n else ""


def rank_tips(ranks: Sequence[int], probs: Sequence[float], k: int) -> list[str]:
    """Each row's tooltip: its exact probability and its rank (0-based `ranks`) among the top k."""
    return [f"p = {p:.6f}, " + (f"rank {r + 1}" if r < k else f"below the top {k}") for r, p in zip(ranks, probs)]


def generated_heading(method: str, seed: int) -> str:
    """How a generated text was made: "sampled, seed s", or the method's name."""
    return f"sampled, seed {seed}" if method == "sample" else method


ZOOM_ROOM = 1.25  # a zoomed axis reaches this far past the largest value (room for its number)


def probability_axis_end(top: float, zoom: bool) -> float:
    """Where a probability axis ends: at 1, or zoomed just past the largest value, never past 1."""
    return min(1.0, max(top, 1e-6) * ZOOM_ROOM) if zoom else 1.0


def values_inside(rights: Sequence[float], widths: Sequence[float], end: float) -> list[bool]:
    """Which rows' numbers go inside their bar's end rather than right of it: those whose number,
    `widths` wide (axis units), would reach past the axis's `end`."""
    return [right + width > end for right, width in zip(rights, widths)]


def mask_context(pieces: Sequence[str], position: int, around: int) -> str:
    """A [MASK] in its context as plain text: `around` words each side, the blank as "____"."""
    lo, hi = max(0, position - around), min(len(pieces), position + around + 1)
    words = ["____" if i == position else display_piece(pieces[i]) for i in range(lo, hi)]
    return ("… " if lo > 0 else "") + " ".join(words) + (" …" if hi < len(pieces) else "")
