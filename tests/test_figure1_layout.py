"""Figure 1 as data (`model.inference.figure1_layout`), without Qt: which blocks a config draws,
the flow upwards, no two blocks on top of each other, and the arrows each kind of model needs."""
from __future__ import annotations

import pytest

from model.inference.figure1_layout import PAD_X, TEXT_GAP, figure1_layout
from model.nn.config import TransformerConfig


class CharMeasure:
    """Every character 8 units wide, every line 20 high (a monospace stand-in for the fonts)."""

    def width(self, text: str, font: str) -> float:
        return 8.0 * max((len(line) for line in text.split("\n")), default=0)

    def height(self, font: str) -> float:
        return 20.0


def config(**kw) -> TransformerConfig:
    base = dict(src_vocab_size=20, tgt_vocab_size=20, d_model=32, n_heads=4, d_ff=64,
                n_encoder_layers=2, n_decoder_layers=3, max_len=32)
    return TransformerConfig(**{**base, **kw})


def overlap(a, b) -> bool:
    return abs(a.x - b.x) * 2 < a.w + b.w and abs(a.y - b.y) * 2 < a.h + b.h


@pytest.mark.parametrize("kw", [{}, {"norm_first": True}, {"kind": "decoder_only", "n_encoder_layers": 0},
                                {"kind": "encoder_only", "n_decoder_layers": 0}])
@pytest.mark.parametrize("expanded", [False, True])
def test_blocks_follow_the_config_and_never_overlap(kw, expanded):
    cfg = config(**kw)
    fig = figure1_layout(cfg, expanded, inline=False, measure=CharMeasure())
    templates = [e.template for e in fig.elements]
    assert len(templates) == len(set(templates))  # each step prefix drawn once
    layers = {"encoder": cfg.n_encoder_layers, "decoder": cfg.n_decoder_layers}
    for stack in ("encoder", "decoder"):
        drawn = [t for t in templates if t.startswith(f"{stack}.layers.") and t.endswith(".self_attn")]
        has = getattr(cfg.model_kind, f"has_{stack}")
        assert len(drawn) == (layers[stack] if expanded else 1) * has
        assert (f"{stack}.final_norm" in templates) == (has and cfg.norm_first)
        assert len([b for b in fig.boxes if b.stack == stack]) == len(drawn)  # one grey box per layer drawn
    cross = [t for t in templates if t.endswith("cross_attn")]
    assert bool(cross) == cfg.model_kind.has_cross_attention
    assert sum(a.colour == "accent_text" for a in fig.arrows) == 2 * len(cross)  # K and V from the memory
    for i, a in enumerate(fig.elements):
        for b in fig.elements[i + 1:]:
            assert not overlap(a, b), (a.template, b.template)
    if not expanded:
        assert all("{layer}" in t for t in templates if ".layers." in t)


def test_the_flow_goes_up_and_pre_ln_puts_the_norm_below_the_sublayer():
    post = {e.template: e for e in figure1_layout(config(), False, False, CharMeasure()).elements}
    ys = [post[k].y for k in ("encoder.embedding", "encoder.input", "encoder.layers.{layer}.self_attn",
                              "encoder.layers.{layer}.add_norm1", "encoder.layers.{layer}.ffn")]
    assert ys == sorted(ys, reverse=True)  # y grows downwards: each step above the last
    assert post["generator.probs"].y < post["generator.logits"].y < post["decoder.layers.{layer}.add_norm3"].y
    pre = {e.template: e for e in figure1_layout(config(norm_first=True), False, False, CharMeasure()).elements}
    attn = pre["encoder.layers.{layer}.self_attn"].y
    assert pre["encoder.layers.{layer}.add_norm1.norm"].y > attn > pre["encoder.layers.{layer}.add_norm1.residual"].y


def test_inline_is_wider_and_lower_and_the_text_is_measured():
    def cross(inline: bool):
        fig = figure1_layout(config(), False, inline, CharMeasure())
        return next(e for e in fig.elements if e.template.endswith("cross_attn"))

    tall, wide = cross(False), cross(True)
    assert wide.w > tall.w and wide.h < tall.h
    assert tall.w >= 8.0 * len("Multi-Head Cross-Attention")  # its name fits
    assert wide.w >= 8.0 * len("Multi-Head Cross-Attention (1, 32, 32)")  # name and the largest shape side by side


def test_a_tall_figure_puts_a_shape_beside_every_name_it_fits_beside():
    """Tall: names short enough share their line with the shape (a lower figure, larger when
    fitted); the longest names keep it under them; both stacks' blocks are one width."""
    fig = figure1_layout(config(), False, False, CharMeasure())
    blocks = [e for e in fig.elements if e.kind == "block"]
    room = 8.0 * len("(1, 32, 32)")
    for e in blocks:
        fits = 8.0 * len(e.title) + TEXT_GAP + room <= e.w - 2 * PAD_X
        assert e.beside == fits, e.title
        assert e.h < max(b.h for b in blocks) if e.beside else e.h == max(b.h for b in blocks)
    assert any(e.beside for e in blocks) and not all(e.beside for e in blocks)
    assert len({e.w for e in blocks}) == 1


def test_rotary_positions_add_nothing_and_bert_adds_token_types():
    def into_adder(cfg) -> bool:
        fig = figure1_layout(cfg, False, False, CharMeasure())
        wave = next(e for e in fig.elements if e.kind == "wave")
        return any(a.points[0] in (wave.at(-20, 0), wave.at(20, 0)) for a in fig.arrows)

    assert into_adder(config())
    assert not into_adder(config(positional="rope"))
    rope = {e.template: e for e in figure1_layout(config(positional="rope"), False, False, CharMeasure()).elements}
    assert "encoder.input" not in rope and "decoder.input" not in rope  # no ⊕ with nothing to add
    assert "decoder.positional" in rope  # the rotation is still shown, beside the stack
    bert = config(kind="encoder_only", n_decoder_layers=0, type_vocab_size=2, embedding_norm=True)
    fig = figure1_layout(bert, False, False, CharMeasure())
    blocks = {e.template: e for e in fig.elements}
    assert blocks["encoder.input"].y > blocks["encoder.input_norm"].y  # the LayerNorm over the ⊕
    assert blocks["encoder.embedding.token_type"].y == blocks["encoder.embedding"].y
