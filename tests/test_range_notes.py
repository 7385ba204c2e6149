"""An input outside the model's training range gets a plain-words note on its Frame (length,
alphabet, digits, years), and an input inside gets none."""
from __future__ import annotations

import pytest

from model import bundled_checkpoints, compute_frame, load_checkpoint
from model.interpret.range_notes import range_notes


@pytest.fixture(scope="module")
def bundles():
    return {name: load_checkpoint(folder) for name, folder in bundled_checkpoints().items()
            if name in ("reverse", "addition", "dates", "translation")}


def test_a_reverse_input_longer_than_training_says_so(bundles):
    assert compute_frame(bundles["reverse"], "a" * 32).notes == ["32 letters: this model was trained on 1–24"]
    assert compute_frame(bundles["reverse"], "attention").notes == []
    assert compute_frame(bundles["reverse"], "x" * 24).notes == []  # the longest trained length is inside


def test_symbols_outside_the_alphabet_are_named(bundles):
    notes = compute_frame(bundles["reverse"], "Attention!").notes
    assert len(notes) == 1 and "'!', 'A'" in notes[0] and "unknown" in notes[0]
    assert notes[0].startswith("2 symbols this model was not trained on")  # the count first: a cut line keeps it
    assert notes[0].endswith(f"(it knows {bundles['reverse'].describe_alphabet()})")


def test_addition_names_a_number_past_its_range(bundles):
    add = bundles["addition"]
    assert compute_frame(add, "2+2").notes == [] and compute_frame(add, "999+999").notes == []
    notes = compute_frame(add, "1234+5").notes
    assert len(notes) == 1 and notes[0].startswith("1234 (4 digits)") and "0 to 999" in notes[0]
    assert any("not a sum" in n for n in compute_frame(add, "12+3+4").notes)


def test_dates_outside_the_trained_years_and_translation_past_its_length(bundles):
    assert compute_frame(bundles["dates"], "22 November 2026").notes == []
    assert compute_frame(bundles["dates"], "22 November 2150").notes == [
        "year 2150: this model was trained on dates from 1900 to 2099"]
    long = " ".join(["the big dog sees a small cat"] * 2)  # 14 words, trained on at most 12
    assert compute_frame(bundles["translation"], long).notes == [
        "14 words: this model was trained on inputs of at most 12"]


def test_no_task_or_a_pretrained_model_gets_no_notes():
    assert range_notes({}, "a" * 500, 500) == []
    assert range_notes({"name": "marian", "pretrained": True, "max_src_len": 4}, "a b c d e f", 6) == []
