"""The same numbers on a GPU as on the CPU: every panel's work with the model on CUDA.

Marked `gpu` (`pytest -m gpu`, run by scripts/gpu_check.sh on a CUDA machine) and skipped
without one. TRANSFORMER_EXPLORER_TEST_DEVICE=cpu runs them CPU against CPU (a check of the
tests themselves on a machine without a GPU)."""
from __future__ import annotations

import copy
import os

import pytest
import torch

from model import bundled_checkpoints, compute_frame, load_checkpoint, sample_decode
from model.data.tokenizers import BOS_ID, EOS_ID
from model.interpret.attribution import attribute
from model.interpret.comparison import compare
from model.interpret.frame import DecodeSettings
from model.interpret.interventions import all_heads

DEVICE = os.environ.get("TRANSFORMER_EXPLORER_TEST_DEVICE", "cuda")
AVAILABLE = DEVICE == "cpu" or (DEVICE.startswith("cuda") and torch.cuda.is_available())
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not AVAILABLE, reason="needs a CUDA GPU")]
CLOSE = dict(rtol=1e-4, atol=1e-4)  # float32 kernels differ in summation order, not in meaning


def pair(name: str):
    folder = bundled_checkpoints()[name]
    return load_checkpoint(folder), load_checkpoint(folder, device=DEVICE)


@pytest.fixture(scope="module")
def reverse_pair():
    return pair("reverse")


def test_a_seeded_sample_is_the_same_on_cuda_as_on_the_cpu(reverse_pair):
    cpu, gpu = reverse_pair
    src = torch.tensor([cpu.src_tokenizer.encode("transformer").ids])

    def draw(bundle):
        gen = torch.Generator().manual_seed(7)
        return sample_decode(bundle.model, src.to(bundle.device), BOS_ID, EOS_ID, 16, temperature=1.5,
                             generator=gen).cpu()

    assert torch.equal(draw(cpu), draw(gpu))


def test_attribution_runs_on_cuda_and_agrees_with_the_cpu(reverse_pair):
    cpu, gpu = reverse_pair
    a = attribute(cpu, "transformer", None, 3)
    b = attribute(gpu, "transformer", None, 3)
    assert a.keys() == b.keys()
    for name, scores in a.items():
        assert scores == pytest.approx(b[name], abs=1e-3), name


def same_frames(a, b) -> None:
    assert a.output_text == b.output_text
    for name in a.forward.trace.names():
        x, y = a.forward.trace[name].tensor, b.forward.trace[name].tensor
        assert y.device.type == "cpu", name  # what panels draw is on the CPU
        if x.is_floating_point():
            torch.testing.assert_close(x, y, **CLOSE, msg=name)
        else:
            assert torch.equal(x, y), name
    if a.decode is not None:
        assert a.decode.output_ids == b.decode.output_ids and a.decoded == b.decoded
        torch.testing.assert_close(a.decode.masked.probs, b.decode.masked.probs, **CLOSE)
    if a.lens is not None:  # the logit lens of the recorded forward
        torch.testing.assert_close(a.lens.top_probs, b.lens.top_probs, **CLOSE)
        assert torch.equal(a.lens.top_ids[..., 0], b.lens.top_ids[..., 0])


@pytest.mark.parametrize("strategy", ["greedy", "sample", "beam", "target"])
@pytest.mark.parametrize("name, text, target", [("reverse", "attention", "noitnetta"),
                                                ("gpt-facts", "the cow", "says moo ."),
                                                ("addition", "123+45", "168")])
def test_frames_of_every_strategy_match_the_cpu(name, text, target, strategy):
    cpu, gpu = pair(name)
    settings = DecodeSettings(strategy=strategy, temperature=1.3, seed=3, beam_size=3)
    target = target if strategy == "target" else None
    same_frames(compute_frame(cpu, text, target, settings), compute_frame(gpu, text, target, settings))


def test_a_frame_with_the_prompt_recorded_once_matches_the_cpu():
    """The language-model frame's path (`recorded_greedy_run`: the prompt recorded into the
    key/value cache, the continuation's rows recorded from it) with the cache on the device."""
    from model.interpret.decode_run import recorded_greedy_run
    from model.interpret.frame import Frame
    frames = []
    for bundle in pair("gpt-facts"):
        run, forward = recorded_greedy_run(bundle, "the cow", None, bundle.encode_source("the cow"))
        frames.append(Frame(bundle, bundle.name, "the cow", None, DecodeSettings(), forward, run))
    same_frames(*frames)


def test_an_encoder_only_frame_matches_the_cpu():
    cpu, gpu = pair("bert-facts")
    same_frames(compute_frame(cpu, "the cow [MASK] moo ."), compute_frame(gpu, "the cow [MASK] moo ."))


@pytest.mark.parametrize("edit", ["zero", "mean", "uniform"])
def test_head_surgery_matches_the_cpu(reverse_pair, edit):
    cpu, gpu = reverse_pair
    heads = {key: edit for key in all_heads(cpu.model)[::3]}
    settings = DecodeSettings(strategy="beam")
    a = compute_frame(cpu, "transformer", settings=settings, interventions=heads)
    b = compute_frame(gpu, "transformer", settings=settings, interventions=heads)
    same_frames(a, b)
    same_frames(a.baseline, b.baseline)


def noisy_copy(bundle, seed: int = 0):
    """Another model of the same architecture: the weights plus seeded noise (made on the CPU)."""
    other = copy.deepcopy(bundle)
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in other.model.parameters():
            p.add_(0.05 * torch.randn(p.shape, generator=gen).to(p.device))
    return other


def test_compare_matches_the_cpu(reverse_pair):
    cpu, gpu = reverse_pair
    a = compare(cpu, noisy_copy(cpu), "attention")
    b = compare(gpu, noisy_copy(gpu), "attention")
    assert (a.output_a.pieces, a.output_b.pieces) == (b.output_a.pieces, b.output_b.pieces)
    for side in ("output_a", "output_b"):
        x, y = getattr(a, side), getattr(b, side)
        assert x.own == pytest.approx(y.own, abs=1e-4) and x.other == pytest.approx(y.other, abs=1e-4)
    for kind in a.kinds:
        assert a.attention_a[kind] == pytest.approx(b.attention_a[kind], abs=1e-4)
        assert a.attention_b[kind] == pytest.approx(b.attention_b[kind], abs=1e-4)


def test_a_short_training_run_matches_the_cpu():
    from model.io.checkpoints import random_bundle
    from model.train.config import TrainConfig
    from model.train.trainer import Trainer

    def run(device: str):
        torch.manual_seed(0)
        bundle = random_bundle("reverse", d_model=32, n_heads=2, n_encoder_layers=1, n_decoder_layers=1, d_ff=64,
                               max_len=32, dropout=0.0)
        cfg = TrainConfig(steps=8, batch_size=16, warmup=4, device=device, seed=0, precision="fp32")
        trainer = Trainer(bundle, "reverse", cfg)
        events = [trainer.step() for _ in range(cfg.steps)]
        return events, {k: v.cpu() for k, v in trainer.model.state_dict().items()}, trainer.evaluate(50)

    (cpu_steps, cpu_weights, cpu_eval), (gpu_steps, gpu_weights, gpu_eval) = run("cpu"), run(DEVICE)
    for a, b in zip(cpu_steps, gpu_steps):
        assert a.loss == pytest.approx(b.loss, rel=1e-4) and a.grad_norm == pytest.approx(b.grad_norm, rel=1e-3)
        assert a.token_accuracy == pytest.approx(b.token_accuracy, abs=0.01)
    for name, w in cpu_weights.items():
        torch.testing.assert_close(w, gpu_weights[name], rtol=1e-3, atol=1e-4, msg=name)
    assert cpu_eval.score == pytest.approx(gpu_eval.score, abs=0.04)


def test_a_bf16_training_step_on_the_device_is_finite():
    from model.io.checkpoints import random_bundle
    from model.train.config import TrainConfig
    from model.train.trainer import Trainer

    bundle = random_bundle("reverse", d_model=32, n_heads=2, n_encoder_layers=1, n_decoder_layers=1, d_ff=64)
    trainer = Trainer(bundle, "reverse", TrainConfig(steps=3, batch_size=16, warmup=2, device=DEVICE))
    losses = [trainer.step().loss for _ in range(3)]
    assert all(0 < loss < 10 for loss in losses)


def test_the_leak_labs_scores_match_the_cpu():
    from model.interpret.leak_lab import LeakConfig, LeakLab

    def scores(device: str) -> dict:
        return LeakLab(LeakConfig(steps=25, batch_size=16, warmup=10, eval_size=40, device=device)).run().summary()

    a, b = scores("cpu"), scores(DEVICE)
    for key, value in a.items():
        if key == "seconds":
            continue
        tolerance = 0.02 if "loss" in key else 0.06  # a few argmax ties may break the other way
        assert value == pytest.approx(b[key], abs=tolerance), key
    assert b["masked_future_attention"] == 0.0  # the causal mask holds on the device


def test_the_training_probe_follows_a_run_on_the_device():
    """The live loop's probe keeps showing new steps when the model trains on the device (its
    first probe pays the device's warm-up, which must not space the next ones past the run)."""
    from model.train.config import TrainConfig
    from model.train.live_loop import TrainingLoop
    from model.train.live_messages import Snapshot
    from model.train.request import TrainingRequest
    from model.train.steering import Steering

    request = TrainingRequest(task="reverse", preset="tiny", probe="attention",
                              train=TrainConfig(steps=150, batch_size=16, warmup=20, device=DEVICE))
    loop = TrainingLoop(request, Steering(request))
    steps = [m.step for m in loop.run() if isinstance(m, Snapshot)]
    assert steps[0] == 0 and steps[-1] == 150
    assert len(set(steps)) >= 3  # snapshots during the run, not only its first and last
    assert loop.trainer.device.type == torch.device(DEVICE).type
