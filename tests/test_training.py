"""The paper's training recipe and the UI-free Trainer: schedule, optimiser, learning,
thread controls, and failures that stop cleanly with the last good weights."""
import math
import re
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from model.data.tasks import get_task
from model.io.checkpoints import random_bundle
from model.nn.devices import DeviceError, resolve_device
from model.train.optimizer import LINEAR_DECAY_FLOOR, linear_decay_lr
from model.train.trainer import (
    ADAM_BETAS,
    ADAM_EPS,
    EvalEvent,
    StepEvent,
    TrainConfig,
    Trainer,
    TrainingError,
    noam_lr,
    translate_batch,
)

torch.set_num_threads(1)
sys.path.insert(0, str(Path(__file__).parent))  # scale_worker, test_scale_distributed: the tiny TSV run


def tiny_trainer(task="copy", steps=200, **cfg) -> Trainer:
    torch.manual_seed(0)
    bundle = random_bundle(task, d_model=32, n_heads=2, n_encoder_layers=1, n_decoder_layers=1, d_ff=64,
                           max_len=16, dropout=0.0)
    params = dict(steps=steps, batch_size=32, warmup=50, device="cpu", seed=0)
    params.update(cfg)
    return Trainer(bundle, get_task(task, max_len=6), TrainConfig(**params))


def weights(trainer: Trainer) -> dict:
    return {k: v.clone() for k, v in trainer.model.state_dict().items()}


def same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


# -- the recipe ---------------------------------------------------------------------------------
@pytest.mark.parametrize("step", [1, 7, 100, 399, 400, 401, 1000, 12345])
def test_noam_lr_matches_formula(step):
    d_model, warmup, scale = 512, 400, 2.0
    expected = scale * (1 / math.sqrt(d_model)) * min(1 / math.sqrt(step), step / warmup ** 1.5)
    assert noam_lr(step, d_model, warmup, scale) == pytest.approx(expected, rel=1e-12)


def test_noam_lr_peaks_at_warmup_and_is_linear_then_inverse_sqrt():
    lrs = [noam_lr(s, 512, 4000) for s in range(1, 20001)]
    assert max(range(len(lrs)), key=lrs.__getitem__) + 1 == 4000
    assert lrs[3999] == pytest.approx(512 ** -0.5 * 4000 ** -0.5)  # the paper's peak ≈ 7.0e-4
    assert lrs[1999] == pytest.approx(lrs[999] * 2)  # linear warm-up
    assert lrs[15999] == pytest.approx(lrs[7999] / math.sqrt(2))  # 1/√step decay
    with pytest.raises(ValueError):
        noam_lr(0, 512, 4000)


def test_linear_decay_shares_eq3s_warmup_then_falls_in_a_straight_line_to_its_floor():
    d_model, warmup, scale, end = 64, 200, 1.0, 400
    peak = scale * d_model ** -0.5 * warmup ** -0.5
    for step in (1, 50, 199, 200):
        assert linear_decay_lr(step, d_model, warmup, scale, end) == pytest.approx(noam_lr(step, d_model, warmup, scale))
    assert linear_decay_lr(300, d_model, warmup, scale, end) == pytest.approx(peak * (1 + LINEAR_DECAY_FLOOR) / 2)
    for step in (400, 401, 5000):  # held at the floor: a run that goes on keeps learning slowly
        assert linear_decay_lr(step, d_model, warmup, scale, end) == pytest.approx(peak * LINEAR_DECAY_FLOOR)
    with pytest.raises(ValueError, match="after the warm-up"):
        linear_decay_lr(1, d_model, warmup, scale, warmup)


def test_a_trainer_with_lr_decay_steps_follows_the_linear_schedule():
    t = tiny_trainer(warmup=3, lr_scale=0.5, lr_decay_steps=6)
    lrs = [t.step().lr for _ in range(8)]
    assert lrs == pytest.approx([linear_decay_lr(k, 32, 3, 0.5, 6) for k in range(1, 9)])
    assert lrs[2] > lrs[3] > lrs[4] > lrs[5] == lrs[6] == lrs[7]
    with pytest.raises(TrainingError, match="lr_decay_steps"):
        TrainConfig(warmup=10, lr_decay_steps=10).validate()


@pytest.mark.parametrize("decay", [0, 6])
def test_the_planned_rates_are_those_the_run_then_uses(decay):
    """`planned_rates`, read before the first step, gives each step's rate as the run's steps then
    report it (Eq. 3, or its warm-up and a linear decay); sampled, it keeps the corners exact."""
    from model.train.optimizer import planned_rates
    t = tiny_trainer(warmup=3, lr_scale=0.5, lr_decay_steps=decay)
    steps, rates = planned_rates(t.scheduler, 9)
    assert list(steps) == list(range(1, 10))
    assert [t.step().lr for _ in range(9)] == pytest.approx(list(rates), rel=1e-12)
    sampled, values = planned_rates(tiny_trainer(warmup=3, lr_decay_steps=decay).scheduler, 10_000, points=50,
                                     keep=(3, decay))
    assert sampled[0] == 1 and sampled[-1] == 10_000 and 3 in sampled and len(sampled) <= 52
    assert np.all(np.diff(sampled) > 0)
    expected = [linear_decay_lr(int(s), 32, 3, 1.0, decay) if decay else noam_lr(int(s), 32, 3) for s in sampled]
    assert values == pytest.approx(expected, rel=1e-12)
    assert values.max() == pytest.approx(noam_lr(3, 32, 3))  # the peak itself, not a sample beside it


def test_adam_and_loss_use_the_papers_settings():
    t = tiny_trainer()
    assert isinstance(t.optimizer, torch.optim.Adam)
    group = t.optimizer.param_groups[0]
    assert group["betas"] == ADAM_BETAS == (0.9, 0.98) and group["eps"] == ADAM_EPS == 1e-9
    assert TrainConfig().label_smoothing == 0.1
    assert t.loss_fn.label_smoothing == 0.1 and t.loss_fn.ignore_index == 0
    n_params = len({id(p) for p in t.model.parameters()})
    assert sum(len(g["params"]) for g in t.optimizer.param_groups) == n_params


def test_each_step_uses_the_scheduled_lr():
    t = tiny_trainer(warmup=5, lr_scale=0.5)
    for k in range(1, 9):
        event = t.step()
        assert event.step == k
        assert event.lr == pytest.approx(noam_lr(k, 32, 5, 0.5))


def test_reported_loss_is_label_smoothed_cross_entropy():
    """Independent check of Section 5.4: (1-ε)·NLL + ε·mean over the vocabulary of -log p, pads ignored."""
    t, twin = tiny_trainer(), tiny_trainer()
    batch = twin.next_batch()  # same seed → the batch t is about to draw
    with torch.no_grad():
        logp = t.model.train()(batch.src, batch.tgt_in).log_softmax(-1)  # dropout is 0 in tiny models
    real = batch.tgt_out != 0
    nll = -logp.gather(-1, batch.tgt_out[..., None])[..., 0]
    smooth = -logp.mean(-1)
    expected = float((((1 - 0.1) * nll + 0.1 * smooth)[real]).mean())
    assert t.step().loss == pytest.approx(expected, rel=1e-4)


def test_loss_falls_on_a_tiny_copy_task():
    t = tiny_trainer(steps=150)
    losses = [e.loss for e in t.events() if isinstance(e, StepEvent)]
    assert len(losses) == 150
    first, last = sum(losses[:10]) / 10, sum(losses[-10:]) / 10
    assert last < 0.6 * first, (first, last)
    assert t.last_step.token_accuracy > 0.5


def test_gradient_clipping_bounds_the_update_gradient():
    t = tiny_trainer(clip_grad=0.01, lr_scale=1.0)
    event = t.step()
    total = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in t.model.parameters() if p.grad is not None]))
    assert event.grad_norm > 0.01  # the reported norm is the one before clipping
    assert float(total) <= 0.01 * 1.001


def test_events_interleave_evaluations():
    t = tiny_trainer(steps=10, eval_every=5, eval_size=20)
    kinds = [(type(e).__name__, e.step) for e in t.events()]
    assert kinds == [("StepEvent", i) for i in range(1, 6)] + [("EvalEvent", 5)] + \
                    [("StepEvent", i) for i in range(6, 11)] + [("EvalEvent", 10)]
    event = t.last_eval
    assert isinstance(event, EvalEvent) and event.n == 20 and 0.0 <= event.exact_match <= 1.0


def test_evaluate_equals_one_by_one_decoding():
    t = tiny_trainer(steps=120)
    t.run()
    ev = t.evaluate(40)
    pairs = t.eval_pairs(40)
    bundle = t.to_bundle()
    singles = [bundle.translate(s, max_len=t.task.max_tgt_len + 2) for s, _ in pairs]
    batched = translate_batch(t.model, t.src_tokenizer, t.tgt_tokenizer, [s for s, _ in pairs],
                              max_output=t.task.max_tgt_len + 2, batch_size=7)
    assert batched == singles  # padding in a batch changes nothing
    assert ev.exact_match == pytest.approx(sum(o == tgt for o, (_, tgt) in zip(singles, pairs)) / 40)
    assert all(split == "eval" for split in ["eval"]) and ev.n == 40


# -- thread controls --------------------------------------------------------------------------
def wait_for(cond, timeout=20.0):
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError("timed out")
        time.sleep(0.01)


def test_pause_blocks_steps_and_stop_ends_run_from_another_thread():
    t = tiny_trainer(steps=100_000)
    result = {}
    worker = threading.Thread(target=lambda: result.setdefault("metrics", t.run()), daemon=True)
    worker.start()
    wait_for(lambda: t.step_count >= 3)
    t.pause()
    time.sleep(0.2)  # let an in-flight step finish
    frozen = t.step_count
    time.sleep(0.5)
    assert t.step_count == frozen and t.paused
    t.resume()
    wait_for(lambda: t.step_count > frozen + 2)
    t.pause()
    t.stop()  # stop wakes a paused run
    worker.join(timeout=10)
    assert not worker.is_alive()
    assert result["metrics"]["steps"] == t.step_count < 100_000


def test_stop_before_run_runs_nothing():
    t = tiny_trainer(steps=50)
    t.stop()
    assert list(t.events()) == [] and t.step_count == 0


# -- failures -------------------------------------------------------------------------------
def test_nan_loss_names_the_step_and_keeps_weights(monkeypatch):
    t = tiny_trainer()
    t.step()
    t.step()
    before = weights(t)
    real = t.loss_fn

    def poisoned(logits, target):
        return real(logits, target) * float("nan")

    monkeypatch.setattr(t, "loss_fn", poisoned)
    with pytest.raises(TrainingError, match=r"loss became nan at step 3"):
        t.step()
    assert same(before, weights(t)) and t.step_count == 2


def test_huge_learning_rate_diverges_with_a_clear_error_and_last_good_weights():
    t = tiny_trainer(steps=500, warmup=10, lr_scale=1e6, batch_size=16)
    before = weights(t)
    with pytest.raises(TrainingError) as err:
        for _ in range(500):
            before = weights(t)
            t.step()
    failed = t.step_count + 1
    assert re.search(rf"(loss|gradient norm) became (nan|inf|-inf) at step {failed}\b", str(err.value))
    assert same(before, weights(t))


def test_cuda_out_of_memory_is_a_clear_error(monkeypatch):
    t = tiny_trainer()

    def oom(*args, **kwargs):
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    before = weights(t)
    monkeypatch.setattr(t.model, "forward", oom)
    with pytest.raises(TrainingError, match=r"out of GPU memory at step 1 \(batch size 32.*smaller --batch-size"):
        t.step()
    assert same(before, weights(t)) and t.step_count == 0


@pytest.mark.parametrize("field, value", [("steps", 0), ("batch_size", -1), ("lr_scale", float("nan")),
                                          ("label_smoothing", 1.0), ("clip_grad", 0.0), ("eval_every", -5)])
def test_bad_train_config(field, value):
    with pytest.raises(TrainingError, match=field):
        TrainConfig(**{field: value}).validate()


def test_tokenizers_must_fit_the_model():
    bundle = random_bundle("reverse")
    with pytest.raises(TrainingError, match="uses source symbols the model.s vocabulary lacks"):
        Trainer(bundle, get_task("addition"), TrainConfig(device="cpu"))
    with pytest.raises(TrainingError, match="max_len is 8"):
        Trainer(random_bundle("reverse", max_len=8), "reverse", TrainConfig(device="cpu"))


# -- devices ------------------------------------------------------------------------------------
def test_device_auto_prefers_cuda_then_mps_then_cpu(monkeypatch):
    import model.nn.devices as devices

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(devices, "mps_available", lambda: False)
    assert resolve_device("auto") == torch.device("cpu")
    monkeypatch.setattr(devices, "mps_available", lambda: True)
    assert resolve_device("auto") == torch.device("mps")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_device("auto") == torch.device("cuda")


def test_unavailable_or_unknown_device_is_refused(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(DeviceError, match="no CUDA GPU"):
        resolve_device("cuda")
    with pytest.raises(DeviceError, match="unknown device 'tpu'"):
        resolve_device("tpu")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_training_uses_bf16_autocast():
    t = tiny_trainer(device="cuda")
    assert t.step().loss > 0 and t.device.type == "cuda"


# -- the training fast paths compute the paper's numbers ------------------------------------
def test_fused_projections_and_cpu_dropout_path_match_eq1():
    """Self-attention's one (3·d)-wide projection, cross-attention's fused K/V, and the written-out
    Eq. 1 used for CPU training all equal separate projections + softmax(QKᵀ/√d_k)V."""
    from torch import nn

    from model.nn.attention import MultiHeadAttention, attention

    torch.manual_seed(0)
    mha = MultiHeadAttention(32, 4, dropout=0.1)
    x, mem = torch.randn(3, 7, 32), torch.randn(3, 5, 32)
    mask = torch.ones(3, 1, 7, 7, dtype=torch.bool).tril()

    def reference(q_in, kv_in, m):
        split = lambda t: t.view(3, -1, 4, 8).transpose(1, 2)  # noqa: E731
        ctx, _ = attention(split(mha.w_q(q_in)), split(mha.w_k(kv_in)), split(mha.w_v(kv_in)), m)
        return mha.w_o(ctx.transpose(1, 2).reshape(3, -1, 32))

    mha.eval()  # SDPA path
    assert torch.allclose(mha(x, x, x, mask), reference(x, x, mask), atol=1e-5)
    assert torch.allclose(mha(x, mem, mem, None), reference(x, mem, None), atol=1e-5)
    mha.train()
    mha.dropout = nn.Identity()  # the CPU training path, with dropping switched off to compare numbers
    assert torch.allclose(mha(x, x, x, mask), reference(x, x, mask), atol=1e-5)
    out = mha(x, x, x, mask)
    out.sum().backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in (mha.w_q.weight, mha.w_k.weight, mha.w_v.weight))


# -- one Trainer: sentence batches and token batches ----------------------------------------
def _tsv_run(tmp_path, **cfg):
    """A Trainer on a reversal TSV; `cfg` picks sentence or token batches."""
    from scale_worker import tiny_model
    from test_scale_distributed import tiny_tsv

    data = str(tiny_tsv(tmp_path / "pairs.tsv", n=300))
    bundle = tiny_model(data)
    params = dict(steps=80, warmup=20, lr_scale=0.5, device="cpu", seed=0, buffer_pairs=300)
    params.update(cfg)
    task = None if params.get("batch_tokens") else "tsv"
    if task:
        from model.data.user_data import tsv_task

        task = tsv_task(data, "char")
    return Trainer(bundle, task, TrainConfig(**params), data=data if task is None else None)


@pytest.mark.parametrize("mode", [dict(batch_size=24), dict(batch_tokens=200)], ids=["sentences", "tokens"])
def test_sentence_and_token_batches_follow_the_noam_schedule_and_learn(tmp_path, mode):
    t = _tsv_run(tmp_path, **mode)
    events = [t.step() for _ in range(t.config.steps)]
    assert [e.lr for e in events] == pytest.approx([noam_lr(k, 32, 20, 0.5) for k in range(1, 81)])
    first, last = np.mean([e.loss for e in events[:10]]), np.mean([e.loss for e in events[-10:]])
    assert last < 0.8 * first, (first, last)
    assert all(e.tokens_per_s > 0 and 0 <= e.token_accuracy <= 1 for e in events)


@pytest.mark.parametrize("mode", [dict(batch_size=24), dict(batch_tokens=240)], ids=["sentences", "tokens"])
def test_accumulating_micro_batches_trains_as_one_batch(tmp_path, mode):
    """A step's loss is normalised by the target tokens of the whole step: three micro-batches of
    a sentence step give the one batch's loss curve (the token budget, shared by the slots, gives
    other batches: there the curve only has to be the same schedule, summed right)."""
    whole, split = _tsv_run(tmp_path, steps=6, **mode), _tsv_run(tmp_path, steps=6, accumulate=3, **mode)
    a = [whole.step() for _ in range(6)]
    b = [split.step() for _ in range(6)]
    assert [e.lr for e in a] == [e.lr for e in b]
    if "batch_size" in mode:
        assert [e.loss for e in b] == pytest.approx([e.loss for e in a], abs=1e-5)
        assert [e.token_accuracy for e in b] == pytest.approx([e.token_accuracy for e in a])
    else:
        assert all(math.isfinite(e.loss) for e in b) and b[-1].loss < b[0].loss
