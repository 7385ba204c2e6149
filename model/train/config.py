"""What shapes a training run (`TrainConfig`) and what a run reports (`StepEvent`, `EvalEvent`).

One configuration serves every size of run: a toy task on a laptop batches by sentences
(`batch_size`), the paper's WMT run by tokens (`batch_tokens`, Section 5.1: about 25,000 source
and 25,000 target tokens a step), in one process or many, with gradient accumulation and bf16.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields

import torch

from model.nn.kinds import DECODER_ONLY, ENCODER_DECODER, ENCODER_ONLY

# What each kind of model learns, and the held-out score that says how well.
OBJECTIVES = {ENCODER_DECODER.name: "seq2seq", ENCODER_ONLY.name: "mlm", DECODER_ONLY.name: "lm"}
EVAL_METRICS = {"seq2seq": "exact_match", "mlm": "masked_accuracy", "lm": "next_token_accuracy"}
METRIC_LABELS = {"exact_match": "held-out exact match", "masked_accuracy": "held-out masked-token accuracy",
                 "next_token_accuracy": "held-out next-token accuracy"}
PRECISIONS = ("auto", "fp32", "bf16")


class TrainingError(RuntimeError):
    """Training cannot go on (a diverged loss, out of memory, a bad setting); the message says why."""


def _positive_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


@dataclass
class TrainConfig:
    """Everything that shapes a training run (the model's own sizes live in TransformerConfig).

    A step's batch is shared by every process and cut into `accumulate` micro-batches on each:
    `batch_size` sentences, or with `batch_tokens` > 0 as many sentences as fit that many
    tokens per side (read from a TSV file, model.data.batching)."""

    steps: int = 2000
    batch_size: int = 64  # sentences per step, all processes together (when batch_tokens is 0)
    warmup: int = 400  # the paper used 4000 for 100k steps on WMT; small tasks need far fewer
    lr_scale: float = 1.0
    lr_decay_steps: int = 0  # 0: Eq. 3's 1/√step decay; N: linear decay to 5 % of the peak by step N
    label_smoothing: float = 0.1  # ε_ls, Section 5.4
    clip_grad: float | None = None  # max gradient norm; None = no clipping (the paper clips nothing)
    device: str = "auto"  # "auto" | "cpu" | "cuda" | "mps" (under torchrun: each rank's own GPU)
    seed: int = 0
    eval_every: int = 0  # steps between held-out evaluations; 0 = only when asked
    eval_size: int = 200
    amp: bool = True  # False: never bf16 autocast (whatever `precision` says)
    causal_mask: bool = True  # False: the classic bug (model.interpret.leak_lab), the decoder sees the future
    batch_tokens: int = 0  # > 0: tokens per step per side (source and target), all processes together
    accumulate: int = 1  # micro-batches per process per step (gradient accumulation)
    precision: str = "auto"  # auto: bf16 autocast on CUDA, fp32 elsewhere
    compile: bool = False  # torch.compile the model (dynamic shapes: every token batch has its own)
    buffer_pairs: int = 20_000  # token batches: pairs sorted by length together

    def validate(self) -> None:
        for name in ("steps", "batch_size", "warmup", "eval_size", "accumulate", "buffer_pairs"):
            value = getattr(self, name)
            if not _positive_int(value):
                raise TrainingError(f"{name} must be a positive integer, got {value!r}")
        if not (self.batch_tokens == 0 or _positive_int(self.batch_tokens)):
            raise TrainingError(f"batch_tokens must be 0 (batches of batch_size sentences) or a positive integer, "
                                f"got {self.batch_tokens!r}")
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
        if self.precision not in PRECISIONS:
            raise TrainingError(f"precision must be one of {PRECISIONS}, got {self.precision!r}")

    @property
    def by_tokens(self) -> bool:
        return self.batch_tokens > 0

    def slots(self, world_size: int) -> int:
        """Micro-batches in one step, all processes together."""
        return world_size * self.accumulate

    def micro_budget(self, world_size: int) -> int:
        """Tokens per side in one micro-batch: the step's budget shared by every slot."""
        return max(1, self.batch_tokens // self.slots(world_size))

    def bf16(self, device: torch.device) -> bool:
        """Whether the forward runs under bf16 autocast on `device`."""
        return self.amp and (self.precision == "bf16" or (self.precision == "auto" and device.type == "cuda"))

    def to_dict(self) -> dict:
        return asdict(self)


# The flags a preset may fill: the train command's parser leaves them None, so `--preset lecture`
# can tell a flag given from one left out, and fills those left out from here (model.cli.build).
TRAIN_DEFAULTS = {f.name: f.default for f in fields(TrainConfig)
                  if f.name in ("steps", "batch_size", "warmup", "lr_scale", "lr_decay_steps", "label_smoothing")}


@dataclass
class StepEvent:
    """One optimisation step. tokens_per_s counts source + target tokens (pads excluded), as the
    paper sizes its batches (Section 5.1), all processes together."""

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


__all__ = ["TrainConfig", "TRAIN_DEFAULTS", "TrainingError", "StepEvent", "EvalEvent", "OBJECTIVES", "EVAL_METRICS",
           "METRIC_LABELS", "PRECISIONS"]
