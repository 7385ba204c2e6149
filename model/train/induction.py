"""The induction-head time-lapse (Olsson et al. 2022): a small attention-only decoder trained
live on sequences with a repeated random segment (model.train.induction_data), measured as it
learns (model.train.induction_scores).

For a while the model only learns which tokens are common (none are: the loss sits near
ln(vocab-1)); then, within a few hundred steps, a previous-token head in layer 1 and an
induction head in layer 2 form together, the loss on the second copy collapses and the loss
curve drops a step: the phase change. An attention-only model (d_ff 0) with two layers is the
smallest that can do this, since the induction head reads keys the layer below has shifted.

The loop is a plain one: the project's `Trainer` needs a task with a tokenizer, and this data
is only ids. It uses the same optimiser (model.train.optimizer: Adam with the paper's betas,
Eq. 3's warm-up then a linear decay). Every `eval_every` steps a fixed, seeded batch is run
with attention recorded through the hooks (model.nn.hooks.record) and scored.
`InductionLab.events()` yields `InductionStep`s and `InductionMeasure`s of plain data (safe
to hand to another thread); `stop()` may be called from any thread.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F

from model.nn.config import TransformerConfig
from model.nn.hooks import record
from model.nn.transformer import Transformer
from model.train.induction_data import RepeatBatch, check_sizes, repeat_batch
from model.train.induction_scores import copy_losses, induction_scores, phase_change_step, position_losses
from model.train.optimizer import make_optimizer

ICL_MIN_CHANGE = 1.0  # nats: a smaller fall of the ICL score is not called a phase change

TOKEN_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZαβγδεζηθικλμνξοπρστυφχψω"  # the tokens' names on a map


@dataclass
class InductionConfig:
    """The model's sizes, the data's and the recipe's. The defaults are measured to show the
    phase change within a couple of minutes on a 2-core CPU (benchmarks/induction_phase.py)."""

    vocab: int = 32  # ids 1 … vocab-1 (0 is padding)
    seq_len: int = 40
    min_len: int = 6  # a repeated segment's length, drawn per row
    max_len: int = 16
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    batch_size: int = 32
    steps: int = 3000
    warmup: int = 100
    lr_scale: float = 0.3  # × Eq. 3's peak d_model^-0.5 · warmup^-0.5 (0.0125 here; 1.0 and 0.5 were measured slower)
    eval_every: int = 25
    eval_size: int = 64
    seed: int = 0

    def model_config(self) -> TransformerConfig:
        return TransformerConfig(self.vocab, self.vocab, d_model=self.d_model, n_heads=self.n_heads, d_ff=0,
                                 n_encoder_layers=0, n_decoder_layers=self.n_layers, dropout=0.0,
                                 max_len=self.seq_len, kind="decoder_only", norm_first=True, positional="learned")

    def describe(self) -> tuple[str, str]:
        """(short, whole): the lab's own model named (a panel's input bar names the session's)."""
        shape = f"Own model: {self.n_layers} layers × {self.n_heads} heads, attention only"
        return shape, (f"{shape}, d_model {self.d_model}, vocabulary {self.vocab - 1} tokens, sequences "
                       f"of {self.seq_len} with a {self.min_len}–{self.max_len}-token segment repeated")


@dataclass
class InductionStep:
    step: int
    loss: float  # this batch's next-token cross-entropy (nats per token)
    elapsed: float  # seconds of training so far


@dataclass
class InductionMeasure:
    """The fixed evaluation batch, scored after `step` updates."""

    step: int
    elapsed: float
    loss: float  # mean next-token loss over the batch
    first_copy_loss: float
    second_copy_loss: float
    icl: float  # second − first (nats)
    scores: np.ndarray  # (layers, heads) induction scores
    attention: np.ndarray  # (layers, heads, T, T) over the example row (the one with the longest segment)
    example: list[int] = field(default_factory=list)  # that row's ids
    example_start: int = 0
    example_length: int = 0

    def best_head(self) -> tuple[int, int]:
        layer, head = np.unravel_index(int(self.scores.argmax()), self.scores.shape)
        return int(layer), int(head)

    def best_map(self) -> tuple[int, int, np.ndarray, list[str]]:
        """The best head (layer, head), its attention over the example's two copies (queries × keys)
        and their tokens as letters (1 → A: single glyphs keep apart where strided numbers run together)."""
        layer, head = self.best_head()
        window = slice(self.example_start, self.example_start + 2 * self.example_length)
        letters = [TOKEN_LETTERS[t - 1] if 0 < t <= len(TOKEN_LETTERS) else str(t) for t in self.example[window]]
        return layer, head, self.attention[layer, head][window, window], letters


def measure(model: Transformer, batch: RepeatBatch, step: int = 0, elapsed: float = 0.0) -> InductionMeasure:
    """Score `model` on `batch`: losses, ICL score, every head's induction score (attention read
    through the hooks), and the attention maps of the row with the longest repeated segment
    (the clearest picture of an induction stripe)."""
    model.eval()
    with torch.no_grad(), record(model) as trace:
        logits = model(None, batch.ids)
    losses = position_losses(logits, batch.ids)
    first, second = copy_losses(losses, batch)
    layers = [trace.attention("decoder_self", i) for i in range(model.config.n_decoder_layers)]  # (B, h, T, T) each
    scores = torch.stack([induction_scores(a, batch) for a in layers]).cpu().numpy()
    row = int(batch.length.argmax())
    attention = torch.stack([a[row] for a in layers]).cpu().numpy()
    return InductionMeasure(step, elapsed, float(losses.mean()), first, second, second - first, scores,
                            attention, batch.ids[row].tolist(), int(batch.start[row]), int(batch.length[row]))


class InductionLab:
    """One model, its optimiser and its data stream; `events()` trains and measures."""

    def __init__(self, config: InductionConfig | None = None, device: str = "cpu"):
        self.config = cfg = config or InductionConfig()
        check_sizes(cfg.seq_len, cfg.vocab, cfg.min_len, cfg.max_len)
        torch.manual_seed(cfg.seed)
        self.device = torch.device(device)
        self.model = Transformer(cfg.model_config()).to(self.device)
        self.optimizer, self.scheduler = make_optimizer(self.model, cfg.d_model, cfg.warmup, cfg.lr_scale,
                                                        decay_steps=max(cfg.steps, cfg.warmup + 1))
        self.data = torch.Generator().manual_seed(cfg.seed + 1)
        self.eval_batch = repeat_batch(cfg.eval_size, cfg.seq_len, cfg.vocab, cfg.min_len, cfg.max_len,
                                       torch.Generator().manual_seed(cfg.seed + 2))
        self.step_count = 0
        self.measures: list[InductionMeasure] = []
        self._stop = threading.Event()

    def stop(self) -> None:
        """End training after the current step (thread-safe)."""
        self._stop.set()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def step(self) -> float:
        """One optimisation step on a fresh batch; returns its loss."""
        cfg = self.config
        batch = repeat_batch(cfg.batch_size, cfg.seq_len, cfg.vocab, cfg.min_len, cfg.max_len, self.data)
        ids = batch.ids.to(self.device)
        self.model.train()
        logits = self.model(None, ids)
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, cfg.vocab), ids[:, 1:].reshape(-1))
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        self.scheduler.step()
        self.step_count += 1
        return loss.item()

    def measure(self, elapsed: float = 0.0) -> InductionMeasure:
        batch = self.eval_batch
        if self.device.type != "cpu":
            batch = RepeatBatch(batch.ids.to(self.device), batch.start.to(self.device), batch.length.to(self.device))
        found = measure(self.model, batch, self.step_count, elapsed)
        self.measures.append(found)
        return found

    def events(self) -> Iterator[InductionStep | InductionMeasure]:
        """Measure at step 0, then train `config.steps` steps (or until `stop()`), measuring
        every `eval_every` steps and after the last one. Evaluation time is not counted in
        `elapsed`."""
        cfg, trained = self.config, 0.0
        yield self.measure(0.0)
        while self.step_count < cfg.steps and not self._stop.is_set():
            began = time.perf_counter()
            loss = self.step()
            trained += time.perf_counter() - began
            yield InductionStep(self.step_count, loss, trained)
            if self.step_count % cfg.eval_every == 0:
                yield self.measure(trained)
        if self.measures[-1].step != self.step_count:
            yield self.measure(trained)

    def phase_change(self) -> InductionMeasure | None:
        """The measurement at the phase change (model.train.induction_scores.phase_change_step on
        the ICL score), or None before one."""
        return phase_measure(self.measures)


def phase_measure(measures: list[InductionMeasure]) -> InductionMeasure | None:
    """The measure at the phase change of these (in step order), or None before one."""
    step = phase_change_step([m.step for m in measures], [m.icl for m in measures], ICL_MIN_CHANGE)
    return next((m for m in measures if m.step == step), None)


def phase_text(phase: InductionMeasure | None, last: InductionMeasure | None) -> str:
    """The run in one sentence, from its last measurement and the one at the phase change."""
    if last is None:
        return ""
    layer, head = last.best_head()
    now = (f"Step {last.step}: loss {last.loss:.2f}, ICL score {last.icl:+.2f} nats, best induction head "
           f"L{layer + 1}H{head + 1} at {last.scores.max():.0%}.")
    if phase is None:
        return now + " No phase change yet."
    return now + f" Phase change at step {phase.step} ({phase.elapsed:.0f} s of training)."


__all__ = ["InductionConfig", "InductionLab", "InductionStep", "InductionMeasure", "measure", "phase_measure",
           "phase_text", "ICL_MIN_CHANGE"]
