"""What Figure 1 says of one forward pass (model.inference.figure1_texts): block shapes and tooltips
read off the trace itself, head surgery named per sublayer, token lines and step layers."""
from __future__ import annotations

import pytest

from model.inference.figure1 import output_pieces
from model.inference.figure1_texts import block_texts, step_layer, token_lines
from model.nn.step_summary import format_shape
from support import small_bundle


@pytest.fixture(scope="module")
def run():
    bundle = small_bundle()
    return bundle, bundle.run("abcdefg", target="gfedcba")


def test_a_blocks_shape_and_tooltip_are_its_steps_in_the_trace(run):
    _, result = run
    trace = result.trace
    key = "encoder.layers.0.self_attn"
    shape, edited, tip = block_texts(trace, key, "Multi-Head\nAttention", "encoder.layers.0.self_attn.output", {})
    assert shape == format_shape(trace["encoder.layers.0.self_attn.output"].shape) and not edited
    lines = tip.split("\n")
    assert lines[0] == "Multi-Head Attention"
    steps = [s for s in trace if s.name.startswith(key + ".")]
    assert steps and lines[1:] == [f"{s.name}  {format_shape(s.shape)}" for s in steps]
    assert block_texts(None, key, "Attention", "encoder.layers.0.self_attn.output", {}) == ("", False, "Attention")


def test_head_surgery_marks_only_the_sublayer_it_edits(run):
    _, result = run
    edits = {("encoder", 0, 1): "zero", ("cross", 0, 0): "mean"}
    _, edited, tip = block_texts(result.trace, "encoder.layers.0.self_attn", "A", "x", edits)
    assert edited and tip.endswith("Head surgery: head 2 zero")
    _, edited, tip = block_texts(result.trace, "decoder.layers.0.cross_attn", "C", "x", edits)
    assert edited and tip.endswith("Head surgery: head 1 mean")
    assert not block_texts(result.trace, "decoder.layers.0.self_attn", "S", "x", edits)[1]


def test_token_lines_are_the_runs_pieces_and_say_character_tokenizers(run):
    bundle, result = run
    lines = token_lines(result, bundle, ["src", "tgt", "out"])
    assert lines["src"][0] == result.src_pieces and lines["tgt"][0] == result.tgt_pieces
    assert lines["out"][0] == output_pieces(result)
    assert all(chars == (bundle.src_tokenizer.kind == "char") for _, chars in lines.values())
    assert token_lines(None, None, ["src"]) == {"src": (None, False)}


def test_step_layer_reads_the_stack_and_layer():
    assert step_layer("decoder.layers.12.cross_attn.weights") == ("decoder", 12)
    assert step_layer("encoder.embed.tokens") is None
