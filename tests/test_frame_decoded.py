"""The header's output and the decoding panels agree: `Frame.decoded` is what the chosen
strategy wrote (beam search, sampling), checked against the bundle's own decoders."""
from __future__ import annotations

import pytest

from model import bundled_checkpoints, compute_frame, load_checkpoint
from model.interpret.frame import DecodeSettings
from model.interpret.interventions import all_heads, intervene


@pytest.fixture(scope="module")
def reverse():
    return load_checkpoint(bundled_checkpoints()["reverse"])


def test_beam_search_with_edited_heads_shows_the_beams_output(reverse):
    heads = {key: "zero" for key in all_heads(reverse.model)[13:18]}  # five heads whose loss splits the two
    settings = DecodeSettings(strategy="beam", beam_size=4, alpha=0.6)
    frame = compute_frame(reverse, "attention", settings=settings, interventions=heads)
    with intervene(reverse.model, heads):
        beam = reverse.translate("attention", method="beam", beam_size=4, alpha=0.6)
        greedy = reverse.translate("attention")
    assert beam != greedy
    assert frame.decoded == (beam, "beam search")
    assert frame.output_text == greedy  # the recorded forward stays the greedy one, and says so below
    assert compute_frame(reverse, "attention", interventions=heads).decoded == (greedy, "greedy")


def test_sampling_shows_the_sample_and_a_target_is_named(reverse):
    settings = DecodeSettings(strategy="sample", temperature=2.0, seed=5)
    frame = compute_frame(reverse, "transformer", settings=settings)
    assert frame.decoded == (reverse.translate("transformer", method="sample", temperature=2.0, seed=5), "sampling")
    assert compute_frame(reverse, "abc", "cba").decoded == ("cba", "target")
