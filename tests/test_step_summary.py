"""What the stepper and Figure 1 say, computed in model/ without Qt: statistics against numpy's
own, colour scales by meaning, query/key axis titles, and block names from real configs."""
import numpy as np
import pytest

from model.inference.figure1 import block_for_step, block_titles, joined_characters, positional_titles
from model.nn.config import TransformerConfig
from model.nn.step_summary import colour_scale, format_shape, step_axis_titles, tensor_stats


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
