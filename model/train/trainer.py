"""Training with the paper's recipe (Section 5), as a UI-free `Trainer` that yields events.

Section 5.3: Adam with β1 = 0.9, β2 = 0.98, ε = 1e-9 and the learning rate
    lrate = d_model^-0.5 · min(step^-0.5, step · warmup_steps^-1.5)
(times `lr_scale`, 1.0 in the paper). Section 5.4: residual dropout and label smoothing
ε_ls = 0.1.

One Trainer for every size of run (model.train.config.TrainConfig): batches of sentences from
a task or of tokens from a TSV (Section 5.1), one process or many under torchrun
(model.train.distributed), gradient accumulation, bf16 autocast. A step's loss is summed over
its target tokens and divided by their number in the *whole* step, counted across all
micro-batches and processes first, so every token weighs the same however they fall; DDP
averages the ranks' gradients in the last backward (the others run under `no_sync`), hence
the × world_size. Metrics are summed over ranks: every rank reports the global figures.

The objective follows the model's kind: the paper's translation loss, BERT's masked LM for an
encoder-only model (model.data.masking), GPT's next-token LM for a decoder-only one. Like
minGPT's trainer this knows nothing of who watches: a GUI drives `events()` from a worker
thread and calls `pause()` / `resume()` / `stop()` from its own.
"""
from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import torch
from torch import nn

from model.data.batching import SlotPosition
from model.data.masking import mask_id_of, mask_tokens
from model.data.tasks import Task, get_task
from model.data.tokenizers import BOS_ID, EOS_ID, PAD_ID, Tokenizer
from model.data.user_data import Batch
from model.inference.bundle import ModelBundle
from model.inference.evaluation import (  # noqa: F401 - re-exported
    exact_match,
    masked_accuracy,
    next_token_accuracy,
    scored_positions,
    translate_batch,
)
from model.nn.devices import describe, resolve_device
from model.nn.transformer import Transformer
from model.train.batches import SentenceBatches, TokenBatches, task_from_info
from model.train.config import EVAL_METRICS, METRIC_LABELS, OBJECTIVES, EvalEvent, StepEvent, TrainConfig, TrainingError  # noqa: F401
from model.train.distributed import Processes, all_gather_tensor, all_reduce_sum, wrap
from model.train.optimizer import ADAM_BETAS, ADAM_EPS, make_optimizer, noam_lr  # noqa: F401 - re-exported


class Trainer:
    """Trains a Transformer with the paper's recipe; no UI knowledge.

    `task` gives sentence batches and the held-out evaluation; with `config.batch_tokens` the
    batches are read from the TSV `data` instead (a task is then optional: no evaluation
    without one). `procs` says who this process is under torchrun (model.train.distributed:
    alone by default); `positions` resumes token batches where a run stopped.
    Drive it with `step()` (one update), `events()` (a generator of StepEvent / EvalEvent) or
    `run(callback)`. `pause()`, `resume()` and `stop()` may be called from any thread.
    """

    def __init__(self, model: ModelBundle | Transformer, task: Task | str | None = None,
                 config: TrainConfig | None = None, src_tokenizer: Tokenizer | None = None,
                 tgt_tokenizer: Tokenizer | None = None, *, data: str | Path | None = None,
                 procs: Processes | None = None, positions: list[SlotPosition] | None = None):
        self.config = cfg = config or TrainConfig()
        cfg.validate()
        self.bundle = model if isinstance(model, ModelBundle) else None
        if self.bundle is not None:
            model, src_tokenizer, tgt_tokenizer = model.model, model.src_tokenizer, model.tgt_tokenizer
            if task is None and not cfg.by_tokens:
                task = task_from_info(self.bundle.task)
        if isinstance(task, str):
            task = get_task(task)
        self.objective = OBJECTIVES[model.config.model_kind.name]
        self.metric = model.config.model_kind.metric  # = EVAL_METRICS[self.objective]
        if task is not None:
            src_tokenizer, tgt_tokenizer = self._fit_tokenizers(model, task, src_tokenizer, tgt_tokenizer)
        elif not cfg.by_tokens:
            raise TrainingError("a task is needed (a built-in name, a Task, or a bundle that names one)")
        elif src_tokenizer is None or tgt_tokenizer is None:
            raise TrainingError("training on a TSV without a task needs the model's tokenizers")
        self.task, self.src_tokenizer, self.tgt_tokenizer = task, src_tokenizer, tgt_tokenizer
        if self.objective == "mlm":
            self.mask_id = mask_id_of(src_tokenizer)
            if self.mask_id is None:
                raise TrainingError(f"a masked language model needs a [MASK] token, and task {task.name!r} has "
                                    "none: train encoder-only models on a corpus task such as 'facts'")
            words = [i for i in range(len(src_tokenizer)) if i >= 4 and i != self.mask_id]
            self._mask_candidates = torch.tensor(words, dtype=torch.long)
            self._mask_generator = torch.Generator().manual_seed(cfg.seed)
        self.procs = procs or Processes(device=resolve_device(cfg.device))
        self.device = self.procs.device
        self.model = model.to(self.device)
        torch.manual_seed(cfg.seed + self.procs.rank)  # each rank its own dropout masks
        self.batches = self._batches(data, positions)
        self.ddp = wrap(self.model, self.procs)  # DDP copies rank 0's weights to every rank
        self._forward_model = torch.compile(self.ddp, dynamic=True) if cfg.compile else self.ddp
        self.optimizer, self.scheduler = make_optimizer(self.model, model.config.d_model, cfg.warmup, cfg.lr_scale,
                                                         cfg.lr_decay_steps)
        self.loss_fn = nn.CrossEntropyLoss(label_smoothing=cfg.label_smoothing, ignore_index=PAD_ID,
                                           reduction="sum")
        self.bf16 = cfg.bf16(self.device)
        self.step_count = 0
        self.elapsed = 0.0
        self.tokens_read = 0.0  # source + target tokens (pads excluded), all ranks, since this Trainer began
        self.last_step: StepEvent | None = None
        self.last_eval: EvalEvent | None = None
        self._running = threading.Event()
        self._running.set()
        self._stop = threading.Event()
        self._lock = threading.Lock()  # one step or evaluation at a time

    # -- set-up ------------------------------------------------------------------------------
    def _fit_tokenizers(self, model: Transformer, task: Task, src_tok, tgt_tok) -> tuple[Tokenizer, Tokenizer]:
        """The tokenizers to train with (the task's own unless given), refused when the task
        needs symbols they lack or sequences longer than the model's max_len."""
        task_src, task_tgt = task.build_tokenizers()
        if src_tok is None or tgt_tok is None:
            src_tok, tgt_tok = task_src, task_tgt
        sides = {"seq2seq": (("source", task_src, src_tok), ("target", task_tgt, tgt_tok)),
                 "mlm": (("source", task_src, src_tok),), "lm": (("target", task_tgt, tgt_tok),)}
        for side, need, have in sides[self.objective]:
            lacking = sorted(set(need.vocab) - set(have.vocab))
            if lacking:
                raise TrainingError(f"task {task.name!r} uses {side} symbols the model's vocabulary lacks: "
                                    f"{lacking[:8]}{' …' if len(lacking) > 8 else ''}")
        self._check_fits(model, task, src_tok, tgt_tok, self.objective)
        return src_tok, tgt_tok

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

    def _batches(self, data, positions) -> SentenceBatches | TokenBatches:
        cfg, procs = self.config, self.procs
        self.n_slots = cfg.slots(procs.world_size)
        mine = range(procs.rank * cfg.accumulate, (procs.rank + 1) * cfg.accumulate)
        if not cfg.by_tokens:
            if cfg.batch_size < self.n_slots:
                raise TrainingError(f"batch_size {cfg.batch_size} cannot feed {self.n_slots} micro-batches "
                                    "(processes × accumulate)")
            return SentenceBatches(self.task, self.src_tokenizer, self.tgt_tokenizer, cfg.batch_size, mine,
                                   self.n_slots, cfg.seed)
        if self.objective != "seq2seq":
            raise TrainingError("token batches (batch_tokens) train the paper's encoder-decoder on a TSV")
        data = data or (self.task.params.get("path") if self.task is not None else None)
        if not data:
            raise TrainingError("token batches read a TSV file: give data=PAIRS.tsv (source<TAB>target lines)")
        self.data = str(data)
        return TokenBatches(data, self.src_tokenizer, self.tgt_tokenizer, cfg.micro_budget(procs.world_size), mine,
                            self.n_slots, self.model.config.max_len, cfg.buffer_pairs, cfg.seed, positions)

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
        """The next step's batch on this process (its first micro-batch when it has several)."""
        return self.batches.next_step()[0]

    def _autocast(self):
        return torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.bf16)

    def step(self) -> StepEvent:
        """One optimisation step of the global batch; every rank returns the same (global)
        figures. Raises `TrainingError` (weights untouched, on every rank alike) if the loss
        or the gradient is not finite, or the device runs out of memory."""
        with self._lock:
            step = self.step_count + 1
            try:
                return self._step(step)
            except torch.cuda.OutOfMemoryError:
                self.optimizer.zero_grad(set_to_none=True)
                if self.device.type == "cuda":
                    torch.cuda.empty_cache()
                size = (f"{self.config.batch_tokens} tokens" if self.config.by_tokens
                        else f"batch size {self.config.batch_size}")
                flag = "--batch-tokens or --accumulate more" if self.config.by_tokens else "--batch-size"
                raise TrainingError(f"out of GPU memory at step {step} ({size}, d_model {self.model.config.d_model}): "
                                    f"use a smaller {flag} or model") from None

    def _inputs(self, batch: Batch) -> tuple[tuple, dict, torch.Tensor, int, int]:
        """(model args, keyword args, labels, tokens read, labels to predict) for this model's
        objective; labels are PAD_ID where nothing is to be predicted. The batch is on the CPU
        (MLM masks are drawn there, so a seed repeats them on any device), and both counts are
        taken there, before the move: counting on the device would wait for it."""
        if self.objective == "mlm":
            masked = mask_tokens(batch.src, self.mask_id, self._mask_candidates, (PAD_ID, BOS_ID, EOS_ID),
                                 ignore_id=PAD_ID, generator=self._mask_generator)
            read, n_labels = int((masked.inputs != PAD_ID).sum()), int((masked.labels != PAD_ID).sum())
            return (masked.inputs.to(self.device),), {}, masked.labels.to(self.device), read, n_labels
        causal = {"causal": self.config.causal_mask}
        n_labels = int((batch.tgt_out != PAD_ID).sum())
        if self.objective == "lm":  # t predicts t + 1
            return (None, batch.tgt_in.to(self.device)), causal, batch.tgt_out.to(self.device), \
                int((batch.tgt_in != PAD_ID).sum()), n_labels
        read = int((batch.src != PAD_ID).sum()) + n_labels
        batch = batch.to(self.device)
        return (batch.src, batch.tgt_in), causal, batch.tgt_out, read, n_labels

    def _logits(self, args: tuple, kwargs: dict) -> torch.Tensor:
        with self._autocast():
            return self._forward_model(*args, **kwargs).float()  # (B, T, V)

    def _forward(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor, int]:
        """(logits, labels, tokens read) of one batch."""
        args, kwargs, labels, read, _ = self._inputs(batch)
        return self._logits(args, kwargs), labels, read

    def _step(self, step: int) -> StepEvent:
        start = time.perf_counter()
        procs = self.procs
        self.model.train()
        micro = [self._inputs(b) for b in self.batches.next_step()]
        n_labels, = all_reduce_sum([sum(m[4] for m in micro)], procs)
        n_labels = max(n_labels, 1)
        scale = procs.world_size / n_labels
        self.optimizer.zero_grad(set_to_none=True)
        exact = torch.float32 if self.device.type == "mps" else torch.float64  # (MPS has no float64)
        totals = torch.zeros(2, dtype=exact, device=self.device)  # summed loss, correct argmaxes
        for i, (args, kwargs, labels, _, _) in enumerate(micro):
            last = i == len(micro) - 1
            with contextlib.nullcontext() if last or not procs.distributed else self.ddp.no_sync():
                logits = self._logits(args, kwargs)
                loss = self.loss_fn(logits.reshape(-1, logits.size(-1)), labels.reshape(-1))
                (loss * scale).backward()
            with torch.no_grad():
                correct = ((logits.argmax(-1) == labels) & (labels != PAD_ID)).sum()
                totals += torch.stack([loss.detach().to(exact), correct.to(exact)])
        # The gradient norm (DDP has already averaged the gradients: every rank's is the same)
        # and the summed loss and hits come to the host together: the step's one wait on the device.
        max_norm = self.config.clip_grad if self.config.clip_grad is not None else float("inf")
        norm = torch.nn.utils.clip_grad_norm_(self.optimizer.param_groups[0]["params"], max_norm)
        loss_sum, hits, grad_norm = torch.cat([totals, norm.detach().to(exact).reshape(1)]).tolist()
        loss_sum, correct, read = all_reduce_sum([loss_sum, hits, sum(m[3] for m in micro)], procs)
        return self._update(step, start, loss_sum / n_labels, correct / n_labels, read, grad_norm)

    def _update(self, step: int, start: float, loss: float, acc: float, read: float, grad_norm: float) -> StepEvent:
        """Refuse a non-finite loss or gradient (the weights stay those of the last good step),
        else apply the (already clipped) gradients."""
        lr = self.optimizer.param_groups[0]["lr"]
        if not math.isfinite(loss):
            self.optimizer.zero_grad(set_to_none=True)
            raise TrainingError(f"loss became {loss} at step {step} (lr {lr:.3g}); the weights are those "
                                "after the last good step. Lower the learning rate (lr_scale) or raise warmup.")
        if not math.isfinite(grad_norm):
            self.optimizer.zero_grad(set_to_none=True)
            raise TrainingError(f"gradient norm became {grad_norm} at step {step} (lr {lr:.3g}); the weights are "
                                "those after the last good step. Lower the learning rate or set clip_grad.")
        self.optimizer.step()
        self.scheduler.step()  # (the device applies it while the next batch is built: no wait here)
        dt = time.perf_counter() - start
        self.elapsed += dt
        self.tokens_read += read
        self.step_count = step
        event = StepEvent(step, loss, acc, lr, read / max(dt, 1e-9), grad_norm, self.elapsed)
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
        if self.task is None:
            raise TrainingError("no held-out evaluation without a task (token batches of a TSV: score BLEU instead)")
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
        `eval_every` steps and at the end, an EvalEvent (when there is a task to evaluate:
        every rank evaluates its identical replica, so all agree on what follows). Blocks
        while paused."""
        cfg = self.config
        while self.step_count < cfg.steps and not self._stop.is_set():
            while not self._running.wait(timeout=0.1):
                pass
            if self._stop.is_set():
                break
            event = self.step()
            yield event
            if cfg.eval_every and self.task is not None and (event.step % cfg.eval_every == 0
                                                             or event.step == cfg.steps):
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
               "processes": self.procs.world_size, "train_config": self.config.to_dict()}
        if self.last_step is not None:
            out.update(loss=self.last_step.loss, token_accuracy=self.last_step.token_accuracy,
                       tokens_per_s=round(self.last_step.tokens_per_s))
        if self.last_eval is not None:
            out.update({self.last_eval.metric: self.last_eval.exact_match, "eval_size": self.last_eval.n,
                        "eval_step": self.last_eval.step})
        out["objective"] = self.objective
        return out

    def to_bundle(self, name: str | None = None) -> ModelBundle:
        """The trained model as a bundle (sharing the model, weights on their device)."""
        base = self.bundle
        task = self.task.to_dict() if self.task is not None else base.task
        return ModelBundle(self.model, self.src_tokenizer, self.tgt_tokenizer, task, self.metrics(),
                           name=name or (base.name if base else self.task.name), path=base.path if base else None)

    def snapshot(self) -> dict:
        """A CPU copy of the weights (e.g. to hand to another thread)."""
        with self._lock:
            return {k: v.detach().to("cpu", copy=True) for k, v in self.model.state_dict().items()}

    # -- what a resume needs (collective: every rank calls these together) ------------------------
    def positions(self) -> list[list[int]]:
        """Every slot's position in the data, all ranks' gathered in slot order (rank 0 saves them)."""
        mine = self.batches.positions()
        if not mine:
            return []
        return [row for t in all_gather_tensor(torch.tensor(mine, dtype=torch.long), self.procs) for row in t.tolist()]

    def rng_states(self) -> list[torch.Tensor]:
        return all_gather_tensor(torch.get_rng_state(), self.procs)

    def dropped(self) -> int:
        """Pairs every rank skipped for being too long (token batches)."""
        return int(all_reduce_sum([self.batches.dropped], self.procs)[0])


__all__ = ["TrainConfig", "Trainer", "StepEvent", "EvalEvent", "TrainingError", "noam_lr", "make_optimizer",
           "translate_batch", "exact_match", "masked_accuracy", "next_token_accuracy", "scored_positions", "task_from_info",
           "OBJECTIVES", "EVAL_METRICS", "METRIC_LABELS", "ADAM_BETAS", "ADAM_EPS"]
