"""The induction lab's model side: data, scores against hand-written loops, the phase-change
detector, the attention-only config, and a short training run."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from model.nn.config import TransformerConfig
from model.nn.transformer import Transformer
from model.train.induction import InductionConfig, InductionLab, InductionMeasure, InductionStep, measure
from model.train.induction_data import InductionDataError, RepeatBatch, repeat_batch
from model.train.induction_scores import icl_score, induction_scores, phase_change_step, position_losses

TINY = dict(vocab=16, seq_len=20, min_len=3, max_len=8, d_model=32, n_heads=2, batch_size=16, eval_size=8,
            eval_every=10, warmup=10)


def test_second_copy_repeats_the_first():
    batch = repeat_batch(50, 30, 20, 2, 12, torch.Generator().manual_seed(3))
    assert batch.ids.min() >= 1 and batch.ids.max() < 20  # never the pad id
    assert len(set(batch.length.tolist())) > 1 and len(set(batch.start.tolist())) > 1  # no fixed offset
    for row, s, n in zip(batch.ids.tolist(), batch.start.tolist(), batch.length.tolist()):
        assert 2 <= n <= 12 and s + 2 * n <= 30
        assert row[s + n:s + 2 * n] == row[s:s + n]


def test_data_is_seeded():
    a = repeat_batch(4, 20, 10, 2, 5, torch.Generator().manual_seed(1))
    b = repeat_batch(4, 20, 10, 2, 5, torch.Generator().manual_seed(1))
    assert torch.equal(a.ids, b.ids) and torch.equal(a.start, b.start)


@pytest.mark.parametrize("args", [(4, 10, 2, 6), (20, 2, 2, 5), (20, 10, 1, 5)])
def test_bad_sizes_are_refused(args):
    seq_len, vocab, lo, hi = args
    with pytest.raises(InductionDataError):
        repeat_batch(2, seq_len, vocab, lo, hi, torch.Generator())


def _hand_batch() -> RepeatBatch:
    ids = torch.tensor([[5, 1, 2, 3, 1, 2, 3, 7, 4, 4],
                        [2, 6, 9, 8, 6, 9, 8, 6, 9, 3]])
    # both rows: a 3-token segment at position 1, again at 4 ([1 2 3], [6 9 8])
    return RepeatBatch(ids, torch.tensor([1, 1]), torch.tensor([3, 3]))


def test_induction_score_matches_a_loop():
    batch = _hand_batch()
    g = torch.Generator().manual_seed(0)
    att = torch.rand(2, 3, 10, 10, generator=g).tril()
    att = att / att.sum(-1, keepdim=True)
    want = []
    for h in range(3):
        picked = []
        for b in range(2):
            s, n = int(batch.start[b]), int(batch.length[b])
            for j in range(n - 1):  # query s+n+j (second copy, not its last token) → key s+j+1
                picked.append(float(att[b, h, s + n + j, s + j + 1]))
        want.append(sum(picked) / len(picked))
    assert induction_scores(att, batch).tolist() == pytest.approx(want)


def test_a_perfect_induction_pattern_scores_one():
    batch = _hand_batch()
    att = torch.zeros(2, 1, 10, 10)
    att[:, :, torch.arange(10), 0] = 1.0  # everything on the first token …
    for b in range(2):
        s, n = int(batch.start[b]), int(batch.length[b])
        for q in range(s + n, s + 2 * n - 1):
            att[b, 0, q] = 0
            att[b, 0, q, q - n + 1] = 1.0  # … except the induction step
    assert induction_scores(att, batch).item() == pytest.approx(1.0)


def test_icl_score_matches_a_loop():
    batch = _hand_batch()
    logits = torch.randn(2, 10, 12, generator=torch.Generator().manual_seed(1))
    losses = position_losses(logits, batch.ids)
    first, second = [], []
    for b in range(2):
        s, n = int(batch.start[b]), int(batch.length[b])
        for q in range(9):
            p = torch.log_softmax(logits[b, q], -1)[batch.ids[b, q + 1]]
            if s <= q <= s + n - 2:
                first.append(-float(p))
            elif s + n <= q <= s + 2 * n - 2:
                second.append(-float(p))
    assert icl_score(losses, batch) == pytest.approx(sum(second) / len(second) - sum(first) / len(first), rel=1e-5)


def test_phase_change_step():
    steps = np.arange(0, 1000, 10)
    values = -3.0 / (1 + np.exp(-(steps - 403) / 20.0))  # a sigmoid fall centred on step 403
    values[30] = -2.0  # an early spike past half-way does not count: the curve falls back
    assert phase_change_step(steps, values, 1.0) == 410  # the first reading past it
    assert phase_change_step(steps, values * 0.1, 1.0) is None  # too small a change to be one
    assert phase_change_step(steps[:2], values[:2], 1.0) is None


def test_attention_only_config():
    cfg = TransformerConfig(10, 10, d_model=16, n_heads=2, d_ff=0, n_encoder_layers=0, n_decoder_layers=2,
                            kind="decoder_only", dropout=0.0, max_len=12)
    model = Transformer(cfg)
    assert not any("ffn" in name for name, _ in model.named_parameters())
    assert model(None, torch.randint(1, 10, (2, 12))).shape == (2, 12, 10)
    with pytest.raises(ValueError, match="d_ff must be a non-negative integer"):
        TransformerConfig(10, 10, d_ff=-1)


def test_measure_reads_the_recorded_attention():
    lab = InductionLab(InductionConfig(**TINY, steps=1))
    found = lab.measure()
    n_layers, heads = lab.config.n_layers, lab.config.n_heads
    assert found.scores.shape == (n_layers, heads) and found.attention.shape == (n_layers, heads, 20, 20)
    assert np.allclose(found.attention.sum(-1), 1.0, atol=1e-5)
    assert found.attention[0, 0, 0, 1] == 0.0  # causal
    row = int(lab.eval_batch.length.argmax())  # the example: the row with the longest segment
    assert found.example == lab.eval_batch.ids[row].tolist() and found.example_length == lab.eval_batch.length.max()
    assert found.icl == pytest.approx(found.second_copy_loss - found.first_copy_loss)
    again = measure(lab.model, lab.eval_batch)
    assert np.array_equal(again.scores, found.scores)


def test_short_training_lowers_the_loss_and_is_deterministic():
    def run():
        lab = InductionLab(InductionConfig(**TINY, steps=120))
        events = list(lab.events())
        return lab, [e for e in events if isinstance(e, InductionStep)], [e for e in events if isinstance(e, InductionMeasure)]

    torch.set_num_threads(1)
    lab, steps, measures = run()
    assert [e.step for e in steps] == list(range(1, 121))
    assert [m.step for m in measures] == list(range(0, 121, 10))
    assert measures[-1].loss < measures[0].loss - 0.3
    assert measures[-1].loss < math.log(15) + 0.1  # at least the uniform guess over ids 1 … 15 is learnt
    _, steps_again, _ = run()
    assert [e.loss for e in steps] == [e.loss for e in steps_again]


def test_stop_ends_training():
    lab = InductionLab(InductionConfig(**TINY, steps=1000))
    seen = 0
    for event in lab.events():
        if isinstance(event, InductionStep):
            seen += 1
            if seen == 5:
                lab.stop()
    assert lab.step_count == 5 and lab.measures[-1].step == 5
