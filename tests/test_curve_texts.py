"""The words of the live training curves, without widgets: the rate axis counts in its peak's
power of ten, the rate plot names the schedule the run follows, a continued model's choice
says why it is refused."""
from __future__ import annotations

import pytest

from model.io.checkpoints import random_bundle
from model.train.curve_texts import held_out_name, lr_tooltip, rate_axis
from model.train.run_setup import continue_choice


@pytest.mark.parametrize("peak", [7e-4, 1e-3, 6.2e-3, 0.05, 0.99, 1.0, 3.0, 12.5])
def test_the_rate_axis_unit_is_the_peaks_power_of_ten(peak):
    exponent, label = rate_axis(peak)
    assert 1 <= peak / 10.0 ** exponent < 10 + 1e-9  # the peak reads between 1 and 10 on the axis
    assert label == "lr" if exponent == 0 else label.startswith("lr (×10") and label.endswith(")")


def test_the_rate_axis_label_writes_its_exponent_in_superscript():
    assert rate_axis(6.2e-3) == (-3, "lr (×10⁻³)")
    assert rate_axis(0.0) == (0, "lr")


def test_the_rate_tooltip_names_the_schedule_the_run_uses():
    assert "Eq. 3" in lr_tooltip() and "1/√step" in lr_tooltip()
    assert "linear decay to step 1,200" in lr_tooltip(1200)
    assert held_out_name("masked_accuracy") == "held-out masked-token accuracy"


def test_continuing_is_offered_only_for_a_model_the_trainer_can_train():
    text, tip, kind = continue_choice(None)
    assert kind is None and "none" in text and tip == "No model is loaded"
    bundle = random_bundle("reverse")
    text, tip, kind = continue_choice(bundle)
    assert kind == bundle.config.kind and bundle.name in text


@pytest.mark.parametrize("width,height", [(1800, 400), (1200, 800), (700, 700), (500, 300), (2400, 600)])
def test_the_curves_shape_follows_the_canvas(width, height):
    """A wide, low canvas puts the plots in one row (never on a narrow screen); a row lower than
    SHORT_ROW drops the step names; the legend needs NARROW px beside the data, and no compact screen."""
    from model.train.curve_texts import NARROW, ROW_RATIO, SHORT_ROW, curve_shape

    shape = curve_shape(width, height, narrow_screen=False, compact=False)
    assert shape.in_a_row == (width > ROW_RATIO * height)
    rows = 1 if shape.in_a_row else 2
    assert shape.short_rows == (height / rows < SHORT_ROW)
    assert shape.legend == (width / (2 if shape.in_a_row else 1) >= NARROW)
    assert not curve_shape(width, height, narrow_screen=True, compact=False).in_a_row
    assert not curve_shape(width, height, narrow_screen=False, compact=True).legend


def test_the_colour_key_title_names_each_colour_and_the_held_out_metric():
    from model.train.curve_texts import colour_key_title

    title = colour_key_title("masked_accuracy", "#111111", "#222222")
    assert "color:#111111'>tokens<" in title and "color:#222222'>masked<" in title and "<br>" not in title
    assert "<br>" in colour_key_title("exact_match", "#111111", "#222222", two_lines=True)
    assert ">exact<" in colour_key_title("exact_match", "#111111", "#222222")
