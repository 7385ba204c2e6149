"""Head importance and the pruning curve against brute-force loops written here."""
import csv
import io

import pytest
import torch
import torch.nn.functional as F

from model.data.user_data import make_batch
from model.inference.evaluation import exact_match
from model.interpret.importance import (
    KIND_SHORT,
    HeadImportance,
    ImportanceError,
    gradient_importance,
    head_importance,
    heldout_pairs,
    masking_importance,
)
from model.interpret.interventions import all_heads
from model.io.checkpoints import bundled_checkpoints, load_checkpoint
from model.nn.kinds import ATTENTION_KINDS

N_PAIRS = 12


@pytest.fixture(scope="module")
def bundle():
    return load_checkpoint(bundled_checkpoints()["reverse"])


@pytest.fixture(scope="module")
def pairs(bundle):
    return heldout_pairs(bundle, N_PAIRS)


def loss_by_hand(bundle, pairs):
    batch = make_batch(pairs, bundle.src_tokenizer, bundle.tgt_tokenizer)
    logits = bundle.model(batch.src, batch.tgt_in)
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), batch.tgt_out.reshape(-1), ignore_index=0)


def w_o_of(bundle, key):
    kind, layer, head = key
    return bundle.model.get_submodule(ATTENTION_KINDS[kind].format(layer=layer)).w_o


def test_masking_importance_ranks_heads_as_a_brute_force_loop(bundle, pairs):
    """The loop removes a head another way: Wᴼ's columns that read its slice of the concatenation
    set to 0 (MultiHead = Concat(heads) Wᴼ), weights restored after each head."""
    bundle.model.eval()
    with torch.no_grad():
        base = float(loss_by_hand(bundle, pairs))
        brute = {}
        for key in all_heads(bundle.model):
            w_o, d_k = w_o_of(bundle, key), bundle.config.d_k
            saved = w_o.weight.clone()
            w_o.weight[:, key[2] * d_k:(key[2] + 1) * d_k] = 0
            brute[key] = float(loss_by_hand(bundle, pairs)) - base
            w_o.weight.copy_(saved)
    got_base, got = masking_importance(bundle, pairs)
    assert got_base == pytest.approx(base, rel=1e-5)
    for key in brute:
        assert got[key] == pytest.approx(brute[key], abs=1e-5)
    assert sorted(brute, key=brute.get) == sorted(got, key=got.get)  # the same ranking
    assert max(brute.values()) > 1e-3  # some head matters, so the comparison means something


def test_gradient_importance_is_the_derivative_through_w_o(bundle, pairs):
    """∂L/∂ξ_h for ξ_h scaling head h equals Σ (∂L/∂Wᴼ ⊙ Wᴼ) over the head's columns (one batch)."""
    bundle.model.eval()
    bundle.model.zero_grad(set_to_none=True)
    loss_by_hand(bundle, pairs).backward()
    d_k = bundle.config.d_k
    got = gradient_importance(bundle, pairs, batch_size=len(pairs))
    for key in all_heads(bundle.model):
        w_o = w_o_of(bundle, key)
        cols = slice(key[2] * d_k, (key[2] + 1) * d_k)
        expected = float((w_o.weight.grad[:, cols] * w_o.weight[:, cols]).sum().abs().detach())
        assert got[key] == pytest.approx(expected, rel=1e-3, abs=1e-7)
    bundle.model.zero_grad(set_to_none=True)


def test_importance_ranking_curve_and_csv(bundle, pairs):
    seen = []
    result = head_importance(bundle, N_PAIRS, points=5, progress=lambda i, n, what: seen.append((i, n)))
    n = len(all_heads(bundle.model))
    assert result.curve_counts == [0, 6, 12, 18, 24] and len(result.curve_scores) == 5
    assert len(result.curve_order) == n
    assert result.curve_scores[0] == pytest.approx(exact_match(bundle, pairs))
    assert result.curve_scores[-1] < result.curve_scores[0]  # no heads at all: the task fails
    assert seen[-1][0] == seen[-1][1] and all(a <= b for (a, _), (b, _) in zip(seen, seen[1:]))
    cross = result.ranking("cross")
    assert {k[0] for k in cross} == {"cross"} and result.masking[cross[0]] >= result.masking[cross[-1]]
    assert result.curve_order[0] == result.ranking()[-1]  # the least important is removed first
    rows = list(csv.DictReader(io.StringIO(result.to_csv())))
    assert len(rows) == n + 1 and rows[0]["score_after_pruning"] == f"{result.curve_scores[0]:.6f}"
    sixth = next(r for r in rows if r["pruned_at"] == "6")
    assert sixth["score_after_pruning"] == f"{result.curve_scores[1]:.6f}"
    top = result.ranking("cross", "gradient")[0]  # the summary names each kind's most important first
    assert f"<b>cross</b>: L{top[1] + 1}H{top[2] + 1} {result.gradient[top]:.3g}" in result.summary("gradient")


def test_a_model_without_a_task_is_refused(bundle):
    from dataclasses import replace
    with pytest.raises(ImportanceError, match="names none"):
        heldout_pairs(replace(bundle, task={}), 4)


def test_the_bars_group_heads_by_kind_with_a_gap_and_a_tick_per_kind():
    masking = {("encoder", 0, 0): 0.3, ("encoder", 0, 1): 0.1, ("cross", 0, 0): 0.5, ("cross", 1, 0): 0.2}
    result = HeadImportance("reverse", 10, 1.0, masking, {k: 2 * v for k, v in masking.items()})
    xs, heights, groups, ticks = result.bars("gradient")
    assert xs == [0, 1, 3, 4]  # one empty slot between the kinds
    assert heights == [2 * masking[k] for k in masking] and groups == [0, 0, 1, 1]
    assert ticks == [(0.5, KIND_SHORT["encoder"]), (3.5, KIND_SHORT["cross"])]
    result.curve_scores = [0.97, 0.41, 0.02]
    assert result.headline() == ("reverse: 10 held-out pairs, loss 1.000 with every head; "
                                 "exact match 0.97 → 0.02 with none.")
