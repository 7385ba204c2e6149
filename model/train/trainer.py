"""Training with the paper's recipe (Section 5), as a UI-free `Trainer` that yields events.

Section 5.3: Adam with β1 = 0.9, β2 = 0.98, ε = 1e-9 and the learning rate
    lrate = d_model^-0.5 · min(step^-0.5, step · warmup_steps^-1.5)
(times `lr_scale`, 1.0 in the paper). Section 5.4: residual dropout and label smoothing
ε_ls = 0.1.

The same Trainer trains the two descendants built from the same layers, choosing the
objective from the model's kind: an encoder-only model learns BERT's masked-language-model
task (model.data.masking: 15% of tokens chosen, 80/10/10), a decoder-only model GPT's next-token
prediction over the target text (the decoder half of the paper's loss, with no source). Like minGPT's trainer this file knows nothing of who watches: a GUI drives
`events()` from a worker thread and calls `pause()` / `resume()` / `stop()` from its own.
"""
from __future__ import annotations

import math
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Iterator

import torch
from torch import nn

from model.inference.bundle import ModelBundle
from model.data.user_data import Batch, make_batch
from model.nn.devices import describe, resolve_device
from model.inference.evaluation import (exact_match, masked_accuracy, next_token_accuracy,  # noqa: F401 - re-exported
                         scored_positions, translate_batch)
from model.nn.kinds import DECODER_ONLY, ENCODER_DECODER, ENCODER_ONLY
from model.data.masking import mask_id_of, mask_tokens
from model.train.optimizer import ADAM_BETAS, ADAM_EPS, make_optimizer, noam_lr  # noqa: F401 - re-exported
from model.data.tasks import Task, get_task
from model.data.tokenizers import BOS_ID, EOS_ID, PAD_ID, Tokenizer
from model.nn.transformer import Transformer

# What each kind of model learns, and the held-out score that says how well.
OBJECTIVES = {ENCODER_DECODER.name: "seq2seq", ENCODER_ONLY.name: "mlm", DECODER_ONLY.name: "lm"}
EVAL_METRICS = {"seq2seq": "exact_match", "mlm": "masked_accuracy", "lm": "next_token_accuracy"}
METRIC_LABELS = {"exact_match": "held-out exact match", "masked_accuracy": "held-out masked-token accuracy",
                 "next_token_accuracy": "held-out next-token accuracy"}


class TrainingError(RuntimeError):
    """Training cannot go on (a diverged loss, out of memory, a bad setting); the message says why."""


@dataclass
class TrainConfig:
    """Everything that shapes a training run (the model's own sizes live in TransformerConfig)."""

    steps: int = 2000
    batch_size: int = 64
    warmup: int = 400  # the paper used 4000 for 100k steps on WMT; small tasks need far fewer
    lr_scale: float = 1.0
    lr_decay_steps: int = 0  # 0: Eq. 3's 1/√step decay; N: linear decay to 5 % of the peak by step N (model.train.optimizer)
    label_smoothing: float = 0.1  # ε_ls, Section 5.4
    clip_grad: float | None = None  # max gradient norm; None = no clipping (the paper clips nothing)
    device: str = "auto"  # "auto" | "cpu" | "cuda" | "mps"
    seed: int = 0
    eval_every: int = 0  # steps between held-out evaluations; 0 = only when asked
    eval_size: int = 200
    amp: bool = True  # bf16 autocast on CUDA (ignored elsewhere)
    causal_mask: bool = True  # False = the classic bug (model.interpret.leak_lab): the decoder sees the future in training

    def validate(self) -> None:
        for name in ("steps", "batch_size", "warmup", "eval_size"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise TrainingError(f"{name} must be a positive integer, got {value!r}")
        if not isinstance(self.eval_every, int) or self.eval_every < 0:
            raise TrainingError(f"eval_every must be 0 (off) or a positive integer, got {self.eval_every!r}")
        if (not isinstance(self.lr_decay_steps, int) or isinstance(self.lr_decay_steps, bool)
                or self.lr_decay_steps < 0 or 0 < self.lr_decay_steps <= self.warmup):
            raise TrainingError(f"lr_decay_steps must be 0 (the paper's 1/√step decay) or a step after the warm-up "
                                f"({self.warmup}), got {self.lr_decay_steps!r}")
        if not (isinstance(self.lr_scale, (int, float)) and math.isfinite(self.lr_scale) and self.lr_scale > 0):
            raise TrainingError(f"lr_scale must be a positive number, got {self.lr_scale!r}")
        if not 0.0 <= self.label_smoothing < 1.0:
            raise TrainingError(f"label_smoothing must be in [0, 1), got {self.label_smoothing!r}")
        if self.clip_grad is not None and not self.clip_grad > 0:
            raise TrainingError(f"clip_grad must be positive or None, got {self.clip_grad!r}")

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class StepEvent:
    """One optimisation step. tokens_per_s counts source + target tokens (pads excluded), as the
    paper sizes its batches (Section 5.1)."""

    step: int
    loss: float
    token_accuracy: float  # argmax == label over the positions with a label (teacher forced / masked)
    lr: float
    tokens_per_s: float
    grad_norm: float  # before clipping
    elapsed: float  # seconds of training so far (pauses excluded)


@dataclass
class EvalEvent:
    """A held-out evaluation. `exact_match` holds the score that `metric` names:
    - "exact_match" (encoder-decoder): greedy output string == target;
    - "masked_accuracy" (encoder-only MLM): each token of each held-out sentence masked in
      turn, argmax == the original token;
    - "next_token_accuracy" (decoder-only LM): teacher-forced argmax == the next token.
    examples are (source, target, output): for an MLM (text with a [MASK], the original,
    the text as filled in), for an LM (a prompt, the held-out sentence, the continuation)."""

    step: int
    exact_match: float
    examples: list[tuple[str, str, str]] = field(default_factory=list)
    n: int = 0
    metric: str = "exact_match"

    @property
    def score(self) -> float:
        return self.exact_match

    @property
    def label(self) -> str:
        return METRIC_LABELS.get(self.metric, self.metric)


def task_from_info(info: dict) -> Task:
    """Rebuild the task a bundle or checkpoint describes (`Task.to_dict()`), built-in or TSV."""
    from model.data.user_data import text_task, tsv_task

    params = dict(info.get("params") or {})
    if "text_path" in params:
        return text_task(params["text_path"], params.get("tokenizer", "word"))
    if "path" in params:
        return tsv_task(params["path"], params.get("tokenizer", "char"))
    return get_task(info.get("name", ""), **params)


class Trainer:
    """Trains a Transformer on a task with the paper's recipe; no UI knowledge.

    Drive it with `step()` (one update), `events()` (a generator of StepEvent / EvalEvent) or
    `run(callback)`. `pause()`, `resume()` and `stop()` may be called from any thread.
    """

    def __init__(self, model: ModelBundle | Transformer, task: Task | str | None = None,
                 config: TrainConfig | None = None, src_tokenizer: Tokenizer | None = None,
                 tgt_tokenizer: Tokenizer | None = None):
        self.config = cfg = config or TrainConfig()
        cfg.validate()
        if isinstance(model, ModelBundle):
            self.bundle = model
            model, src_tokenizer, tgt_tokenizer = model.model, model.src_tokenizer, model.tgt_tokenizer
            if task is None:
                task = task_from_info(self.bundle.task)
        else:
            self.bundle = None
        if isinstance(task, str):
            task = get_task(task)
        if task is None:
            raise TrainingError("a task is needed (a built-in name, a Task, or a bundle that names one)")
        self.objective = OBJECTIVES[model.config.model_kind.name]
        self.metric = model.config.model_kind.metric  # = EVAL_METRICS[self.objective]
        task_src, task_tgt = task.build_tokenizers()
        if src_tokenizer is None or tgt_tokenizer is None:
            src_tokenizer, tgt_tokenizer = task_src, task_tgt
        sides = {"seq2seq": (("source", task_src, src_tokenizer), ("target", task_tgt, tgt_tokenizer)),
                 "mlm": (("source", task_src, src_tokenizer),), "lm": (("target", task_tgt, tgt_tokenizer),)}
        for side, need, have in sides[self.objective]:
            lacking = sorted(set(need.vocab) - set(have.vocab))
            if lacking:
                raise TrainingError(f"task {task.name!r} uses {side} symbols the model's vocabulary lacks: "
                                    f"{lacking[:8]}{' …' if len(lacking) > 8 else ''}")
        self._check_fits(model, task, src_tokenizer, tgt_tokenizer, self.objective)
        self.task, self.src_tokenizer, self.tgt_tokenizer = task, src_tokenizer, tgt_tokenizer
        if self.objective == "mlm":
            self.mask_id = mask_id_of(src_tokenizer)
            if self.mask_id is None:
                raise TrainingError(f"a masked language model needs a [MASK] token, and task {task.name!r} has "
                                    "none: train encoder-only models on a corpus task such as 'facts'")
            words = [i for i in range(len(src_tokenizer)) if i >= 4 and i != self.mask_id]
            self._mask_candidates = torch.tensor(words, dtype=torch.long)
            self._mask_generator = torch.Generator().manual_seed(cfg.seed)
        self.device = resolve_device(cfg.device)
        self.model = model.to(self.device)
        torch.manual_seed(cfg.seed)
        self._stream = task.stream(seed=cfg.seed, split="train")
        self.optimizer, self.scheduler = make_optimizer(self.model, model.config.d_model, cfg.warmup, cfg.lr_scale,
                                                         cfg.lr_decay_steps)
        self.loss_fn = nn.CrossEntropyLoss(label_smoothing=cfg.label_smoothing, ignore_index=PAD_ID)
        self.step_count = 0
        self.elapsed = 0.0
        self.last_step: StepEvent | None = None
        self.last_eval: EvalEvent | None = None
        self._running = threading.Event()
        self._running.set()
        self._stop = threading.Event()
        self._lock = threading.Lock()  # one step or evaluation at a time

    # -- checks ----------------------------------------------------------------------------
    @staticmethod
    def _check_fits(model: Transformer, task: Task, src_tok: Tokenizer, tgt_tok: Tokenizer,
                    objective: str = "seq2seq") -> None:
        mc = model.config
        if ((objective != "lm" and len(src_tok) != mc.src_vocab_size)
                or (objective != "mlm" and len(tgt_tok) != mc.tgt_vocab_size)):
            raise TrainingError(
                f"tokenizers ({len(src_tok)} source, {len(tgt_tok)} target symbols) do not match the model's "
                f"vocabularies ({mc.src_vocab_size}, {mc.tgt_vocab_size})")
        longest = {"seq2seq": max(task.max_src_len, task.max_tgt_len + 1), "mlm": task.max_src_len,
                   "lm": task.max_tgt_len + 1}[objective]
        if longest > mc.max_len:
            raise TrainingError(f"task {task.name!r} needs sequences of {longest} tokens but the model's "
                                f"max_len is {mc.max_len}")

    # -- thread controls -----------------------------------------------------------------------
    def pause(self) -> None:
        """Make `events()` / `run()` wait before their next step (thread-safe)."""
        self._running.clear()

    def resume(self) -> None:
        self._running.set()

    def stop(self) -> None:
        """End `events()` / `run()` after the current step (thread-safe); also wakes a paused run."""
        self._stop.set()
        self._running.set()

    @property
    def paused(self) -> bool:
        return not self._running.is_set()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    # -- one step ----------------------------------------------------------------------------
    def next_batch(self) -> Batch:
        pairs = [next(self._stream) for _ in range(self.config.batch_size)]
        return make_batch(pairs, self.src_tokenizer, self.tgt_tokenizer)

    def _autocast(self):
        if self.device.type == "cuda" and self.config.amp:
            return torch.autocast("cuda", dtype=torch.bfloat16)
        return torch.autocast(self.device.type, enabled=False)

    def step(self) -> StepEvent:
        """One optimisation step on a fresh batch. Raises `TrainingError` (weights untouched)
        if the loss or the gradient is not finite, or the device runs out of memory."""
        with self._lock:
            step = self.step_count + 1
            try:
                return self._step(step)
            except torch.cuda.OutOfMemoryError:
                self.optimizer.zero_grad(set_to_none=True)
                if self.device.type == "cuda":
                    torch.cuda.empty_cache()
                raise TrainingError(
                    f"out of GPU memory at step {step} (batch size {self.config.batch_size}, "
                    f"d_model {self.model.config.d_model}): use a smaller --batch-size or model") from None

    def _forward(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(logits, labels, tokens read) for this model's objective; labels are PAD_ID where
        nothing is to be predicted. The batch is on the CPU (MLM masks are drawn there, so
        a seed repeats them on any device)."""
        if self.objective == "mlm":
            masked = mask_tokens(batch.src, self.mask_id, self._mask_candidates, (PAD_ID, BOS_ID, EOS_ID),
                                 ignore_id=PAD_ID, generator=self._mask_generator)
            inputs, labels = masked.inputs.to(self.device), masked.labels.to(self.device)
            with self._autocast():
                logits = self.model(inputs)  # (B, S, V)
            return logits.float(), labels, (inputs != PAD_ID).sum()
        batch = batch.to(self.device)
        with self._autocast():
            if self.objective == "lm":
                logits = self.model(None, batch.tgt_in, causal=self.config.causal_mask)  # (B, T, V): t predicts t+1
                read = (batch.tgt_in != PAD_ID).sum()
            else:
                logits = self.model(batch.src, batch.tgt_in, causal=self.config.causal_mask)  # (B, T, V)
                read = (batch.src != PAD_ID).sum() + (batch.tgt_out != PAD_ID).sum()
        return logits.float(), batch.tgt_out, read

    def _step(self, step: int) -> StepEvent:
        start = time.perf_counter()
        self.model.train()
        logits, labels, n_read = self._forward(self.next_batch())
        loss = self.loss_fn(logits.reshape(-1, logits.size(-1)), labels.reshape(-1))
        loss_value = float(loss.detach())
        lr = self.optimizer.param_groups[0]["lr"]
        if not math.isfinite(loss_value):
            raise TrainingError(f"loss became {loss_value} at step {step} (lr {lr:.3g}); the weights are those "
                                "after the last good step. Lower the learning rate (lr_scale) or raise warmup.")
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        max_norm = self.config.clip_grad if self.config.clip_grad is not None else float("inf")
        grad_norm = float(torch.nn.utils.clip_grad_norm_(self.optimizer.param_groups[0]["params"], max_norm))
        if not math.isfinite(grad_norm):
            self.optimizer.zero_grad(set_to_none=True)
            raise TrainingError(f"gradient norm became {grad_norm} at step {step} (lr {lr:.3g}); the weights are "
                                "those after the last good step. Lower the learning rate or set clip_grad.")
        self.optimizer.step()
        self.scheduler.step()
        with torch.no_grad():
            real = labels != PAD_ID
            correct = ((logits.argmax(-1) == labels) & real).sum()
            acc = float(correct) / max(int(real.sum()), 1)
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        dt = time.perf_counter() - start
        self.elapsed += dt
        self.step_count = step
        event = StepEvent(step, loss_value, acc, lr, float(n_read) / max(dt, 1e-9), grad_norm, self.elapsed)
        self.last_step = event
        return event

    # -- evaluation -------------------------------------------------------------------------
    def eval_pairs(self, n: int, seed: int = 1) -> list[tuple[str, str]]:
        """n held-out pairs (a TSV task's whole eval split, up to n)."""
        split_pairs = getattr(self.task, "split_pairs", None)
        if split_pairs is not None:
            return list(split_pairs["eval"][:n])
        return self.task.pairs(n, seed=seed, split="eval")

    def evaluate(self, n: int | None = None, batch_size: int = 250, n_examples: int = 5) -> EvalEvent:
        """The held-out score of this objective on n held-out pairs (see EvalEvent)."""
        n = n or self.config.eval_size
        with self._lock:
            start = time.perf_counter()
            pairs = self.eval_pairs(n)
            texts = [s for s, _ in pairs]
            if self.objective == "mlm":
                score, examples = masked_accuracy(self.model, self.src_tokenizer, texts, self.mask_id)
            elif self.objective == "lm":
                score, examples = next_token_accuracy(self.model, self.tgt_tokenizer, texts)
            else:
                score, examples = self._exact_match(pairs, batch_size)
            event = EvalEvent(self.step_count, score, examples[:n_examples], len(pairs), self.metric)
            self.elapsed += time.perf_counter() - start
            self.last_eval = event
            return event

    def _exact_match(self, pairs: list[tuple[str, str]], batch_size: int) -> tuple[float, list]:
        """Greedy outputs against targets; examples show the wrong ones first."""
        outputs = translate_batch(self.model, self.src_tokenizer, self.tgt_tokenizer, [s for s, _ in pairs],
                                  max_output=self.task.max_tgt_len + 2, batch_size=batch_size)
        hits = [out == tgt for out, (_, tgt) in zip(outputs, pairs)]
        wrong = [(s, t, o) for (s, t), o, h in zip(pairs, outputs, hits) if not h]
        right = [(s, t, o) for (s, t), o, h in zip(pairs, outputs, hits) if h]
        return sum(hits) / max(len(hits), 1), wrong + right

    # -- loops -------------------------------------------------------------------------------
    def events(self) -> Iterator[StepEvent | EvalEvent]:
        """Train until `config.steps` (or `stop()`), yielding each StepEvent and, every
        `eval_every` steps and at the end, an EvalEvent. Blocks while paused."""
        cfg = self.config
        while self.step_count < cfg.steps and not self._stop.is_set():
            while not self._running.wait(timeout=0.1):
                pass
            if self._stop.is_set():
                break
            event = self.step()
            yield event
            if cfg.eval_every and (event.step % cfg.eval_every == 0 or event.step == cfg.steps):
                yield self.evaluate(cfg.eval_size)

    def run(self, callback: Callable[[StepEvent | EvalEvent], object] | None = None) -> dict:
        """Run `events()` to the end, passing each to `callback`; returns `metrics()`."""
        for event in self.events():
            if callback is not None:
                callback(event)
        return self.metrics()

    def metrics(self) -> dict:
        """What a checkpoint records about this run."""
        out = {"steps": self.step_count, "train_seconds": round(self.elapsed, 2), "device": describe(self.device),
               "train_config": self.config.to_dict()}
        if self.last_step is not None:
            out.update(loss=self.last_step.loss, token_accuracy=self.last_step.token_accuracy)
        if self.last_eval is not None:
            out.update({self.last_eval.metric: self.last_eval.exact_match, "eval_size": self.last_eval.n,
                        "eval_step": self.last_eval.step})
        out["objective"] = self.objective
        return out

    def to_bundle(self, name: str | None = None) -> ModelBundle:
        """The trained model as a bundle (sharing the model, weights on their device)."""
        base = self.bundle
        return ModelBundle(self.model, self.src_tokenizer, self.tgt_tokenizer, self.task.to_dict(), self.metrics(),
                           name=name or (base.name if base else self.task.name), path=base.path if base else None)

    def snapshot(self) -> dict:
        """A CPU copy of the weights (e.g. to hand to another thread)."""
        with self._lock:
            return {k: v.detach().to("cpu", copy=True) for k, v in self.model.state_dict().items()}


__all__ = ["TrainConfig", "Trainer", "StepEvent", "EvalEvent", "TrainingError", "noam_lr", "make_optimizer",
           "translate_batch", "exact_match", "masked_accuracy", "next_token_accuracy", "scored_positions", "task_from_info",
           "OBJECTIVES", "EVAL_METRICS", "METRIC_LABELS", "ADAM_BETAS", "ADAM_EPS"]
