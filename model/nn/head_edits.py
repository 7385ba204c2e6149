"""What `MultiHeadAttention` does to a head's output while an intervention is active.

The edits live here, apart from `model.interpret.interventions` (which builds and validates them), so
`model.nn.attention` imports only this small module. Which heads are edited is held in a
`ContextVar`, like the recorder's trace: it is private to the thread that set it, so a GUI
worker computing an ablated frame never changes what a training thread computes with the
same modules, and leaving the `with` block always restores the previous plan.

Where the edits act (Section 3.2.2): on head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V), the
per-head context (B, h, T_q, d_k) *before* Concat(head_1..head_h) W^O, so a zeroed head is
exactly its slice of the concatenation set to 0.
"""
from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field

import torch

OPERATIONS = ("zero", "mean", "uniform")


@dataclass(frozen=True)
class HeadPlan:
    """The edits for one attention module: head index → "zero" | "mean" | "uniform", and an
    optional gate ξ (h,) multiplying every head's output (Michel et al. 2019, Section 4)."""

    ops: dict[int, str] = field(default_factory=dict)
    gate: torch.Tensor | None = None

    @property
    def uniform_heads(self) -> list[int]:
        return [h for h, op in self.ops.items() if op == "uniform"]


# id(MultiHeadAttention) → its plan, for the thread (and task) that set it.
_plans: ContextVar[dict[int, HeadPlan] | None] = ContextVar("transformer_explorer_head_plans", default=None)


def plan_for(module) -> HeadPlan | None:
    """The plan for `module` in this thread, or None (the usual, unedited forward)."""
    plans = _plans.get()
    return None if plans is None else plans.get(id(module))


def allowed_keys(mask: torch.Tensor | None, shape: tuple[int, int, int, int], device=None) -> torch.Tensor:
    """(B, 1, T_q, T_k) float: 1 where a query may attend a key (all ones without a mask)."""
    B, _, T_q, T_k = shape
    if mask is None:
        return torch.ones(B, 1, T_q, T_k, device=device)
    return mask.expand(B, 1, T_q, T_k).float()


def uniform_weights(mask: torch.Tensor | None, shape: tuple[int, int, int, int], device=None) -> torch.Tensor:
    """(B, 1, T_q, T_k): each row 1 / (number of keys it may attend) on those keys, 0 where masked."""
    allowed = allowed_keys(mask, shape, device)
    return allowed / allowed.sum(-1, keepdim=True).clamp(min=1.0)


def positional_mean(ctx: torch.Tensor, mask: torch.Tensor | None, causal_queries: bool) -> torch.Tensor:
    """The "mean" edit: each head's output replaced by its mean over the query positions.

    Which mean, exactly: the encoder (source queries) uses the mean over the sequence's real
    (non-padding) source positions, the same vector at every position. Decoder queries (its
    self-attention and cross-attention) use a running mean over positions 0..t, so position t
    never reads a later one: the teacher-forced pass and step-by-step decoding still agree,
    and the edit cannot leak the future the causal mask hides. ctx (B, h, T_q, d_k).
    """
    if causal_queries:
        counts = torch.arange(1, ctx.size(2) + 1, device=ctx.device, dtype=ctx.dtype)  # (T_q,)
        return ctx.cumsum(2) / counts[:, None]  # (B, h, T_q, d_k)
    if mask is not None and mask.size(-1) == ctx.size(2):
        real = mask[:, 0, -1, :].to(ctx.dtype)[:, None, :, None]  # (B, 1, T, 1): the key padding = the queries'
    else:
        real = torch.ones(ctx.size(0), 1, ctx.size(2), 1, dtype=ctx.dtype, device=ctx.device)
    mean = (ctx * real).sum(2, keepdim=True) / real.sum(2, keepdim=True).clamp(min=1.0)  # (B, h, 1, d_k)
    return mean.expand_as(ctx)


def edit_weights(plan: HeadPlan, weights: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """Uniform heads' softmax rows replaced by 1/T_k over the allowed keys (recorded path)."""
    heads = plan.uniform_heads
    if not heads:
        return weights
    weights = weights.clone()
    weights[:, heads] = uniform_weights(mask, tuple(weights.shape), weights.device).to(weights.dtype)
    return weights


def edit_context(plan: HeadPlan, ctx: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None,
                 causal_queries: bool, weights_edited: bool) -> torch.Tensor:
    """The per-head context (B, h, T_q, d_k) with the plan applied; `weights_edited`: the
    uniform heads' weights were already replaced (the recorded path), so ctx holds them."""
    ctx = ctx.clone()
    B, h, T_q, _ = ctx.shape
    for head, op in sorted(plan.ops.items()):
        if op == "zero":
            ctx[:, head] = 0.0
        elif op == "mean":
            ctx[:, head] = positional_mean(ctx[:, head:head + 1], mask, causal_queries)[:, 0]
        elif op == "uniform" and not weights_edited:
            uniform = uniform_weights(mask, (B, 1, T_q, v.size(2)), v.device).to(v.dtype)[:, 0]  # (B, T_q, T_k)
            ctx[:, head] = uniform @ v[:, head]  # (B, T_q, d_k)
    if plan.gate is not None:
        ctx = ctx * plan.gate.to(ctx.dtype)[None, :, None, None]  # ξ_h · head_h
    return ctx
