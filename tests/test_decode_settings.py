"""Decoding settings out of range are refused with the reason, wherever they come from."""
from dataclasses import fields

import pytest

from model.interpret.decode_run import DecodeSettings, DecodeSettingsError
from model.io.scenes import SceneError, parse_tour


@pytest.mark.parametrize(("field", "value", "words"), [
    ("beam_size", 0, "beam size 0 must be ≥ 1"),
    ("beam_size", -1, "beam size -1"),
    ("top_k", -5, "top-k -5 must be ≥ 0"),
    ("top_p", 0.0, "top-p 0.0 must be in (0, 1]"),
    ("top_p", 1.5, "top-p 1.5"),
    ("temperature", -1.0, "temperature -1.0 must be ≥ 0"),
    ("temperature", float("nan"), "temperature nan"),
    ("strategy", "nucleus", "strategy 'nucleus' is not one of"),
    ("alpha", -0.5, "length penalty"),
])
def test_each_bad_setting_is_named(field, value, words):
    with pytest.raises(DecodeSettingsError) as info:
        DecodeSettings(**{field: value})
    assert words in str(info.value)


def test_the_defaults_and_the_papers_settings_are_accepted():
    DecodeSettings()
    DecodeSettings(strategy="beam", beam_size=4, alpha=0.6)
    DecodeSettings(strategy="sample", temperature=0.0, top_k=1, top_p=1.0)


def test_a_scene_with_a_beam_of_zero_is_refused_when_read():
    tour = {"version": 2, "scenes": [{"name": "bad beam", "decoding": {"strategy": "beam", "beam_size": 0}}]}
    with pytest.raises(SceneError, match="beam size 0 must be ≥ 1"):
        parse_tour(tour, "tour.json")


def test_every_knob_starts_at_the_settings_default_and_its_whole_range_is_accepted():
    """The controls built from the knobs can only ever ask for settings the decoder follows."""
    from model.interpret.decode_knobs import KNOBS
    assert set(KNOBS) == {f.name for f in fields(DecodeSettings)} - {"strategy"}
    for knob in KNOBS.values():
        assert knob.low <= getattr(DecodeSettings(), knob.name) <= knob.high
        for value in (knob.low, knob.high):
            assert getattr(DecodeSettings(**{knob.name: value}), knob.name) == value
