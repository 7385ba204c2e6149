"""The Python API under bad input (issue 36): a model whose weights are NaN is refused by
`compare` and `attribute` with a message (not NaN scores, not a traceback from the difference
map); `intervene` takes numpy integers and the text form, and every head it refuses is an
`InterventionError`; a damaged training state is a `ResumeError`. Random head edits give a
result or an InterventionError, never another exception."""
import copy

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from model import attribute, bundled_checkpoints, compare, intervene, load_checkpoint
from model.inference.bundle import InputError
from model.interpret.comparison import ComparisonError
from model.interpret.interventions import InterventionError
from model.io.checkpoints import random_bundle
from model.io.resume import ResumeError, read_state, save_state
from model.train.optimizer import make_optimizer


@pytest.fixture(scope="module")
def reverse():
    return load_checkpoint(bundled_checkpoints()["reverse"])


@pytest.fixture(scope="module")
def diverged(reverse):
    """The reverse model after a run that diverged: every weight NaN."""
    bundle = copy.deepcopy(reverse)
    with torch.no_grad():
        for p in bundle.model.parameters():
            p.fill_(float("nan"))
    bundle.name = "diverged"
    return bundle


def test_comparing_with_a_nan_model_is_refused_with_a_message(reverse, diverged):
    for a, b in ((reverse, diverged), (diverged, reverse)):
        with pytest.raises(ComparisonError, match="diverged: its output probabilities are NaN or infinite"):
            compare(a, b, "abc")


def test_attributing_a_nan_model_is_refused_rather_than_nan_scores(reverse, diverged):
    with pytest.raises(InputError, match="diverged: its outputs are NaN or infinite"):
        attribute(diverged, "abc", methods=["attention", "flow"])
    scores = attribute(reverse, "abc", methods=["attention", "flow"])
    assert all(np.isfinite(v).all() for v in scores.values())


def _output(bundle, heads):
    src, _ = bundle.encode_source("abcd")
    with torch.no_grad(), intervene(bundle.model, heads):
        return bundle.model(src, torch.tensor([[1, 5, 6]]))


def test_numpy_integers_are_ints_and_the_text_form_is_accepted(reverse):
    plain = _output(reverse, {("encoder", 0, 1): "zero", ("cross", 1, 3): "uniform"})
    numpy = _output(reverse, {("encoder", np.int64(0), np.int32(1)): "zero", ("cross", np.int8(1), np.int64(3)): "uniform"})
    text = _output(reverse, "encoder:0:1=zero,cross:1:3=uniform")
    assert torch.equal(plain, numpy) and torch.equal(plain, text)
    assert not torch.equal(plain, _output(reverse, {}))  # the edits change the output


@pytest.mark.parametrize("heads, named", [
    ({("encoder", np.int64(0), 9): "zero"}, "head 9 is out of range"),
    ({("encoder", np.int64(5), 0): "zero"}, "layer 5 is out of range"),
    ({("encoder", True, 0): "zero"}, "layer True is out of range"),
    ({("encoder", 0, 1.0): "zero"}, "head 1.0 is out of range"),
    ({("sideways", 0, 0): "zero"}, "unknown attention kind 'sideways'"),
    ({("encoder", 0, 0): "erase"}, "unknown edit 'erase'"),
    ({("encoder", 0, 0): ["zero"]}, "unknown edit"),
    ({"encoder:0:0": "zero"}, "a head is (kind, layer, head)"),
    ("encoder:0=zero", "write kind:layer:head=edit"),
    ("encoder:x:0=zero", "whole numbers"),
    ([("encoder", 0, 0)], "got list"),
])
def test_every_refused_head_is_an_intervention_error(reverse, heads, named):
    with pytest.raises(InterventionError) as info:
        _output(reverse, heads)
    assert named in str(info.value)


def test_a_truncated_training_state_is_a_resume_error(tmp_path):
    bundle = random_bundle("copy", d_model=16, n_heads=2, d_ff=32, n_encoder_layers=1, n_decoder_layers=1)
    optimizer, scheduler = make_optimizer(bundle.model, 16, 4)
    save_state(tmp_path / "run", bundle.model, optimizer, scheduler, {"step": 0}, [torch.get_rng_state()])
    for name in ("model.safetensors", "optimizer.safetensors"):
        file = tmp_path / "run.resume" / name
        whole = file.read_bytes()
        file.write_bytes(whole[:7])
        with pytest.raises(ResumeError, match=f"{name}: not a readable safetensors file"):
            read_state(tmp_path / "run")
        file.write_bytes(whole)
    read_state(tmp_path / "run")


def test_the_training_state_is_never_written_over_a_users_folder(tmp_path):
    bundle = random_bundle("copy", d_model=16, n_heads=2, d_ff=32, n_encoder_layers=1, n_decoder_layers=1)
    optimizer, scheduler = make_optimizer(bundle.model, 16, 4)
    mine = tmp_path / "run.resume"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    with pytest.raises(ResumeError, match="refusing to overwrite"):
        save_state(tmp_path / "run", bundle.model, optimizer, scheduler, {"step": 0}, [torch.get_rng_state()])
    assert (mine / "notes.txt").read_text() == "mine"


# -- property: random head edits give a result or an InterventionError -------------------------------
index = st.one_of(st.integers(-3, 6), st.integers(-3, 6).map(np.int64), st.booleans(), st.floats(-1, 5),
                  st.text(max_size=2), st.none())
kind = st.one_of(st.sampled_from(["encoder", "decoder_self", "cross"]), st.text(max_size=8), st.integers())
edit = st.one_of(st.sampled_from(["zero", "mean", "uniform"]), st.text(max_size=6), st.none())
key = st.one_of(st.tuples(kind, index, index), st.tuples(kind, index), st.text(max_size=10), st.integers())
heads = st.one_of(st.dictionaries(key, edit, max_size=3), st.text(max_size=30), st.none(),
                  st.lists(st.integers(), max_size=2))


@settings(max_examples=80, deadline=None)
@given(heads=heads)
def test_random_head_edits_give_a_result_or_an_intervention_error(reverse, heads):
    try:
        out = _output(reverse, heads)
    except InterventionError:
        return
    assert torch.isfinite(out).all()


@pytest.mark.parametrize("checkpoint, beam, limit, named", [
    ("bert-facts", 4, None, "does not translate"), ("gpt-facts", 4, None, "does not translate"),
    ("reverse", 0, None, "beam_size must be an integer ≥ 1, got 0"), ("reverse", True, None, "beam_size"),
    ("reverse", 4, -1, "limit must be None (all pairs) or an integer ≥ 0, got -1"),
])
def test_evaluate_bleu_refuses_what_has_no_score(tmp_path, checkpoint, beam, limit, named):
    from model.train.bleu import evaluate_bleu

    held = tmp_path / "h.tsv"
    held.write_text("abc\tcba\nab\tba\n")
    with pytest.raises(InputError) as info:
        evaluate_bleu(load_checkpoint(bundled_checkpoints()[checkpoint]), held, beam, 0.6, limit)
    assert named in str(info.value)
