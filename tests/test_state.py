"""SessionState: the selection follows names across traces, clamps, and emits only real changes."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
import torch  # noqa: E402

from explorer.state import SessionState  # noqa: E402
from model.io.checkpoints import random_bundle  # noqa: E402
from model.nn.step_names import attention_of_step, find_step  # noqa: E402


@pytest.fixture(scope="module")
def bundle():
    torch.manual_seed(0)
    return random_bundle("reverse", n_encoder_layers=2, n_decoder_layers=2, n_heads=4, d_model=32, d_ff=64,
                         dropout=0.0)


@pytest.fixture
def state(qapp, bundle):
    s = SessionState()
    s.set_bundle(bundle)
    s.set_result(bundle.run("abcde", target="edcba"))
    return s


def test_attention_of_step_names_kind_and_layer():
    assert attention_of_step("encoder.layers.1.self_attn.q") == ("encoder", 1)
    assert attention_of_step("decoder.layers.0.self_attn.weights") == ("decoder_self", 0)
    assert attention_of_step("decoder.layers.3.cross_attn.mask") == ("cross", 3)
    assert attention_of_step("decoder.layers.0.ffn.hidden") is None


def test_a_short_step_name_picks_the_last_exact_step_else_the_first_below_it():
    names = ["embed", "encoder.layers.0.ffn", "encoder.layers.0.ffn.out", "embed", "encoder.layers.1.x"]
    assert find_step(names, "embed") == 3  # the last of two
    assert find_step(names, "encoder.layers.0") == 1  # the first step under it
    assert find_step(names, "encoder.layers.1") == 4
    assert find_step(names, "encoder.layers.2") is None and find_step(names, "embe") is None


def test_select_step_clamps_and_emits_once(state, qtbot):
    n = state.n_steps()
    with qtbot.waitSignal(state.stepChanged) as blocker:
        state.select_step(10 ** 6)
    assert blocker.args == [n - 1] and state.step == n - 1
    emitted = []
    state.stepChanged.connect(emitted.append)
    state.select_step(n - 1)  # no change → no signal
    state.select_step(-5)
    assert emitted == [0]


def test_select_step_named_exact_and_prefix(state):
    names = state.trace.names()
    assert state.select_step_named("decoder.layers.1.cross_attn.weights")
    assert state.step == names.index("decoder.layers.1.cross_attn.weights")
    assert state.select_step_named("encoder.layers.1.ffn")  # a block: its first step
    assert state.current_step.name == "encoder.layers.1.ffn.hidden"
    assert not state.select_step_named("encoder.layers.9")


def test_entering_an_attention_step_selects_kind_and_layer(state, qtbot):
    with qtbot.waitSignal(state.attentionSelected) as blocker:
        state.select_step_named("decoder.layers.1.cross_attn.scores")
    assert blocker.args == ["cross", 1, state.head]


def test_select_head_keeps_the_step(state):
    state.select_step_named("encoder.layers.0.self_attn.q")
    step = state.step
    state.select_head(3)
    assert state.head == 3 and state.step == step
    state.select_head(99)  # clamped to the model's heads
    assert state.head == state.bundle.config.n_heads - 1


def test_select_attention_moves_the_stepper_to_the_weights(state):
    state.select_attention("decoder_self", 1, 2)
    assert state.current_step.name == "decoder.layers.1.self_attn.weights"
    with pytest.raises(ValueError):
        state.select_attention("sideways", 0, 0)


def test_new_result_keeps_the_step_by_name(state, bundle):
    state.select_step_named("encoder.layers.1.add_norm2.norm")
    state.set_result(bundle.run("abcdefghij"))
    assert state.current_step.name == "encoder.layers.1.add_norm2.norm"
    assert state.axis_labels("src") == list("abcdefghij")
    assert state.axis_labels("tgt")[0] == "<bos>"
    assert state.axis_labels("d_model") is None


def test_available_kinds_follow_the_config(qapp):
    s = SessionState()
    s.set_bundle(random_bundle("reverse", d_model=32, n_heads=4, d_ff=64))
    assert s.available_kinds() == ["encoder", "decoder_self", "cross"]
    s.set_bundle(random_bundle("reverse", d_model=32, n_heads=4, d_ff=64, kind="decoder_only"))
    assert s.available_kinds() == ["decoder_self"]
