"""What the decoding views draw, without widgets: the beam tree's layout, winner and node kinds
(model/inference/beam_tree.py) and the texts about a decode run (model/interpret/decode_texts.py),
checked against the run's own numbers and hand-written loops."""
from __future__ import annotations

import pytest
import torch

from model.inference.beam_tree import (
    best_path,
    edge_state,
    label_density,
    node_label,
    node_state,
    node_tip,
    step_ticks,
    tree_layout,
)
from model.inference.decoding import BeamNode, BeamResult
from model.inference.next_token import bar_order, caption_lines, ranked_ids, rows_that_fit, smoothing_tip
from model.interpret.decode_run import DecodeSettings, compute_run
from model.interpret.decode_texts import (
    EQUAL_ATOL,
    StepMaps,
    changed_predictions,
    chosen_how,
    folded_prefix,
    future_note,
    mask_equality,
    step_caption,
    table_marks,
    unknown_note,
)
from model.io.checkpoints import random_bundle


def tree() -> BeamResult:
    """<bos> → a (kept) → c (finished, best); <bos> → b (pruned); a → d (finished)."""
    nodes = [BeamNode(0, None, 1, 0, 0.0, 0.0), BeamNode(1, 0, 3, 1, -0.1, -0.1),
             BeamNode(2, 0, 4, 1, -2.0, -2.0, pruned=True), BeamNode(3, 1, 2, 2, -0.3, -0.25, finished=True),
             BeamNode(4, 1, 5, 2, -0.9, -0.8, finished=True)]
    return BeamResult(tokens=[1, 3, 2], score=-0.25, nodes=nodes, finished=[3, 4])


def test_the_tree_lines_up_with_the_steps_and_finds_its_winner():
    result = tree()
    pos = tree_layout(result.nodes)
    assert pos[0] == (-1.0, 0.0)  # <bos> left of step 0
    assert {pos[1][0], pos[2][0]} == {0.0} and pos[1][1] < pos[2][1]  # more probable first, centred on 0
    assert pos[1][1] == -pos[2][1]
    assert pos[3][1] < pos[4][1] and {pos[3][0], pos[4][0]} == {1.0}
    best = best_path(result)
    assert best == {0, 1, 3}  # the finished node of the highest score and its ancestors
    states = [node_state(n, n.id in best) for n in result.nodes]
    assert states == ["best", "best", "pruned", "best", "finished"]
    assert edge_state(result.nodes[4], False) == "live"  # a finished hypothesis' edge is a live one's
    pieces = ["<pad>", "<bos>", "<eos>", "a", "b", "d"]
    assert step_ticks(result.nodes, pieces, [p[0] for p in pos.values()]) == [(-1.0, "<bos>"), (0, "1"), (1, "2")]
    tip = node_tip(result, 3, pieces)
    assert tip.startswith("a<eos>\n") and "score = log p / lp = -0.250" in tip and "finished" in tip
    assert node_label(result.nodes[0], pieces) == ("<bos>", "")  # the root is given, not scored
    assert node_label(result.nodes[3], pieces, str.upper) == ("<EOS>", "-0.25")
    assert node_label(BeamNode(5, 0, 99, 1, 0.0, 0.0), pieces)[0] == "99"  # an id beyond the pieces


def test_a_roomier_tree_labels_more():
    """Kept tokens, then kept scores, then pruned tokens as a step's column widens; none in slots
    lower than a label's line, whatever the width."""
    one, two = 10.0, 20.0
    assert label_density(20, 100, one, two) == (False, False, False)
    assert label_density(30, 100, one, two) == (True, False, False)
    assert label_density(40, 100, one, two) == (True, True, False)
    assert label_density(60, 100, one, two) == (True, True, True)
    assert label_density(60, 16, one, two) == (True, False, True)  # a token fits a slot, a second line not
    assert label_density(600, 14, one, two) == (False, False, False)


def test_a_prompt_is_a_stem_before_the_search():
    nodes = [BeamNode(0, None, 1, 0, 0.0, 0.0), BeamNode(1, 0, 3, 0, 0.0, 0.0, prompt=True),
             BeamNode(2, 1, 4, 0, 0.0, 0.0, prompt=True), BeamNode(3, 2, 2, 1, -0.5, -0.4, finished=True)]
    result = BeamResult([1, 3, 4, 2], -0.4, nodes, [3])
    pos = tree_layout(nodes)
    assert [pos[i] for i in range(3)] == [(-3.0, 0.0), (-2.0, 0.0), (-1.0, 0.0)] and pos[3] == (0.0, 0.0)
    assert node_state(nodes[1], True) == "prompt" and "given in the prompt" in node_tip(result, 2, ["x"] * 6)
    ticks = step_ticks(nodes, ["<pad>", "<bos>", "<eos>", "a", "b"], [p[0] for p in pos.values()])
    assert ticks[0] == (-3.0, "<bos>") and (-1.5, "prompt") in ticks


@pytest.fixture(scope="module")
def run():
    """An untrained model's greedy run of at least three steps (its weights seeded: an unseeded
    one may say <eos> at once, depending on the tests before it)."""
    for seed in range(20):
        torch.manual_seed(seed)
        bundle = random_bundle("reverse", dropout=0.0)
        bundle.model.eval()
        run = compute_run(bundle, "abcd", DecodeSettings(strategy="greedy"))
        if len(run.steps) >= 3:
            return run
    pytest.fail("no seed gave a run of three steps")


def test_the_masks_proof_is_the_runs_own_difference(run):
    for t in range(len(run.steps)):
        text, equal = mask_equality(run, t, causal=True)
        assert equal and f"Row {run.row(t)} of the parallel pass = step {t + 1}" in text
        assert f"{run.difference(t, True):.1e}" in text
        text, equal = mask_equality(run, t, causal=False)
        assert equal == (run.difference(t, False) < EQUAL_ATOL) and ("=" if equal else "≠") in text
    changed = changed_predictions(run)
    hand = [run.masked.predicted[i] != run.unmasked.predicted[i] for i in range(len(run.masked.predicted))]
    assert changed == hand
    assert f"{sum(hand)} of {len(hand)} predictions" in future_note(run, 0, 0, 0, causal=True)


def test_a_steps_maps_are_its_recorded_attention_in_the_runs_frame(run):
    maps = StepMaps.of(run, 1, layer=7, head=1)  # a layer the model does not have: its last
    step, n_layers = run.steps[1], run.steps[1].self_attention.shape[0]
    assert maps.titles["mask"][0] == "Mask 2×2" and maps.titles["self"][0] == f"Self L{n_layers} H2"
    assert maps.titles["cross"][1] == f"Cross-attention, layer {n_layers}, head 2"
    assert (maps.self_attention == step.self_attention[n_layers - 1, 1].numpy()).all()
    assert (maps.cross == step.cross_attention[n_layers - 1, 1].numpy()).all() and maps.query == 1
    assert maps.n == run.length and maps.rows[:2] == run.pieces(step.prefix) and set(maps.rows[2:]) <= {""}
    assert chosen_how(run) == "argmax" and unknown_note(run) == ""


def test_the_bars_rank_by_probability_and_keep_the_chosen_token_in_view():
    probs = [0.1, 0.4, 0.05, 0.4, 0.05]
    assert ranked_ids(probs, 3, 1) == [1, 3, 0]  # best first, a tie in id order
    assert ranked_ids(probs, 3, 4) == [1, 3, 0, 4]  # the chosen one after them from the tail
    assert ranked_ids(probs, 3, None) == [1, 3, 0]
    order = bar_order(6, 4, 3)  # only three slots: the chosen (rank 5) takes the third
    assert order[:3] == [0, 1, 4] and sorted(order) == list(range(6))
    assert bar_order(6, 1, 3) == list(range(6)) and bar_order(6, -1, 3) == list(range(6))
    tip = smoothing_tip(0.1, 30)
    assert f"{1 - 0.1 + 0.1 / 30:.3f}" in tip and f"{0.1 / 30:.4f}" in tip and "other 29 tokens" in tip


def test_the_parallel_table_marks_the_current_row_and_the_changes(run):
    t = 1
    marks = table_marks(run, t)
    changed = changed_predictions(run)
    assert len(marks) == 3 and all(len(row) == len(run.masked.predicted) for row in marks)
    for c in range(len(changed)):
        assert marks[2][c] == ("changed" if changed[c] else "current" if c == run.row(t) else "")
        assert marks[0][c] == marks[1][c] == ("current" if c == run.row(t) else "")  # no prompt here


def test_a_long_prefix_folds_its_oldest_tokens_and_counts_the_prompts_apart():
    hidden, prompt = folded_prefix(8, 2, keep_last=3)  # <bos> p1 p2 g1 g2 | g3 g4 g5
    assert list(hidden) == [1, 2, 3, 4] and prompt == 2
    assert folded_prefix(8, 2, keep_last=7) == (range(0), 0) and folded_prefix(8, 2, None) == (range(0), 0)


def test_the_bars_caption_names_the_chosen_token_and_its_probability(run):
    t = len(run.steps) - 1
    step = run.steps[t]
    (how, token, p), tip = step_caption(run, t)
    assert how == "argmax" and token == f"{run.vocab[step.chosen]!r},"
    assert p == f"p = {float(step.model_probs[step.chosen]):.2f}"
    assert tip.startswith(f"Next token at step {t + 1}: argmax") and "dashed" not in tip


def test_as_many_rows_as_the_height_reads_and_captions_break_between_parts():
    assert rows_that_fit(6, 1000, 20) == 6
    assert rows_that_fit(6, 99, 20) == 4  # four whole 20-px lines in 99 px
    assert rows_that_fit(6, 40, 20) == 3  # never fewer than three
    assert rows_that_fit(2, 40, 20) == 2  # nor more than there are
    assert rows_that_fit(6, 0, 20) == 6  # not laid out yet: all
    width = len  # a character a pixel
    assert caption_lines(["argmax", "'<eos>',", "p = 0.91"], width, 100) == ["argmax '<eos>', p = 0.91"]
    assert caption_lines(["argmax", "'<eos>',", "p = 0.91"], width, 15) == ["argmax '<eos>',", "p = 0.91"]
    assert caption_lines(["argmax", "'<eos>',"], width, 3) == ["argmax", "'<eos>',"]  # a part is never broken
