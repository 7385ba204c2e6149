"""What the compare panel says in words about a `Comparison`: both outputs on one line, a token
scored by both models, the largest disagreement, and one cell of A's, B's and B − A's map."""
from __future__ import annotations

import numpy as np

from model.inference.prob_text import prob_text
from model.interpret.comparison import Comparison, ScoredOutput

AGREE_WITHIN = 0.005  # probabilities closer than this print the same at two decimals


def _outputs(c: Comparison) -> tuple[str, str, str]:
    """"Same output" or "Different outputs", and A's and B's outputs on one line each (⏎ for a newline)."""
    a_text, b_text = (text.replace("\n", "⏎") if text else "(empty)"
                      for text in (c.frame_a.output_text, c.frame_b.output_text))
    return ("Same output" if c.same_output else "Different outputs"), a_text, b_text


def outputs_line(c: Comparison) -> str:
    """"Same output — A (label): «…»   B (label): «…»" on one line (the verdict first: a short line cuts the rest)."""
    same, a_text, b_text = _outputs(c)
    return f"{same} — A ({c.label_a}): «{a_text}»   B ({c.label_b}): «{b_text}»"


def outputs_forms(c: Comparison) -> list[str]:
    """`outputs_line`, then shorter forms for a narrow line: the models' names dropped, then each
    output cut to the same share, so B's output is never the part that is lost."""
    same, a_text, b_text = _outputs(c)
    forms = [outputs_line(c)]
    for keep in (None, 32, 16, 8):
        a, b = (t if keep is None or len(t) <= keep else t[:keep - 1] + "…" for t in (a_text, b_text))
        forms.append(f"{same} — A: «{a}»   B: «{b}»")
    return list(dict.fromkeys(forms))


def token_text(output: ScoredOutput, i: int) -> str:
    """"A's step 3 “x”: A gives it 0.93, B gives it 0.41" (steps counted from 1, as the decoding panel does)."""
    p = {output.writer: float(output.own[i]), ("B" if output.writer == "A" else "A"): float(output.other[i])}
    return (f"{output.writer}'s step {i + 1} “{output.pieces[i]}”: A gives it {prob_text(p['A'])}, "
            f"B gives it {prob_text(p['B'])}")


def disagreement_text(output: ScoredOutput) -> str:
    """The token of `output` the models disagree on most, or that they agree on every token."""
    i = output.largest_disagreement()
    if i is None:
        return " "
    if abs(float(output.own[i]) - float(output.other[i])) < AGREE_WITHIN:  # "0.92 vs 0.92" says nothing
        return f"A and B agree: no output token's probability differs by {AGREE_WITHIN} or more."
    return f"Largest disagreement — {token_text(output, i)}"


def cell_text(a: np.ndarray, b: np.ndarray, q: int, k: int, q_labels: list[str], k_labels: list[str],
              allowed: np.ndarray | None = None) -> str:
    """One cell of A's and B's map of a head and their difference, or that the mask blocks it."""
    where = f"query {q} “{q_labels[q]}” → key {k} “{k_labels[k]}”"
    if allowed is not None and not allowed[q, k]:
        return f"{where}: blocked by the mask in both (weight exactly 0)"
    a_value, b_value = float(a[q, k]), float(b[q, k])
    return f"{where}: A {a_value:.4f}, B {b_value:.4f}, B − A {b_value - a_value:+.4f}"
