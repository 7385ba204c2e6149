"""The paper's training at its own scale (Section 5): many processes, batches counted in tokens,
gradient accumulation, bf16 — the same loss, optimiser and schedule as `model.train.trainer`.

One optimiser step takes one micro-batch from each of this rank's `accumulate` data slots
(model.data.batching). The loss is summed over tokens and divided by the number of target tokens in
the *whole* step, counted across all ranks first, so every target token weighs the same however
the tokens fall into micro-batches and processes; DistributedDataParallel averages the ranks'
gradients during the last backward (the others run under `no_sync`), hence the × world_size.
Metrics are summed over ranks, so every rank reports the global loss.
"""
from __future__ import annotations

import contextlib
import math
import time
from dataclasses import asdict, dataclass

import torch
from torch import nn

from model.data.batching import SlotPosition, SlotStream
from model.train.distributed import Processes, all_gather_tensor, all_reduce_sum, wrap
from model.train.optimizer import make_optimizer
from model.data.tokenizers import PAD_ID
from model.train.trainer import StepEvent, TrainingError
from model.nn.transformer import Transformer

PRECISIONS = ("auto", "fp32", "bf16")


@dataclass
class ScaleConfig:
    """How a large run batches, accumulates and computes (the model's sizes are TransformerConfig's)."""

    steps: int = 100_000  # Section 5.2: base 100k steps, big 300k
    batch_tokens: int = 25_000  # per step, all processes together, per side (source and target)
    accumulate: int = 1  # micro-batches per process per step
    warmup: int = 4000
    lr_scale: float = 1.0
    lr_decay_steps: int = 0  # 0: Eq. 3's 1/√step; N: linear decay to 5 % of the peak by step N
    label_smoothing: float = 0.1
    clip_grad: float | None = None
    precision: str = "auto"  # auto: bf16 on CUDA, fp32 elsewhere
    compile: bool = False
    seed: int = 0
    buffer_pairs: int = 20_000  # pairs sorted by length together

    def validate(self) -> None:
        for name in ("steps", "batch_tokens", "accumulate", "warmup", "buffer_pairs"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise TrainingError(f"{name} must be a positive integer, got {value!r}")
        if not isinstance(self.lr_decay_steps, int) or self.lr_decay_steps < 0 or 0 < self.lr_decay_steps <= self.warmup:
            raise TrainingError(f"lr_decay_steps must be 0 (the paper's 1/√step decay) or a step after the warm-up "
                                f"({self.warmup}), got {self.lr_decay_steps!r}")
        if self.precision not in PRECISIONS:
            raise TrainingError(f"precision must be one of {PRECISIONS}, got {self.precision!r}")

    def slots(self, world_size: int) -> int:
        return world_size * self.accumulate

    def micro_budget(self, world_size: int) -> int:
        """Tokens per side in one micro-batch: the step's budget shared by every slot."""
        return max(1, self.batch_tokens // self.slots(world_size))

    def to_dict(self) -> dict:
        return asdict(self)


def use_bf16(precision: str, device: torch.device) -> bool:
    return precision == "bf16" or (precision == "auto" and device.type == "cuda")


class ScaledTrainer:
    """Train `model` on this rank's slots of a TSV; `step()` is one optimiser step of the global batch."""

    def __init__(self, model: Transformer, data_path, src_tok, tgt_tok, config: ScaleConfig, procs: Processes,
                 positions: list[SlotPosition] | None = None):
        config.validate()
        self.config, self.procs = config, procs
        self.model = model.to(procs.device)
        self.n_slots = config.slots(procs.world_size)
        budget = config.micro_budget(procs.world_size)
        mine = range(procs.rank * config.accumulate, (procs.rank + 1) * config.accumulate)
        positions = positions or [SlotPosition() for _ in range(self.n_slots)]
        self.streams = [SlotStream(data_path, src_tok, tgt_tok, budget, slot, self.n_slots, model.config.max_len,
                                   config.buffer_pairs, config.seed, positions[slot]) for slot in mine]
        self.ddp = wrap(self.model, procs)
        # dynamic: every token batch has another shape; a static compile would recompile for each
        self.forward = torch.compile(self.ddp, dynamic=True) if config.compile else self.ddp
        self.optimizer, self.scheduler = make_optimizer(self.model, model.config.d_model, config.warmup,
                                                        config.lr_scale, config.lr_decay_steps)
        self.loss_fn = nn.CrossEntropyLoss(label_smoothing=config.label_smoothing, ignore_index=PAD_ID,
                                           reduction="sum")
        self.bf16 = use_bf16(config.precision, procs.device)
        self.step_count, self.elapsed, self.last_step = 0, 0.0, None
        self.tokens_read = 0.0  # source + target tokens (pads excluded), all ranks, this session
        torch.manual_seed(config.seed + procs.rank)  # each rank its own dropout masks

    def _autocast(self):
        return torch.autocast(self.procs.device.type, dtype=torch.bfloat16, enabled=self.bf16)

    def step(self) -> StepEvent:
        """One optimiser step; every rank returns the same (global) figures. Raises
        TrainingError on every rank alike when the loss or gradient is not finite."""
        start = time.perf_counter()
        self.model.train()
        micro = [next(s).to(self.procs.device) for s in self.streams]
        local_targets = sum(int((b.tgt_out != PAD_ID).sum()) for b in micro)
        (global_targets,) = all_reduce_sum([local_targets], self.procs)
        scale = self.procs.world_size / max(global_targets, 1)
        loss_sum = correct = read = 0.0
        for i, batch in enumerate(micro):
            last = i == len(micro) - 1
            sync = contextlib.nullcontext() if last or not self.procs.distributed else self.ddp.no_sync()
            with sync:
                with self._autocast():
                    logits = self.forward(batch.src, batch.tgt_in)  # (B, T, V)
                logits = logits.float()
                loss = self.loss_fn(logits.reshape(-1, logits.size(-1)), batch.tgt_out.reshape(-1))
                (loss * scale).backward()
            real = batch.tgt_out != PAD_ID
            loss_sum += float(loss.detach())
            correct += float(((logits.detach().argmax(-1) == batch.tgt_out) & real).sum())
            read += float((batch.src != PAD_ID).sum() + real.sum())
        loss_sum, correct, read = all_reduce_sum([loss_sum, correct, read], self.procs)
        return self._update(start, loss_sum / max(global_targets, 1), correct / max(global_targets, 1), read)

    def _update(self, start: float, loss: float, acc: float, read: float) -> StepEvent:
        step, lr = self.step_count + 1, self.optimizer.param_groups[0]["lr"]
        max_norm = self.config.clip_grad if self.config.clip_grad is not None else float("inf")
        grad_norm = float(torch.nn.utils.clip_grad_norm_(self.optimizer.param_groups[0]["params"], max_norm))
        if not (math.isfinite(loss) and math.isfinite(grad_norm)):
            self.optimizer.zero_grad(set_to_none=True)
            raise TrainingError(f"loss {loss} / gradient norm {grad_norm} at step {step} (lr {lr:.3g}): the weights "
                                "are those after the last good step. Lower --lr-scale or raise --warmup.")
        self.optimizer.step()
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        if self.procs.device.type == "cuda":
            torch.cuda.synchronize(self.procs.device)
        dt = time.perf_counter() - start
        self.elapsed += dt
        self.tokens_read += read
        self.step_count = step
        self.last_step = StepEvent(step, loss, acc, lr, read / max(dt, 1e-9), grad_norm, self.elapsed)
        return self.last_step

    # -- what a resume needs -------------------------------------------------------------------
    def positions(self) -> list[list[int]]:
        """Every slot's position (all ranks', gathered: rank 0 saves them)."""
        mine = torch.tensor([s.position.as_list() for s in self.streams], dtype=torch.long)
        return [row for t in all_gather_tensor(mine, self.procs) for row in t.tolist()]

    def rng_states(self) -> list[torch.Tensor]:
        return all_gather_tensor(torch.get_rng_state(), self.procs)

    def dropped(self) -> int:
        return int(all_reduce_sum([sum(s.dropped for s in self.streams)], self.procs)[0])


__all__ = ["ScaleConfig", "ScaledTrainer", "PRECISIONS", "use_bf16"]
