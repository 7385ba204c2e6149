"""What a recording holds: `Step`s (one named tensor each, with its formula, description and
axes) in the order the forward computed them, gathered in a `Trace` (`model.nn.hooks.record`)."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import torch
from torch import nn

from model.nn.kinds import AttentionKind


def _kind(kind: str) -> AttentionKind:
    try:
        return AttentionKind.parse(kind)
    except ValueError as exc:
        raise KeyError(str(exc)) from None


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
        return self[_kind(kind).module_name(layer) + ".weights"].tensor

    def attention_kinds(self) -> list[AttentionKind]:
        """The kinds of attention present in this trace, in the paper's order."""
        present = set(self.names())
        return [k for k in AttentionKind if k.module_name(0) + ".weights" in present]

    def n_layers(self, kind: str) -> int:
        kind, n = _kind(kind), 0
        present = set(self.names())
        while kind.module_name(n) + ".weights" in present:
            n += 1
        return n

    # -- filled by the recorder's hooks (model.nn.hooks.record) ----------------------------
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
