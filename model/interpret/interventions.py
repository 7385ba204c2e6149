"""Head surgery: run a model with chosen attention heads zeroed, mean-replaced or made uniform.

`intervene(model, heads)` is a context manager; inside it every forward of `model` (plain,
`record`, every decoding function) runs with the edits, and leaving it restores the model
exactly. The edits are hooks (model.nn.hooks) on the edited sublayers' "weights" and
"context" sites, held in a `ContextVar`, never on the modules: another thread running the same
model is not affected, and a recording made inside the block shows the edited weights.

    >>> with intervene(model, {("cross", 1, 0): "zero", ("encoder", 0, 2): "uniform"}):
    ...     ys = greedy_decode(model, src, bos, eos, 20)

The three edits of head_i in Concat(head_1..head_h) W^O (Section 3.2.2):
- "zero": head_i = 0 (Michel et al. 2019 mask a head this way);
- "mean": head_i replaced by its mean over the query positions (`model.interpret.head_edits.positional_mean`
  says exactly which: all real source positions in the encoder, a running mean over
  0..t in the decoder so no position reads the future);
- "uniform": softmax(…) replaced by 1/T_k on the keys the mask allows (0 where masked), so
  the head averages the values instead of choosing among them.
"""
from __future__ import annotations

import numbers
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import torch
from torch import nn

from model.interpret.head_edits import OPERATIONS, HeadPlan, plan_hooks
from model.interpret.lens import logit_lens  # noqa: F401 - re-exported beside the interventions
from model.nn.hooks import HookFn, hooks
from model.nn.kinds import AttentionKind

HeadKey = tuple[str, int, int]  # (kind, layer, head), counted from 0


class InterventionError(ValueError):
    """A head that the model does not have, or an unknown edit; the message says which."""


def as_index(value) -> int | None:
    """`value` as a Python int when it is a whole number (numpy's integers too); None for
    anything else, bools included (True is not layer 1)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        return None
    return int(value)


def attention_module(model: nn.Module, kind: str, layer: int) -> nn.Module:
    """The MultiHeadAttention of one sublayer ("encoder" | "decoder_self" | "cross", layer from 0)."""
    try:
        kind = AttentionKind.parse(kind)
    except ValueError as exc:
        raise InterventionError(str(exc)) from None
    n = attention_layers(model).get(kind, 0)
    if n == 0:
        raise InterventionError(f"this model has no {kind} attention (it has {', '.join(attention_layers(model))})")
    index = as_index(layer)
    if index is None or not 0 <= index < n:
        shown = index if index is not None else repr(layer)
        raise InterventionError(f"{kind} layer {shown} is out of range: this model has layers 0..{n - 1}")
    return model.get_submodule(kind.module_name(index))


def attention_layers(model: nn.Module) -> dict[AttentionKind, int]:
    """{kind: number of layers} for the attention kinds `model` has, in the paper's order."""
    cfg = model.config
    kinds = cfg.model_kind.attention_kinds
    return {k: (cfg.n_encoder_layers if k.stack == "encoder" else cfg.n_decoder_layers) for k in kinds}


def all_heads(model: nn.Module) -> list[HeadKey]:
    """Every (kind, layer, head) of the model, kind by kind, layer by layer."""
    h = model.config.n_heads
    return [(kind, layer, head) for kind, n in attention_layers(model).items() for layer in range(n)
            for head in range(h)]


def validate_heads(model: nn.Module, heads: Mapping[HeadKey, str]) -> dict[HeadKey, str]:
    """`heads` checked against `model`: each key a real (kind, layer, head), each value an edit.
    The text form of `parse_heads` is accepted too; layers and heads may be numpy integers."""
    if isinstance(heads, str):
        heads = parse_heads(heads)
    if not isinstance(heads, Mapping):
        raise InterventionError(f"heads are {{(kind, layer, head): edit}} or text like 'encoder:0:1=zero', "
                                f"got {type(heads).__name__}")
    checked = {}
    for key, op in heads.items():
        if not (isinstance(key, tuple) and len(key) == 3):
            raise InterventionError(f"a head is (kind, layer, head), got {key!r}")
        kind, layer, head = key
        attention_module(model, kind, layer)
        h = model.config.n_heads
        index = as_index(head)
        if index is None or not 0 <= index < h:
            shown = index if index is not None else repr(head)
            raise InterventionError(f"{kind} layer {as_index(layer)}: head {shown} is out of range: heads are 0..{h - 1}")
        if not isinstance(op, str) or op not in OPERATIONS:
            raise InterventionError(f"unknown edit {op!r} for {kind}:{layer}:{head}; use one of {', '.join(OPERATIONS)}")
        checked[(str(kind), as_index(layer), index)] = op
    return checked


def heads_that_fit(model: nn.Module, heads: Mapping[HeadKey, str]) -> dict[HeadKey, str]:
    """The entries of `heads` that `model` has (a session keeps its edits across a model switch
    only where the new model has the same heads)."""
    kept = {}
    for key, op in (parse_heads(heads) if isinstance(heads, str) else dict(heads)).items():
        try:
            kept.update(validate_heads(model, {key: op}))
        except InterventionError:
            continue
    return kept


@contextmanager
def _plans_set(model: nn.Module, plans: dict[tuple[str, int], HeadPlan]) -> Iterator[None]:
    """Set the hooks carrying out per-sublayer plans, for this thread; always removed on leaving."""
    fns: dict[str, HookFn] = {}
    for (kind, layer), plan in plans.items():
        attention_module(model, kind, layer)  # validated: a clear error for a sublayer the model lacks
        fns.update(plan_hooks(AttentionKind(kind).module_name(layer), plan))
    with hooks(model, fns):
        yield


@contextmanager
def intervene(model: nn.Module, heads: Mapping[HeadKey, str] | None) -> Iterator[dict[HeadKey, str]]:
    """Run every forward of `model` inside the block with `heads` edited (see the module doc).

    heads: {(kind, layer, head): "zero" | "mean" | "uniform"}; empty or None edits nothing.
    Nested blocks both apply, the outer one's edits first. Raises InterventionError naming the
    first head the model does not have."""
    checked = validate_heads(model, heads or {})
    plans: dict[tuple[str, int], HeadPlan] = {}
    for (kind, layer, head), op in checked.items():
        plans.setdefault((kind, layer), HeadPlan({})).ops[head] = op
    with _plans_set(model, plans):
        yield checked


@contextmanager
def gated(model: nn.Module, gates: Mapping[tuple[str, int], torch.Tensor]) -> Iterator[None]:
    """Multiply each head's output by a gate ξ (one (h,) tensor per (kind, layer)): Michel et
    al.'s head-importance estimate differentiates the loss with respect to ξ at ξ = 1."""
    with _plans_set(model, {key: HeadPlan({}, gate) for key, gate in gates.items()}):
        yield


# -- a text form, for the command line and scene files -------------------------------------
def parse_heads(text: str) -> dict[HeadKey, str]:
    """"encoder:0:1=zero,cross:1:0=uniform" → {("encoder", 0, 1): "zero", ("cross", 1, 0): "uniform"}
    (layers and heads from 0, as in code). Checked against a model later, by `intervene`."""
    heads: dict[HeadKey, str] = {}
    for part in filter(None, (p.strip() for p in (text or "").split(","))):
        where, _, op = part.partition("=")
        bits = where.split(":")
        if len(bits) != 3 or not op:
            raise InterventionError(f"{part!r}: write kind:layer:head=edit, e.g. encoder:0:1=zero")
        kind, layer, head = bits
        try:
            key = (kind.strip(), int(layer), int(head))
        except ValueError:
            raise InterventionError(f"{part!r}: layer and head must be whole numbers (from 0)") from None
        try:
            AttentionKind.parse(key[0])
        except ValueError as exc:
            raise InterventionError(f"{part!r}: {exc}") from None
        if op.strip() not in OPERATIONS:
            raise InterventionError(f"{part!r}: unknown edit {op.strip()!r}; use one of {', '.join(OPERATIONS)}")
        heads[key] = op.strip()
    return heads


def format_heads(heads: Mapping[HeadKey, str]) -> str:
    """The inverse of `parse_heads`, in a stable order."""
    return ",".join(f"{k}:{layer}:{h}={op}" for (k, layer, h), op in sorted(heads.items()))


__all__ = [
    "OPERATIONS",
    "InterventionError",
    "as_index",
    "all_heads",
    "attention_layers",
    "attention_module",
    "format_heads",
    "gated",
    "heads_that_fit",
    "intervene",
    "parse_heads",
    "validate_heads",
]
