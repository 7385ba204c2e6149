"""Head surgery as hooks (model.nn.hooks) on an attention module's "weights" and "context" sites.

`model.interpret.interventions` validates which heads to edit and sets these hooks; like every
hook they are private to the thread that set them, so a GUI worker computing an ablated frame
never changes what a training thread computes with the same modules.

Where the edits act (Section 3.2.2): "uniform" replaces a head's softmax rows (the "weights"
site, so the weights a recording shows are the edited ones); "zero", "mean" and the gate act
on head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V), the per-head context (B, h, T_q, d_k)
*before* Concat(head_1..head_h) W^O (the "context" site), so a zeroed head is exactly its
slice of the concatenation set to 0.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from model.nn.hooks import HookFn, Site

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


def weights_hook(plan: HeadPlan) -> HookFn:
    """The "weights" site: each uniform head's softmax rows become 1/T_k over the allowed keys."""
    heads = plan.uniform_heads

    def edit(weights: torch.Tensor, where: Site) -> torch.Tensor:
        weights = weights.clone()
        weights[:, heads] = uniform_weights(where.mask, tuple(weights.shape), weights.device).to(weights.dtype)
        return weights

    return edit


def context_hook(plan: HeadPlan) -> HookFn:
    """The "context" site (B, h, T_q, d_k): zeroed and mean-replaced heads, then the gate ξ."""
    def edit(ctx: torch.Tensor, where: Site) -> torch.Tensor:
        causal = where.module.q_axis == "tgt"  # decoder queries: a running mean, never the future
        ctx = ctx.clone()
        for head, op in sorted(plan.ops.items()):
            if op == "zero":
                ctx[:, head] = 0.0
            elif op == "mean":
                ctx[:, head] = positional_mean(ctx[:, head:head + 1], where.mask, causal)[:, 0]
        if plan.gate is not None:
            ctx = ctx * plan.gate.to(ctx.dtype)[None, :, None, None]  # ξ_h · head_h
        return ctx

    return edit


def plan_hooks(module_name: str, plan: HeadPlan) -> dict[str, HookFn]:
    """The hooks that carry out `plan` on the attention module at `module_name`."""
    fns = {}
    if plan.uniform_heads:
        fns[f"{module_name}.weights"] = weights_hook(plan)
    if plan.gate is not None or any(op != "uniform" for op in plan.ops.values()):
        fns[f"{module_name}.context"] = context_hook(plan)
    return fns
