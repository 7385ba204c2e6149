"""The mask-leak lab: the same small GPT-like decoder trained twice, with and without the causal
mask (Section 3.2.3), to show the classic bug — a lower training loss and a useless generator.

Both runs start from the same weights (one model, copied), read the same batches (the same
seed of the `facts` corpus) and use the same recipe (model.train.trainer.Trainer, no dropout and no
label smoothing, so the loss is the plain cross-entropy and the two runs differ only in the
mask). Their steps are interleaved, so a viewer sees both loss curves grow together.

Why one layer by default: with a single layer the only way to the next token is the attention
that reads it, so the leaking run leans on it entirely and its generation collapses within a
few hundred steps ("a happy crow crow crow crow …"); with two layers it also learns some of the
real statistics first and its generation decays more slowly (76% of sentences still right after
400 steps, 22% after 1200, where the masked run stays at 100%).
`LeakLab.events()` yields `LeakStep`s, then `LeakPhase("evaluating")`, then one `LeakResult`
of plain numpy / Python data (safe to hand to another thread). `stop()` may be called from
any thread. Like the Trainer, nothing here knows who watches.
"""
from __future__ import annotations

import copy
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import torch

from model.data.corpus import next_word_ceiling
from model.data.tasks import get_task
from model.data.tokenizers import BOS_ID
from model.inference.teacher_forcing import parallel_pass
from model.interpret.leak_scores import (
    entropy_floor,
    fact_answers,
    free_running_accuracy,
    future_mass,
    generation_accuracy,
    sentence_batch,
    teacher_forced_accuracy,
)
from model.nn.config import TransformerConfig
from model.nn.transformer import Transformer
from model.train.trainer import TrainConfig, Trainer

RUNS = ("masked", "leaking")  # causal mask on in training / left out (the bug)
RUN_LABELS = {"masked": "with mask", "leaking": "no mask"}  # short: a legend and two map titles share little room
N_EXAMPLES = 4  # generations kept per run (the first held-out ones, not chosen)
LAST_STEPS = 20  # the final loss is the mean of this many last steps (one batch is noisy)


@dataclass
class LeakConfig:
    """One lab: the model's sizes and the (shared) training recipe."""

    steps: int = 400
    batch_size: int = 32
    warmup: int = 100
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 1  # one layer shows the bug most clearly in a short run (see the module docstring)
    seed: int = 0
    eval_size: int = 200  # held-out sentences scored
    seconds: float | None = None  # wall-clock budget for both runs together (None: all steps)
    device: str = "cpu"  # where both runs train and are scored ("cuda", "auto", …)

    def train_config(self, causal_mask: bool) -> TrainConfig:
        return TrainConfig(steps=self.steps, batch_size=self.batch_size, warmup=self.warmup, seed=self.seed,
                           label_smoothing=0.0, device=self.device, causal_mask=causal_mask)

    def describe(self) -> tuple[str, str]:
        """(short, whole): the lab's own model named (a panel's input bar names the session's)."""
        shape = f"Own model: {self.n_layers} layer{'s' if self.n_layers != 1 else ''} × {self.n_heads} heads"
        return shape, f"{shape}, d_model {self.d_model}, facts corpus"


@dataclass
class LeakStep:
    """One optimisation step of one run."""

    run: str  # "masked" | "leaking"
    step: int
    loss: float  # cross-entropy of this batch (nats per token)
    token_accuracy: float  # teacher-forced, on this training batch
    elapsed: float  # seconds since the lab started


@dataclass
class LeakPhase:
    text: str  # "evaluating"


@dataclass
class RunScores:
    """One trained run, measured on held-out sentences."""

    run: str
    causal_mask: bool
    steps: int
    losses: np.ndarray  # (steps,) training loss per step
    final_loss: float  # mean of the last LAST_STEPS losses
    teacher_forced: float  # next-token accuracy, whole sentence given
    free_running: float  # the same positions, each from its prefix only (as generated)
    generated: float  # held-out openings continued greedily into sentences the corpus can say
    fact_answers: float  # greedy next word after the 64 fact prompts
    future_mass: float  # mean self-attention weight on later positions
    attention: np.ndarray  # (L, h, T, T) decoder self-attention over the example sentence
    generations: list[tuple[str, str]] = field(default_factory=list)  # (held-out opening, greedy continuation)


@dataclass
class LeakResult:
    """Both runs, the example their attention maps show, and the references a causal model cannot beat."""

    config: LeakConfig
    runs: dict[str, RunScores]
    example: list[str]  # the example's decoder input tokens (<bos> w1 … wn): the maps' axes
    loss_floor: float  # entropy_floor(): the lowest loss reachable without reading the future
    best_accuracy: float  # the Bayes-optimal next-token accuracy, expected (corpus.next_word_ceiling)
    ceiling_spread: float  # ± two standard deviations of that score on `eval_n` sentences
    eval_n: int
    seconds: float
    stopped: bool  # True when stop() or the time budget ended training before config.steps

    def summary(self) -> dict[str, float]:
        """`name: value` figures (for benchmarks and notes)."""
        out: dict[str, float] = {}
        for name, r in self.runs.items():
            out.update({f"{name}_steps": r.steps, f"{name}_final_loss": round(r.final_loss, 4),
                        f"{name}_teacher_forced_accuracy": round(r.teacher_forced, 4),
                        f"{name}_free_running_accuracy": round(r.free_running, 4),
                        f"{name}_generation_accuracy": round(r.generated, 4),
                        f"{name}_fact_answers": round(r.fact_answers, 4),
                        f"{name}_future_attention": round(r.future_mass, 4)})
        out.update(loss_floor=round(self.loss_floor, 4), best_next_token_accuracy=round(self.best_accuracy, 4),
                   best_next_token_spread=round(self.ceiling_spread, 4),
                   seconds=round(self.seconds, 2))
        return out


class LeakLab:
    """Two Trainers on one model's two copies; `events()` steps them in turn."""

    def __init__(self, config: LeakConfig | None = None):
        self.config = cfg = config or LeakConfig()
        self.task = get_task("facts")
        _, self.tokenizer = self.task.build_tokenizers()
        torch.manual_seed(cfg.seed)
        model_cfg = TransformerConfig(len(self.tokenizer), len(self.tokenizer), d_model=cfg.d_model,
                                      n_heads=cfg.n_heads, d_ff=4 * cfg.d_model, n_encoder_layers=0,
                                      n_decoder_layers=cfg.n_layers, dropout=0.0, max_len=32, kind="decoder_only")
        start = Transformer(model_cfg)  # one initialisation for both runs
        self.trainers = {name: Trainer(copy.deepcopy(start), self.task, cfg.train_config(name == "masked"),
                                       self.tokenizer, self.tokenizer) for name in RUNS}
        self.losses: dict[str, list[float]] = {name: [] for name in RUNS}
        self._stop = threading.Event()
        self._evaluate_after_stop = True

    def stop(self, evaluate: bool = True) -> None:
        """End training after the current step (thread-safe); `evaluate=False` also skips the
        held-out scores (a closing window waits for nothing)."""
        self._evaluate_after_stop = evaluate
        self._stop.set()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def events(self) -> Iterator[LeakStep | LeakPhase | LeakResult]:
        cfg, start = self.config, time.perf_counter()
        for _ in range(cfg.steps):
            if self._stop.is_set() or (cfg.seconds is not None and time.perf_counter() - start >= cfg.seconds):
                break
            for name in RUNS:
                event = self.trainers[name].step()
                self.losses[name].append(event.loss)
                yield LeakStep(name, event.step, event.loss, event.token_accuracy, time.perf_counter() - start)
        if self._stop.is_set() and not self._evaluate_after_stop:
            return
        yield LeakPhase("evaluating")
        yield self.result(time.perf_counter() - start)

    def run(self) -> LeakResult:
        """All steps (or the budget), then the scores."""
        result = None
        for event in self.events():
            if isinstance(event, LeakResult):
                result = event
        return result

    # -- scores ----------------------------------------------------------------------------
    def held_out(self) -> list[str]:
        return [s for s, _ in self.task.pairs(self.config.eval_size, seed=1, split="eval")]

    def example(self, texts: list[str]) -> list[int]:
        """The decoder input of the example the maps show: a held-out sentence of 8–11 words."""
        text = next((t for t in texts if 8 <= len(t.split()) <= 11), texts[0])
        return [BOS_ID] + self.tokenizer.encode(text).ids

    def result(self, seconds: float) -> LeakResult:
        texts = self.held_out()
        tgt_in, tgt_out = sentence_batch(self.tokenizer, texts, 32)
        example = self.example(texts)
        runs = {name: self.score(name, texts, tgt_in, tgt_out, example) for name in RUNS}
        steps = min(r.steps for r in runs.values())
        best, sd = next_word_ceiling(len(texts))
        return LeakResult(self.config, runs, self.tokenizer.pieces(example), entropy_floor(), best, 2 * sd,
                          len(texts), seconds, steps < self.config.steps)

    def score(self, name: str, texts: list[str], tgt_in: torch.Tensor, tgt_out: torch.Tensor,
              example: list[int]) -> RunScores:
        trainer = self.trainers[name]
        model, tok, causal = trainer.model, self.tokenizer, trainer.config.causal_mask
        losses = np.asarray(self.losses[name], dtype=np.float32)
        generated, generations = generation_accuracy(model, tok, texts, causal)
        attention = parallel_pass(model, None, example, causal=causal).self_attention  # (L, h, T, T)
        return RunScores(
            name, causal, trainer.step_count, losses,
            float(losses[-LAST_STEPS:].mean()) if len(losses) else float("nan"),
            teacher_forced_accuracy(model, tgt_in, tgt_out, causal),
            free_running_accuracy(model, tgt_in, tgt_out, causal), generated,
            fact_answers(model, tok, causal), future_mass(model, tgt_in, causal), attention.numpy(),
            generations[:N_EXAMPLES])


def verdict(result: LeakResult) -> str:
    """The finished lab in words, from its numbers."""
    m, leak = result.runs["masked"], result.runs["leaking"]
    below = leak.final_loss < result.loss_floor
    above = leak.teacher_forced > result.best_accuracy + result.ceiling_spread  # past the band, not only the line
    # "it reads the answer" only where both measures say so (a short run may show neither)
    verdict = ": it reads the answer" if below and above else ""
    return (f"No mask: loss {leak.final_loss:.2f}, {'below' if below else 'above'} the {result.loss_floor:.2f} that "
            f"no model reading only the past can reach (with mask {m.final_loss:.2f}); teacher-forced "
            f"{leak.teacher_forced:.0%}, {'past' if above else 'not past'} the ≈{result.best_accuracy:.0%} ceiling "
            f"of a model that reads only the past (its band reaches {result.best_accuracy + result.ceiling_spread:.0%})"
            f"{verdict}. Yet {leak.generated:.0%} of its generated sentences are right (with mask {m.generated:.0%}).")


def floor_tip(floor: float) -> str:
    return (f"The loss floor, {floor:.2f}: the lowest cross-entropy a model that reads only the past can reach on "
            f"this corpus (its choices of words are free). Below it, a model reads the answer.")


def ceiling_tip(result: LeakResult) -> str:
    """The accuracy ceiling and its band (± 2 standard deviations of its score on the held-out sentences)."""
    best, spread = result.best_accuracy, result.ceiling_spread
    return (f"The ceiling, {best:.1%}: what the best possible guess from the words so far scores on average "
            f"(the exact sentence distribution). The band, {best - spread:.0%}–{best + spread:.0%}, is that "
            f"score's typical scatter (± 2 standard deviations) on {result.eval_n} sentences drawn at random: "
            f"a model that reads only the past ends at or below it; one past the band reads the answer.")


def step_text(step: int, total: int, last_losses: dict[str, float]) -> str:
    """Training under way: the step, and each run's loss on its last batch."""
    losses = " · ".join(f"{RUN_LABELS[run]} {loss:.2f}" for run, loss in last_losses.items())
    return f"Step {step} of {total}. Loss on the last batch: {losses}"


def generation_lines(result: LeakResult) -> tuple[dict[str, str], str]:
    """(one line per run: the first held-out opening as it continued it; all examples, for a tooltip)."""
    lines = {}
    for run in RUNS:
        prompt, continuation = result.runs[run].generations[0]
        lines[run] = f"{RUN_LABELS[run]}: “{prompt}” → {continuation or '(nothing)'}"
    every = [f"{RUN_LABELS[run]}: {p} → {c or '(nothing)'}" for run in RUNS for p, c in result.runs[run].generations]
    return lines, "Greedy continuations of held-out openings:\n" + "\n".join(every)


def leakiest_head(result: LeakResult) -> tuple[int, int]:
    """(layer, head) of the leaking run that puts the most weight above the diagonal."""
    att = result.runs["leaking"].attention  # (L, h, T, T)
    future = np.triu(att, 1).sum(-1).mean(-1)  # (L, h)
    layer, head = np.unravel_index(int(future.argmax()), future.shape)
    return int(layer), int(head)


def attention_map(result: LeakResult, run: str, layer: int, head: int | None) -> tuple[np.ndarray, np.ndarray | None,
                                                                                      float]:
    """A run's map (head None: the mean of `layer`'s heads), its blocked cells (the masked run's
    future; None without a mask) and its mean weight per query on later positions."""
    att = result.runs[run].attention[layer]  # (h, T, T)
    matrix = att.mean(0) if head is None else att[head]
    blocked = np.triu(np.ones_like(matrix, dtype=bool), 1) if result.runs[run].causal_mask else None
    return matrix, blocked, float(np.triu(matrix, 1).sum(-1).mean())


def head_choices(layers: int, heads: int, leakiest: tuple[int, int] | None = None) -> list[tuple[str, tuple]]:
    """The maps' choices (text, (layer, head or None for the mean)), layer by layer, the leakiest named."""
    return [(f"layer {layer + 1} · " + ("mean of heads" if head is None else
                                        f"head {head + 1}" + (" (most ahead)" if (layer, head) == leakiest else "")),
             (layer, head)) for layer in range(layers) for head in (None, *range(heads))]


__all__ = ["LeakConfig", "attention_map", "head_choices", "LeakLab", "leakiest_head", "verdict", "step_text",
           "floor_tip", "ceiling_tip", "generation_lines", "LeakStep", "LeakPhase", "LeakResult", "RunScores", "RUNS",
           "RUN_LABELS"]
