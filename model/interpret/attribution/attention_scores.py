"""The attention-based scores: raw attention (last layer, mean of heads, or one head), rollout
and flow, all read from one recorded forward pass of the problem's ids.

Which attention is "raw attention" depends on the kind: the last decoder layer's
cross-attention row for the paper's encoder-decoder (the one sublayer that reads the source),
the last layer's self-attention row otherwise (a decoder-only model's restricted to the prompt).
"""
from __future__ import annotations

import operator

import numpy as np
import torch

from model.interpret.attribution.graph import (
    encoder_decoder_flow_graph,
    encoder_decoder_rollout,
    max_flows,
    rollout,
    stack_flow_graph,
)
from model.interpret.attribution.problem import AttributionProblem
from model.nn.hooks import Trace, record


@torch.no_grad()
def record_attention(problem: AttributionProblem) -> dict[str, list[np.ndarray]]:
    """Per-head weights (h, T_q, T_k) of every attention sublayer, by kind, first layer first."""
    with record(problem.bundle.model) as trace:
        problem.logits(problem.attributed_ids)
    return {kind: _layers(trace, kind) for kind in problem.kind.attention_kinds}


def _layers(trace: Trace, kind: str) -> list[np.ndarray]:
    return [trace.attention(kind, l)[0].double().cpu().numpy() for l in range(trace.n_layers(kind))]


def _raw_kind(problem: AttributionProblem) -> str:
    kind = problem.kind
    return "cross" if kind.has_cross_attention else "decoder_self" if kind.has_decoder else "encoder"


def raw_attention(problem: AttributionProblem, heads: dict[str, list[np.ndarray]],
                  head: tuple[int, int] | None = None) -> np.ndarray:
    """The attention row of the explained position over the scored tokens: the last layer's
    mean over heads, or head `head = (layer, head)` (negative indices count from the end)."""
    layers = heads[_raw_kind(problem)]
    if head is None:
        weights = layers[-1].mean(axis=0)  # (T_q, T_k)
    else:
        layer, h = head
        weights = layers[layer][h]
    a, b = problem.span
    return weights[problem.row, a:b].copy()


def check_head(problem: AttributionProblem, heads: dict[str, list[np.ndarray]], head) -> tuple[int, int]:
    """`head` as (layer, head) ints inside the explained attention's stack (negative indices count
    from the end), or InputError naming what this model has."""
    from model.inference.bundle import InputError

    layers = heads[_raw_kind(problem)]
    n_layers, n_heads = len(layers), layers[0].shape[0]
    try:
        layer, h = (operator.index(v) for v in head)
    except (TypeError, ValueError):
        raise InputError(f"head must be a pair of integers (layer, head), got {head!r}") from None
    if not (-n_layers <= layer < n_layers and -n_heads <= h < n_heads):
        raise InputError(f"There is no head {(layer, h)}: this model's {_raw_kind(problem)} attention has "
                         f"{n_layers} layers (0 … {n_layers - 1}) of {n_heads} heads (0 … {n_heads - 1}).")
    return layer, h


def head_label(problem: AttributionProblem, heads: dict[str, list[np.ndarray]], head: tuple[int, int]) -> str:
    """"layer 2, head 3" (1-based, as the attention panel counts) for a possibly negative index."""
    layers = heads[_raw_kind(problem)]
    layer = head[0] % len(layers)
    return f"layer {layer + 1}, head {head[1] % layers[layer].shape[0] + 1}"


def _means(heads: dict[str, list[np.ndarray]], kind: str) -> list[np.ndarray]:
    return [w.mean(axis=0) for w in heads[kind]]


def attention_rollout(problem: AttributionProblem, heads: dict[str, list[np.ndarray]]) -> np.ndarray:
    """Rollout (Abnar & Zuidema) of the explained position onto the scored tokens."""
    a, b = problem.span
    if problem.kind.has_cross_attention:
        _, to_source = encoder_decoder_rollout(_means(heads, "encoder"), _means(heads, "decoder_self"),
                                               _means(heads, "cross"))
        return to_source[problem.row, a:b]
    kind = "encoder" if problem.kind.has_encoder else "decoder_self"
    return rollout(_means(heads, kind))[problem.row, a:b]


def attention_flow(problem: AttributionProblem, heads: dict[str, list[np.ndarray]]) -> np.ndarray:
    """Flow (Abnar & Zuidema): the max-flow from the explained position's top-layer node to
    each scored token's embedding node, capacities = residual attention. Raw flow values
    (the paper then divides by their sum over the inputs, which keeps their order)."""
    a, b = problem.span
    if problem.kind.has_cross_attention:
        graph = encoder_decoder_flow_graph(_means(heads, "encoder"), _means(heads, "decoder_self"),
                                           _means(heads, "cross"))
        top = ("tgt", len(heads["cross"]), problem.row)
        return max_flows(graph, top, [("src", 0, j) for j in range(a, b)])
    kind = "encoder" if problem.kind.has_encoder else "decoder_self"
    graph = stack_flow_graph(_means(heads, kind))
    return max_flows(graph, ("x", len(heads[kind]), problem.row), [("x", 0, j) for j in range(a, b)])
