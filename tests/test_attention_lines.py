"""The line view's content (model.interpret.attention_lines): which lines
one head draws and what a hovered token's readout says, against hand-written loops over the weights."""
import numpy as np

from model.interpret.attention_lines import MIN_LINE_WEIGHT, drawn_lines, hover_marks, line_hover_text


def _map():
    rng = np.random.default_rng(0)
    allowed = np.tril(np.ones((4, 5), dtype=bool), k=1)
    weights = np.where(allowed, rng.random((4, 5)), 0.7)  # a masked cell's weight is never drawn
    weights[0, 1] = 0.001  # below the floor: no line
    return weights, allowed


def test_every_line_is_an_allowed_weight_above_the_floor():
    weights, allowed = _map()
    expected = [(q, k) for q in range(4) for k in range(5) if allowed[q, k] and weights[q, k] >= MIN_LINE_WEIGHT]
    lines = drawn_lines(weights, allowed)
    assert [(q, k) for q, k, _ in lines] == expected
    assert np.allclose([w for *_, w in lines], [weights[q, k] for q, k in expected])


def test_hovering_keeps_only_the_tokens_lines():
    weights, allowed = _map()
    everything = set(drawn_lines(weights, allowed))
    for hover, index in ((("q", 2), 0), (("k", 1), 1)):
        only = drawn_lines(weights, allowed, hover)
        assert only and {line[index] for line in only} == {hover[1]} and set(only) <= everything
        assert set(only) == {line for line in everything if line[index] == hover[1]}


def test_hover_texts_name_the_strongest_keys_and_the_weight_received():
    weights, allowed = _map()
    row = np.where(allowed[3], weights[3], 0.0)
    top = sorted(range(5), key=lambda k: -row[k])[:3]
    text = line_hover_text(weights, allowed, list("abcd"), list("vwxyz"), ("q", 3))
    assert text.startswith("query 3 “d” attends most to: ")
    assert text.split(": ", 1)[1].split(", ") == [f"“{'vwxyz'[k]}” {row[k]:.3f}" for k in top]
    col = np.where(allowed[:, 4], weights[:, 4], 0.0)
    text = line_hover_text(weights, allowed, list("abcd"), list("vwxyz"), ("k", 4))
    received = sum(c >= MIN_LINE_WEIGHT for c in col)
    assert f"“z”: total weight received {col.sum():.3f} from {received} queries" in text


def test_hover_marks_are_the_reached_tokens_weights_and_the_masked_ones():
    weights, allowed = _map()
    reached, hidden = hover_marks(weights, allowed, ("q", 1))
    assert reached == {("k", k): weights[1, k] for k in range(5) if allowed[1, k] and weights[1, k] >= MIN_LINE_WEIGHT}
    assert hidden == {("k", k) for k in range(5) if not allowed[1, k]}
    reached, hidden = hover_marks(weights, allowed, ("k", 3))
    assert set(reached) == {("q", q) for q in range(4) if allowed[q, 3] and weights[q, 3] >= MIN_LINE_WEIGHT}
    assert hidden == {("q", q) for q in range(4) if not allowed[q, 3]}
    assert hover_marks(weights, allowed, None) == ({}, set())
