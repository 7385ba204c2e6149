"""The recorder: an opt-in trace of every named intermediate tensor of a forward pass.

Why a context variable and not `self.attn = ...` on modules (as the Annotated Transformer
does): module attributes are shared by every thread that runs the model, so a GUI recording
a forward would race with a training thread. A `ContextVar` is private to the thread (and
task) that set it, so `with record(model):` sees only its own forward passes, and a model
outside any recording takes the fast path with no copies at all.
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Iterator

import torch
from torch import nn

ATTENTION_KINDS = {
    "encoder": "encoder.layers.{layer}.self_attn",
    "decoder_self": "decoder.layers.{layer}.self_attn",
    "cross": "decoder.layers.{layer}.cross_attn",
}


@dataclass
class Step:
    """One recorded operation: its stable name, the tensor it produced and how.

    `axes` names every dimension of `tensor` so a viewer can label it: "batch", "head",
    "src" / "tgt" (token positions of the source / target sequence), "d_model", "d_k",
    "d_ff", "vocab".
    """

    name: str
    tensor: torch.Tensor
    formula: str
    description: str
    axes: tuple[str, ...]

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.tensor.shape)

    @property
    def block(self) -> str:
        """The name of the module (or stage) that produced this step: the name minus its last part."""
        return self.name.rsplit(".", 1)[0]


@dataclass
class Trace:
    """Everything one or more forward passes computed, in execution order."""

    steps: list[Step] = field(default_factory=list)
    module_names: dict[int, str] = field(default_factory=dict, repr=False)
    # The recorded model, so a reading of the trace that needs its weights (the logit lens
    # passes each layer through the output layer) needs no second argument.
    model: nn.Module | None = field(default=None, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.steps)

    def __iter__(self) -> Iterator[Step]:
        return iter(self.steps)

    def __contains__(self, name: str) -> bool:
        return any(s.name == name for s in self.steps)

    def __getitem__(self, name: str) -> Step:
        """The last step recorded under `name` (a later forward overrides an earlier one)."""
        for step in reversed(self.steps):
            if step.name == name:
                return step
        raise KeyError(f"no step named {name!r} in the trace")

    def names(self) -> list[str]:
        return [s.name for s in self.steps]

    def index(self, name: str) -> int:
        for i in range(len(self.steps) - 1, -1, -1):
            if self.steps[i].name == name:
                return i
        raise KeyError(f"no step named {name!r} in the trace")

    def attention(self, kind: str, layer: int) -> torch.Tensor:
        """Per-head softmax weights `(B, h, T_q, T_k)` of one attention sublayer.

        kind: "encoder" (self-attention), "decoder_self" (masked self-attention) or
        "cross" (encoder-decoder attention, rectangular T_tgt x T_src).
        """
        if kind not in ATTENTION_KINDS:
            raise KeyError(f"unknown attention kind {kind!r}; expected one of {sorted(ATTENTION_KINDS)}")
        return self[ATTENTION_KINDS[kind].format(layer=layer) + ".weights"].tensor

    def attention_kinds(self) -> list[str]:
        """The kinds of attention present in this trace, in the paper's order."""
        present = set(self.names())
        return [k for k, pattern in ATTENTION_KINDS.items() if pattern.format(layer=0) + ".weights" in present]

    def n_layers(self, kind: str) -> int:
        n = 0
        present = set(self.names())
        while ATTENTION_KINDS[kind].format(layer=n) + ".weights" in present:
            n += 1
        return n

    # -- filled by the model while recording ---------------------------------------------
    def add(self, name: str, tensor: torch.Tensor, formula: str, description: str, axes: tuple[str, ...]) -> None:
        if len(axes) != tensor.dim():
            raise ValueError(f"step {name}: {len(axes)} axis names for a {tensor.dim()}-d tensor")
        # Exactly one copy per step (a GUI forward emits ~150 of them, so each op counts):
        # conversion to float32 and the move to the CPU each make one already; else clone.
        # Under no_grad nothing requires grad, and skipping detach() saves a dispatch per step.
        t = tensor.detach() if tensor.requires_grad else tensor
        if t.is_floating_point() and t.dtype != torch.float32:
            t = t.to("cpu", torch.float32, copy=True)
        elif t.is_cpu:
            t = t.clone()
        else:
            t = t.cpu()
        self.steps.append(Step(name, t, formula, description, tuple(axes)))


_current: ContextVar[Trace | None] = ContextVar("transformer_explorer_trace", default=None)


def current_trace() -> Trace | None:
    """The trace being filled in this thread, or None (the fast path)."""
    return _current.get()


@contextmanager
def record(model: nn.Module) -> Iterator[Trace]:
    """Record every forward of `model` run inside the block into the returned `Trace`.

    >>> with record(model) as trace:
    ...     logits = model(src, tgt)
    >>> trace.attention("cross", 0).shape  # (B, h, T_tgt, T_src)
    """
    trace = Trace(module_names={id(m): name for name, m in model.named_modules()}, model=model)
    token = _current.set(trace)
    try:
        yield trace
    finally:
        _current.reset(token)


def emit(module: nn.Module | None, name: str, tensor: torch.Tensor, formula: str, description: str,
         axes: tuple[str, ...]) -> None:
    """Record `tensor` as `<module's name>.<name>` if this thread is recording; else nothing."""
    trace = _current.get()
    if trace is None:
        return
    if module is not None:
        prefix = trace.module_names.get(id(module))
        if prefix is None:  # a module outside the recorded model: skip rather than mislabel
            return
        name = f"{prefix}.{name}" if prefix else name
    trace.add(name, tensor, formula, description, axes)
