"""Two checkpoints side by side (model.interpret.comparison) and a run's snapshots (model.io.snapshots,
`train --snapshots`): checked against forwards and subtractions computed here, not by the module."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from model.cli import train_main
from model.data.tokenizers import CharTokenizer
from model.interpret.comparison import ComparisonError, check_comparable, compare
from model.io.checkpoints import bundled_checkpoints, load_checkpoint, random_bundle, save_checkpoint
from model.io.snapshots import run_snapshots, snapshot_folder
from model.nn.hooks import record

TEXT = "hello"


@pytest.fixture(scope="module")
def reverse():
    return load_checkpoint(bundled_checkpoints()["reverse"])


@pytest.fixture(scope="module")
def untrained(reverse, tmp_path_factory):
    """A freshly initialised model of the bundled reverse model's architecture, saved and loaded back."""
    torch.manual_seed(1)
    c = reverse.config
    fresh = random_bundle("reverse", d_model=c.d_model, n_heads=c.n_heads, n_encoder_layers=c.n_encoder_layers,
                          n_decoder_layers=c.n_decoder_layers, d_ff=c.d_ff, max_len=c.max_len)
    return load_checkpoint(save_checkpoint(fresh, tmp_path_factory.mktemp("fresh") / "fresh"))


def test_a_checkpoint_compared_with_itself_differs_nowhere(reverse):
    c = compare(reverse, reverse, TEXT)
    assert c.same_output and c.frame_a.output_text == c.frame_b.output_text == TEXT[::-1]
    assert c.kinds == ["encoder", "decoder_self", "cross"]
    for kind in c.kinds:
        assert np.array_equal(c.difference(kind), np.zeros_like(c.attention_a[kind]))
        assert np.array_equal(c.mean_abs_difference(kind), np.zeros(c.attention_a[kind].shape[:2]))
    assert np.array_equal(c.output_a.own, c.output_a.other) and np.array_equal(c.output_a.own, c.output_b.own)


def _forward(bundle, src_ids, tgt_ids):
    """The model's own forward, recorded here: (probabilities (T, V), {kind: (L, h, Tq, Tk)})."""
    src = torch.tensor([src_ids])
    tgt = torch.tensor([[bundle.tgt_tokenizer.bos_id] + tgt_ids])
    bundle.model.eval()
    with torch.no_grad(), record(bundle.model) as trace:
        probs = bundle.model(src, tgt)[0].softmax(-1)
    cfg = bundle.config
    layers = {"encoder": cfg.n_encoder_layers, "decoder_self": cfg.n_decoder_layers, "cross": cfg.n_decoder_layers}
    maps = {k: np.stack([trace.attention(k, i)[0].numpy() for i in range(n)]) for k, n in layers.items()}
    return probs, maps


def test_two_checkpoints_difference_equals_a_subtraction_done_here(reverse, untrained):
    c = compare(reverse, untrained, TEXT, label_a="trained", label_b="fresh")
    src_ids = reverse.src_tokenizer.encode(TEXT).ids
    a_ids = reverse.generate_ids(torch.tensor([src_ids]))  # A's greedy output: the shared decoder input
    b_ids = untrained.generate_ids(torch.tensor([src_ids]))
    probs_a, maps_a = _forward(reverse, src_ids, a_ids)
    probs_b, maps_b = _forward(untrained, src_ids, a_ids)
    assert c.shared_input == "A's output"
    for kind in ("encoder", "decoder_self", "cross"):
        np.testing.assert_allclose(c.difference(kind), maps_b[kind] - maps_a[kind], atol=1e-6)
        assert np.abs(c.difference(kind)).max() > 1e-3  # a trained and a fresh model do attend differently
    scored = a_ids + [reverse.tgt_tokenizer.eos_id]
    rows = torch.arange(len(scored))
    np.testing.assert_allclose(c.output_a.own, probs_a[rows, scored].numpy(), atol=1e-6)
    np.testing.assert_allclose(c.output_a.other, probs_b[rows, scored].numpy(), atol=1e-6)
    assert c.output_a.pieces == reverse.tgt_tokenizer.pieces(scored)
    # B's own output, scored by A after B's own prefixes
    probs_a_on_b, _ = _forward(reverse, src_ids, b_ids)
    scored_b = b_ids + [reverse.tgt_tokenizer.eos_id]
    np.testing.assert_allclose(c.output_b.other, probs_a_on_b[torch.arange(len(scored_b)), scored_b].numpy(),
                               atol=1e-6)
    # mean |ΔA| over the cells a query may attend (the decoder's future cells are 0 in both)
    d = np.abs(maps_b["decoder_self"] - maps_a["decoder_self"])
    allowed = np.tril(np.ones(d.shape[-2:], bool))
    np.testing.assert_allclose(c.mean_abs_difference("decoder_self"), d[..., allowed].mean(-1), atol=1e-6)


def test_a_mismatch_is_refused_naming_what_differs(reverse):
    narrow = random_bundle("reverse", n_heads=2, d_model=reverse.config.d_model, d_ff=reverse.config.d_ff)
    with pytest.raises(ComparisonError, match=r"n_heads: A 4, B 2"):
        compare(reverse, narrow, TEXT)
    wider = random_bundle("reverse")
    wider.src_tokenizer = CharTokenizer(list(wider.src_tokenizer.vocab) + ["!"])
    with pytest.raises(ComparisonError) as err:
        check_comparable(reverse, wider)
    assert "source vocabulary differs" in str(err.value) and "only in B: '!'" in str(err.value)
    assert "target vocabulary" not in str(err.value)
    check_comparable(reverse, random_bundle("reverse", dropout=0.3))  # dropout is off at eval: comparable


def test_decoder_only_and_encoder_only_compare_with_themselves():
    for name in ("gpt-facts", "bert-facts"):
        bundle = load_checkpoint(bundled_checkpoints()[name])
        c = compare(bundle, bundle, bundle.examples[0])
        assert c.kinds == list(bundle.model_kind.attention_kinds)
        assert all(not np.abs(c.difference(k)).any() for k in c.kinds)
        probs = c.frame_a.forward.trace["generator.probs"].tensor[0]
        assert np.all((c.output_a.own > 0) & (c.output_a.own <= 1)) and len(c.output_a.own) <= probs.shape[0]


TINY = ["--d-model", "16", "--heads", "2", "--layers", "1", "--d-ff", "32", "--batch-size", "8", "--threads", "1",
        "--eval-size", "5", "--quiet"]


def test_train_snapshots_keeps_step_folders_that_load(tmp_path, capsys):
    torch.set_num_threads(1)
    run, out = tmp_path / "run-steps", tmp_path / "run"
    code = train_main(["--task", "reverse", "--out", str(out), "--snapshots", str(run), "--steps", "4",
                       "--save-every", "2", *TINY])
    assert code == 0, capsys.readouterr().err
    snaps = run_snapshots(run)
    assert [s.step for s in snaps] == [2, 4] and snaps[0].path == snapshot_folder(run, 2) == run / "step-000002"
    assert run_snapshots(snaps[0].path) == snaps  # a step folder's siblings are its run
    first, last = (load_checkpoint(s.path) for s in snaps)
    assert first.metrics["steps"] == 2 and last.metrics["steps"] == 4
    final = load_checkpoint(out)
    assert all(torch.equal(p, q) for p, q in zip(last.model.state_dict().values(), final.model.state_dict().values()))
    assert not any(torch.equal(p, q) for p, q in zip(first.model.state_dict().values(),
                                                      last.model.state_dict().values()) if p.dim() == 2)
    assert run_snapshots(out) == []  # a lone checkpoint is no run
    from model.io.snapshots import describe_reference, resolve_reference
    assert resolve_reference(str(run)) == str(snaps[-1].path)  # a run's folder: its newest snapshot
    assert describe_reference(str(run)) == "run-steps, step 4" and describe_reference(str(out)) == "run"
    assert describe_reference("untrained") == "untrained copy"
    code = train_main(["--task", "reverse", "--out", str(out), "--snapshots", str(out / "steps"), "--steps", "2",
                       *TINY])
    assert code == 2 and "--snapshots" in capsys.readouterr().err


def test_the_difference_scale_reads_only_cells_a_query_may_attend_and_says_when_it_is_zero():
    from model.interpret.comparison import MIN_SCALE, symmetric_scale

    diff = np.array([[0.1, -0.9], [-0.3, 0.2]])
    allowed = np.array([[True, False], [True, True]])  # the −0.9 is masked: no weight either model gave
    assert symmetric_scale(diff, allowed) == (pytest.approx(0.3), False)
    assert symmetric_scale(diff) == (pytest.approx(0.9), False)
    assert symmetric_scale(np.zeros((2, 2)), allowed) == (MIN_SCALE, True)  # a scale still, and "identical"
    assert symmetric_scale(np.full((2, 2), 1e-9)) == (MIN_SCALE, False)  # tiny is not zero
