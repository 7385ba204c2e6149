"""A probability over its bar reads as the number it is: two decimals where they show it, one
significant digit below, "<0.0001" for less, and "NaN" for a broken distribution."""
from __future__ import annotations

import math

import pytest

from model.inference.prob_text import prob_text


@pytest.mark.parametrize("p", [1.0, 0.92, 0.5, 0.0051, 0.3333])
def test_a_visible_probability_is_within_half_a_hundredth(p):
    assert abs(float(prob_text(p)) - p) <= 0.005


@pytest.mark.parametrize("p", [0.004, 0.00123, 0.0001])
def test_a_small_probability_keeps_one_significant_digit(p):
    shown = float(prob_text(p))
    assert shown > 0 and abs(shown - p) <= 0.5 * 10 ** math.floor(math.log10(p))


def test_the_tiny_the_zero_and_the_broken_say_so():
    assert prob_text(0.00009) == "<0.0001"
    assert prob_text(0.0) == "0"
    assert prob_text(float("nan")) == "NaN"
