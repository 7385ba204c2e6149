"""`model.nn.kinds.ModelKind`: the one object the code asks what a model kind has and reads.

Checked against what really happens: each bundled checkpoint's kind names exactly the attention
sublayers a recorded forward pass holds, and the input bar shows the kind's own fields (a masked
LM's "Text with [MASK]" included); an unknown kind name is refused with the valid ones.
"""
from __future__ import annotations

import pytest
import torch

pytest.importorskip("pytestqt")

from explorer.input_bar import InputBar  # noqa: E402
from explorer.runner import Runner, load_bundle  # noqa: E402
from explorer.state import SessionState  # noqa: E402
from model.cli.main import build_parser  # noqa: E402
from model.interpret.input_texts import field_texts  # noqa: E402
from model.io.checkpoints import random_bundle  # noqa: E402
from model.nn.kinds import DECODER_ONLY, ENCODER_DECODER, ENCODER_ONLY, MODEL_KINDS, InputFields, model_kind  # noqa: E402

BUNDLED = {"reverse": (ENCODER_DECODER, "abc"), "bert-facts": (ENCODER_ONLY, "the [MASK] says moo"),
           "gpt-facts": (DECODER_ONLY, "the duck")}


@pytest.fixture(scope="module")
def bundles():
    return {name: load_bundle(name) for name in BUNDLED}


@pytest.mark.parametrize("name", list(BUNDLED))
def test_a_checkpoints_kind_names_the_attention_its_forward_pass_records(bundles, name):
    bundle = bundles[name]
    expected_kind, example = BUNDLED[name]
    assert bundle.model_kind is expected_kind and bundle.config.model_kind is expected_kind
    assert bundle.config.kind == expected_kind.name  # the serialised value stays the string
    result = bundle.run(example)
    assert bundle.model_kind.attention_kinds == tuple(result.trace.attention_kinds())
    assert ("cross" in result.trace.attention_kinds()) == bundle.model_kind.has_cross_attention
    # a prompt-continuing model lays prompt + continuation on one decoder axis and has no source
    assert (result.n_prompt > 0) == bundle.model_kind.continues_prompt
    assert (result.src_pieces == []) == (not bundle.model_kind.has_encoder)


def test_the_kinds_facts_agree_with_each_other():
    assert list(MODEL_KINDS) == ["encoder_decoder", "encoder_only", "decoder_only"]
    assert ENCODER_DECODER.attention_kinds == ("encoder", "decoder_self", "cross")
    assert ENCODER_ONLY.attention_kinds == ("encoder",) and not ENCODER_ONLY.generates
    assert DECODER_ONLY.attention_kinds == ("decoder_self",) and DECODER_ONLY.continues_prompt
    assert [k.dashed_name for k in MODEL_KINDS.values()] == ["encoder-decoder", "encoder-only", "decoder-only"]
    assert ENCODER_ONLY.axis_title("src") == "input tokens" and ENCODER_ONLY.axis_title("tgt") is None
    assert DECODER_ONLY.axis_title("tgt") == "tokens: <bos> prompt | continuation"
    assert ENCODER_DECODER.axis_title("src") is None and ENCODER_DECODER.axis_title("vocab") is None


def test_an_unknown_kind_is_refused_with_the_valid_ones():
    with pytest.raises(ValueError) as caught:
        model_kind("nonsense")
    message = str(caught.value)
    assert "nonsense" in message
    for name in ("encoder_decoder", "encoder_only", "decoder_only"):
        assert name in message
    assert model_kind("decoder_only") is DECODER_ONLY


def test_the_cli_offers_the_kind_names_unchanged():
    parser = build_parser()
    actions = [a for a in parser._actions if "--kind" in a.option_strings]
    if not actions:  # the train command may sit under a sub-parser
        subs = [a for a in parser._actions if hasattr(a, "choices") and isinstance(a.choices, dict)]
        actions = [a for s in subs for p in s.choices.values() for a in p._actions if "--kind" in a.option_strings]
    assert actions and tuple(actions[0].choices) == ("encoder_decoder", "encoder_only", "decoder_only")


@pytest.fixture
def session(qtbot):
    state = SessionState()
    runner = Runner(state, synchronous=True)
    bar = InputBar(state, runner)
    qtbot.addWidget(bar)
    return state, runner, bar


def shown_fields(bar) -> InputFields:
    """What the input bar shows, as InputFields (target_label None: no target field shown)."""
    if bar.target.isHidden():
        return InputFields(bar.source_label.text(), bar.source.placeholderText())
    return InputFields(bar.source_label.text(), bar.source.placeholderText(), bar.target_label.text(),
                       bar.target.placeholderText(), bar.target.toolTip())


def test_the_input_bar_starts_with_the_encoder_decoders_fields(session):
    _, _, bar = session
    assert shown_fields(bar) == ENCODER_DECODER.fields
    assert field_texts(None) == ("Source:", "Type a source sentence and press Enter", "Target:",
                                 "optional", ENCODER_DECODER.fields.target_tooltip)


@pytest.mark.parametrize("name", list(BUNDLED))
def test_the_input_bar_shows_each_kinds_fields(session, bundles, name):
    state, runner, bar = session
    bundle = bundles[name]
    runner.set_bundle(bundle, then_run=BUNDLED[name][1])
    assert state.result is not None
    assert shown_fields(bar) == bundle.input_fields
    if bundle.fills_masks:  # the masked LM asks for blanks, not the kind's plain "Input:"
        assert bundle.input_fields.label == "Text with [MASK]:" != ENCODER_ONLY.fields.label
    else:
        assert bundle.input_fields == bundle.model_kind.fields
    assert bar.target.isHidden() == (bundle.model_kind.fields.target_label is None)
    assert bar.chat_box.isHidden() and state.frame.message is None  # no chat template: no toggle, plain text
    assert state.session.chat and not state.session.uses_chat


def test_an_encoder_without_a_mask_token_shows_the_plain_input_field(session):
    state, runner, bar = session
    torch.manual_seed(0)
    bundle = random_bundle("reverse", kind="encoder_only", n_decoder_layers=0, d_model=32, n_heads=4, d_ff=64,
                           dropout=0.0)
    assert not bundle.fills_masks
    runner.set_bundle(bundle, then_run="abc")
    assert shown_fields(bar) == ENCODER_ONLY.fields == InputFields("Input:", "Type an input and press Enter")
    assert tuple(state.result.trace.attention_kinds()) == ENCODER_ONLY.attention_kinds
