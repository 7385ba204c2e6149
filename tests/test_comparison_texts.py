"""The compare panel's words (model.interpret.comparison_texts): each names the numbers it was
given, in the order of the two models, and says when there is nothing to tell apart."""
from __future__ import annotations

import numpy as np

from model.inference.prob_text import prob_text
from model.interpret.comparison import ScoredOutput, compare
from model.interpret.comparison_texts import (
    AGREE_WITHIN,
    cell_text,
    disagreement_text,
    outputs_forms,
    outputs_line,
    token_text,
)
from model.io.checkpoints import bundled_checkpoints, load_checkpoint


def test_a_token_names_a_s_and_b_s_probability_whoever_wrote_it():
    by_b = ScoredOutput("B", ["x", "y"], own=np.array([0.9, 0.3]), other=np.array([0.1, 0.25]))
    text = token_text(by_b, 0)
    assert text.startswith("B's step 1 “x”")
    assert text.index(f"A gives it {prob_text(0.1)}") < text.index(f"B gives it {prob_text(0.9)}")


def test_the_largest_disagreement_is_the_token_furthest_apart_and_agreement_is_said():
    out = ScoredOutput("A", ["p", "q", "r"], own=np.array([0.5, 0.9, 0.2]), other=np.array([0.45, 0.1, 0.2]))
    assert disagreement_text(out) == f"Largest disagreement — {token_text(out, 1)}"
    close = ScoredOutput("A", ["p"], own=np.array([0.5]), other=np.array([0.5 + AGREE_WITHIN / 2]))
    assert disagreement_text(close).startswith("A and B agree")
    assert disagreement_text(ScoredOutput("A", [], own=np.array([]), other=np.array([]))).strip() == ""


def test_a_cell_reads_both_weights_and_their_difference_or_the_mask():
    a, b = np.array([[0.25, 0.0], [0.5, 0.5]]), np.array([[0.75, 0.0], [0.125, 0.875]])
    allowed = np.array([[True, False], [True, True]])
    text = cell_text(a, b, 1, 0, ["q0", "q1"], ["k0", "k1"], allowed)
    assert text == "query 1 “q1” → key 0 “k0”: A 0.5000, B 0.1250, B − A -0.3750"
    assert "blocked by the mask" in cell_text(a, b, 0, 1, ["q0", "q1"], ["k0", "k1"], allowed)


def test_the_outputs_line_is_one_line_with_both_outputs():
    reverse = load_checkpoint(bundled_checkpoints()["reverse"])
    c = compare(reverse, reverse, "hello", label_a="one", label_b="two")
    line = outputs_line(c)
    assert "\n" not in line and line.startswith("Same output")
    text = c.frame_a.output_text.replace("\n", "⏎")
    assert f"A (one): «{text}»" in line and f"B (two): «{text}»" in line


def test_a_narrow_outputs_line_shortens_both_outputs_alike():
    """The forms a short line tries: names dropped, then A's and B's outputs cut to the same share."""
    reverse = load_checkpoint(bundled_checkpoints()["reverse"])
    c = compare(reverse, reverse, "abcdefghijklmnopqrstuvwxyz", label_a="one", label_b="two")
    forms = outputs_forms(c)
    assert forms[0] == outputs_line(c) and len(forms) >= 3
    assert [len(f) for f in forms] == sorted((len(f) for f in forms), reverse=True)
    last = forms[-1]
    a, b = last.split("«")[1].split("»")[0], last.split("«")[2].split("»")[0]
    assert a.endswith("…") and b.endswith("…") and len(a) == len(b) <= 8
