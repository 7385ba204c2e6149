"""What the stepper and Figure 1 say, computed in model/ without Qt: statistics against numpy's
own, colour scales by meaning, query/key axis titles, and block names from real configs."""
import numpy as np
import pytest

from model.inference.figure1 import block_for_step, block_titles, joined_characters, positional_titles
from model.nn.config import TransformerConfig
from model.nn.step_summary import (
    colour_scale,
    find_step,
    format_shape,
    jump_rows,
    shape_and_stats,
    step_axis_titles,
    tensor_stats,
)


def test_stats_are_numpys_over_the_finite_entries_and_count_the_masked_ones():
    rng = np.random.default_rng(0)
    t = rng.normal(size=(4, 5)).astype(np.float32)
    t[1, 2] = t[3, 0] = -np.inf
    finite = t[np.isfinite(t)]
    text = tensor_stats(t).replace("\u00a0", " ").replace("−", "-")
    for name, value in (("min", finite.min()), ("max", finite.max()), ("mean", finite.mean())):
        assert f"{name} {value:.4f}" in text
    assert "entries: 2" in text
    mask = rng.random((3, 3)) > 0.5
    assert tensor_stats(mask) == f"allowed {mask.sum()} of 9 entries, blocked {9 - mask.sum()}"


@pytest.mark.parametrize("data, kind, scale", [
    (np.array([[True, False]]), "mask", "mask"),
    (np.array([[0.2, 0.3]]), "probs", "sequential"),
    (np.array([[0.0, 3.0]]), "auto", "sequential"),
    (np.array([[-2.0, 0.5, -np.inf]]), "signed", "diverging"),
])
def test_the_colour_scale_follows_what_the_values_mean(data, kind, scale):
    name, (lo, hi) = colour_scale(data, kind)
    assert name == scale
    if scale == "diverging":
        finite = np.abs(data[np.isfinite(data)]).max()
        assert (lo, hi) == (-finite, finite)  # white is exactly zero
    if kind == "probs":
        assert (lo, hi) == (0.0, 1.0)


def test_an_attention_map_names_its_queries_and_keys():
    assert step_axis_titles("encoder.layers.0.self_attn.weights", "src", "src", lambda a: None) == (
        "query (source tokens)", "key (source tokens)")
    assert step_axis_titles("encoder.layers.0.ffn.output", "src", "d_model", lambda a: None) == (
        "source tokens", "feature (d_model)")
    assert format_shape((3,)) == "(3,)" and format_shape((1, 4, 8)) == "(1, 4, 8)"


def test_block_names_follow_the_config():
    paper = TransformerConfig(10, 10)
    assert "Multi-Head Cross-Attention" in block_titles(paper, "decoder")
    assert "Masked Multi-Head Attention" in block_titles(paper, "decoder")
    llama = TransformerConfig(10, 10, kind="decoder_only", norm="rms", n_kv_heads=2, norm_first=True,
                              activation="swiglu", positional="rope")
    titles = block_titles(llama, "decoder")
    assert {"Masked Grouped-Query Attention", "RMSNorm", "Final RMSNorm", "SwiGLU Feed Forward"} <= set(titles)
    assert "Multi-Head Cross-Attention" not in titles
    assert positional_titles(llama)[1].startswith("RoPE")


def test_character_tokens_spell_their_text_with_the_specials_apart():
    assert joined_characters(["<bos>", "2", "0", "-", "1", "<eos>"]) == "<bos> 20-1 <eos>"


def test_a_step_lights_the_longest_block_that_holds_it():
    keys = ["encoder.layers.0", "encoder.layers.0.self_attn", "encoder.layers.0.self_attn_x", "generator.logits"]
    assert block_for_step("encoder.layers.0.self_attn.weights", keys) == "encoder.layers.0.self_attn"
    assert block_for_step("encoder.layers.0.ffn.output", keys) == "encoder.layers.0"
    assert block_for_step("decoder.layers.0.ffn", keys) is None


def test_a_label_is_never_blank_and_a_readout_names_masked_and_blocked_cells():
    from model.nn.step_summary import cell_readout, visible_text
    assert visible_text(" a\tb\n") == "␣a⇥b⏎" and visible_text("  ") == "␣␣" and visible_text("") == "∅"
    assert cell_readout(float("-inf"), False, "tgt 1", "tgt 2").endswith("(masked)")
    assert cell_readout(0.0, True, "tgt 0", "tgt 1") == "tgt 0,  tgt 1  =  0  (blocked)"
    assert cell_readout(1.0, True, "tgt 1", "tgt 0").endswith("(may attend)")


def _steps():
    import torch

    from model.nn.trace import Step
    return [Step("encoder.layers.0.self_attn.weights", torch.rand(1, 4, 3, 3), "", "", ("batch", "head", "src", "src")),
            Step("encoder.layers.0.self_attn.output", torch.rand(1, 3, 8), "", "", ("batch", "src", "d_model")),
            Step("encoder.layers.0.ffn.hidden", torch.rand(1, 3, 16), "", "", ("batch", "src", "d_ff"))]


def test_the_jump_list_heads_each_block_once_and_points_at_every_step_in_order():
    steps = _steps()
    rows = jump_rows(steps)
    assert [index for _, _, index in rows if index is not None] == list(range(len(steps)))
    headers = [tip for _, tip, index in rows if index is None]
    assert headers == list(dict.fromkeys(step.block for step in steps))  # one per block, in order
    for text, tip, index in rows:
        if index is not None:
            assert tip == steps[index].name and text.strip().startswith(steps[index].name.rsplit(".", 1)[-1])
            assert format_shape(steps[index].shape) in text


def test_find_goes_to_the_next_match_then_wraps_and_says_none():
    names = ["a.weights", "b.output", "c.weights", "d.weights"]
    assert find_step(names, "weights", 0) == 2
    assert find_step(names, "weights", 2) == 3
    assert find_step(names, "weights", 3) == 0  # past the last match: the first again
    assert find_step(names, "nothing", 1) is None


def test_the_statistics_of_a_head_tensor_are_the_whole_tensors_and_say_so():
    weights, output, _ = _steps()
    shape, shown, stats = shape_and_stats(weights, 2)
    assert shape == "shape (1, 4, 3, 3)\n= batch × head × src × src" and shown.endswith("head 3")
    assert stats == "all 4 heads: " + tensor_stats(weights.tensor.numpy())
    shape, shown, stats = shape_and_stats(output, 2)
    assert "head" not in shown and stats == tensor_stats(output.tensor.numpy())
