"""The faster training step (issue 18) computes what the plain one does.

- `model.nn.dropout.Dropout`: the byte mask drops at its stated rate, scales the rest so the
  expected value is kept, and its gradient is the same mask (checked against the mask read
  back from the output, an independent reference); in evaluation it is the identity.
- The unrecorded (fast) forward in training mode, dropout on, equals the recorded one
  step by step (same seed → same masks), and the future stays blocked.
- Fused Adam (model.train.optimizer) updates the weights as torch's plain Adam does.
- Length buckets and the curriculum (model.data.streams) reorder the same pairs, never others.
"""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from model.data.streams import ScheduledTask
from model.data.tasks import get_task
from model.nn.dropout import Dropout, byte_dropout, byte_rate_close, byte_threshold
from model.nn.hooks import record
from model.train.optimizer import make_optimizer, noam_lr


def test_byte_dropout_drops_at_its_rate_and_keeps_the_expected_value():
    torch.manual_seed(0)
    x = torch.rand(200, 1000) + 0.5  # never zero, so a zero in the output was dropped
    out = byte_dropout(x, 0.1)
    rate = byte_threshold(0.1) / 256  # 26/256
    dropped = out == 0
    assert abs(dropped.float().mean().item() - rate) < 0.005  # 200k draws: σ ≈ 0.0007
    kept = ~dropped
    torch.testing.assert_close(out[kept], x[kept] / (1 - rate))
    assert abs(out.mean().item() / x.mean().item() - 1) < 0.01


def test_byte_dropout_gradient_is_its_mask():
    torch.manual_seed(1)
    x = (torch.rand(64, 20, 32) + 0.5).requires_grad_()
    out = byte_dropout(x, 0.3)
    out.backward(torch.ones_like(out))
    scale = 256 / (256 - byte_threshold(0.3))
    torch.testing.assert_close(x.grad, (out != 0).float() * scale)


def test_dropout_module_is_the_identity_in_eval_and_repeats_with_a_seed():
    d = Dropout(0.1)
    x = torch.randn(8, 16)
    assert torch.equal(d.eval()(x), x)
    d.train()
    torch.manual_seed(3)
    a = d(x)
    torch.manual_seed(3)
    assert torch.equal(d(x), a)
    assert not torch.equal(a, x)


def test_a_rate_bytes_cannot_match_uses_torchs_own_dropout():
    assert byte_rate_close(0.1) and byte_rate_close(0.3) and not byte_rate_close(0.01)
    d = Dropout(0.01).train()
    x = torch.ones(100_000)
    torch.manual_seed(5)
    ours = d(x)
    torch.manual_seed(5)
    assert torch.equal(ours, F.dropout(x, 0.01, True))


@pytest.fixture(scope="module")
def dropout_model():
    from model import Transformer, TransformerConfig

    torch.manual_seed(0)
    cfg = TransformerConfig(src_vocab_size=13, tgt_vocab_size=11, d_model=32, n_heads=4, d_ff=64,
                            n_encoder_layers=2, n_decoder_layers=2, dropout=0.2, max_len=32)
    return Transformer(cfg).train()


def _batch():
    g = torch.Generator().manual_seed(0)
    src = torch.randint(4, 13, (3, 7), generator=g)
    tgt = torch.randint(4, 11, (3, 6), generator=g)
    src[0, 5:] = 0  # padding in the source and the target
    tgt[1, 4:] = 0
    tgt[:, 0] = 1
    return src, tgt


def test_fast_training_forward_equals_the_recorded_one_with_dropout(dropout_model):
    src, tgt = _batch()
    torch.manual_seed(7)
    fast = dropout_model(src, tgt)
    fast.sum().backward()
    fast_grads = [p.grad.clone() for p in dropout_model.parameters()]
    dropout_model.zero_grad()
    torch.manual_seed(7)
    with record(dropout_model) as trace:
        slow = dropout_model(src, tgt)
    slow.sum().backward()
    assert "decoder.layers.0.cross_attn.weights" in trace
    torch.testing.assert_close(fast, slow, rtol=1e-5, atol=1e-5)
    for a, p in zip(fast_grads, dropout_model.parameters()):
        torch.testing.assert_close(a, p.grad, rtol=1e-4, atol=1e-5)
    dropout_model.zero_grad()


def test_the_future_stays_blocked_in_the_fast_training_forward(dropout_model):
    src, tgt = _batch()
    changed = tgt.clone()
    changed[:, 4:] = 5  # only positions ≥ 4 differ
    torch.manual_seed(11)
    a = dropout_model(src, tgt)
    torch.manual_seed(11)
    b = dropout_model(src, changed)
    torch.testing.assert_close(a[:, :4], b[:, :4])
    assert not torch.allclose(a[:, 4:], b[:, 4:])


def test_fused_adam_updates_like_plain_adam(make_model):
    """The same gradients in, the same weights out (gradients from one model, so that the key
    biases' gradients, zero up to rounding, are the same rounding for both)."""
    import copy

    a = make_model(seed=2)
    b = copy.deepcopy(a)
    opt_a, sched_a = make_optimizer(a, 32, warmup=4)
    assert opt_a.defaults["fused"]
    opt_b = torch.optim.Adam(b.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    sched_b = torch.optim.lr_scheduler.LambdaLR(opt_b, lambda k: noam_lr(k + 1, 32, 4))
    src, tgt = _batch()
    for _ in range(3):
        opt_a.zero_grad()
        a(src, tgt).logsumexp(-1).mean().backward()
        for pa, pb in zip(a.parameters(), b.parameters()):
            pb.grad = pa.grad.clone()
        for opt, sched in ((opt_a, sched_a), (opt_b, sched_b)):
            opt.step()
            sched.step()
    for pa, pb in zip(a.parameters(), b.parameters()):
        torch.testing.assert_close(pa, pb, rtol=1e-5, atol=1e-6)


def _take(stream, n):
    return [next(stream) for _ in range(n)]


def test_buckets_group_lengths_and_reorder_the_same_pairs():
    task = get_task("reverse", min_len=1, max_len=16)
    bucketed = ScheduledTask.wrap(task, batch_size=16, bucket_batches=8)
    pairs = _take(bucketed.stream(seed=0), 16 * 8)
    assert sorted(pairs) == sorted(_take(task.stream(seed=0), 16 * 8))  # the same draws
    batches = [pairs[i:i + 16] for i in range(0, len(pairs), 16)]
    spreads = [max(len(s) for s, _ in b) - min(len(s) for s, _ in b) for b in batches]
    assert max(spreads) <= 3, spreads  # random batches of 1–16 letters spread ~14
    firsts = [len(b[0][0]) for b in batches]
    assert firsts != sorted(firsts)  # batches come in shuffled order, not short to long
    assert bucketed.pairs(50, split="eval") == task.pairs(50, split="eval")
    assert bucketed.to_dict() == task.to_dict()


def test_the_curriculum_starts_short_and_reaches_every_length():
    task = get_task("reverse", min_len=1, max_len=16)
    cur = ScheduledTask.wrap(task, batch_size=10, start_len=4, ramp_pairs=500)
    stream = cur.stream(seed=1)
    early = _take(stream, 20)  # the limit is 4 + 12 · drawn/500: still 4
    assert max(len(s) for s, _ in early) <= 4
    _take(stream, 500)
    late = _take(stream, 300)
    assert max(len(s) for s, _ in late) == 16
    assert all(t == s[::-1] for s, t in early + late)


def test_scheduled_task_counts_words_and_survives_a_limit_no_source_meets():
    task = get_task("translation")
    shortest = min(len(s.split()) for s, _ in task.pairs(500))
    cur = ScheduledTask.wrap(task, batch_size=4, start_len=shortest + 1, ramp_pairs=10_000)
    assert all(len(s.split()) <= shortest + 1 for s, _ in _take(cur.stream(seed=0), 20))
    impossible = ScheduledTask.wrap(task, batch_size=4, start_len=1, ramp_pairs=10_000)
    assert len(_take(impossible.stream(seed=0), 3)) == 3  # the shortest drawn, not a hang
