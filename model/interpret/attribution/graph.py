"""Attention rollout and attention flow (Abnar & Zuidema, "Quantifying Attention Flow in
Transformers", ACL 2020), on head-averaged attention matrices as numpy arrays.

Both treat a layer's residual connection as half of what a token passes on:
Â = 0.5·A + 0.5·I, rows renormalised (each row of A already sums to 1, so this only matters
when a row is all zero). Rollout multiplies these matrices down the layers; flow reads them
as edge capacities of a layered graph and asks how much can flow from the output token to
each input token (a max-flow, computed with networkx).

The encoder-decoder (Figure 1) needs one more rule, which the paper does not give (it treats
encoders only). Here a decoder layer is two mixing steps, one per attention sublayer, each
with its residual taking half:

* masked self-attention mixes target positions: Â_self = 0.5·A_self + 0.5·I;
* encoder-decoder attention keeps half on the target position (the residual) and sends
  half into the encoder's output through the cross-attention row C[t], which the encoder's
  own rollout R_enc then carries down to the source tokens.

So a target position's relevance is a row over (target tokens, source tokens) that always
sums to 1; its source part is what `encoder_decoder_rollout` returns. Flow uses the same
edges as capacities (`encoder_decoder_flow_graph`). Feed-forward sublayers mix nothing
across positions and are left out, as in the paper.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # networkx is imported when a flow is computed: the app starts without it
    import networkx as nx


def residual_attention(attention: np.ndarray) -> np.ndarray:
    """Â = 0.5·A + 0.5·I with rows renormalised; attention (T_q, T_k) square, one layer, heads averaged."""
    a = np.asarray(attention, dtype=np.float64)
    mixed = 0.5 * a + 0.5 * np.eye(a.shape[0], a.shape[1])
    return mixed / mixed.sum(axis=-1, keepdims=True)


def rollout(layers: list[np.ndarray]) -> np.ndarray:
    """Attention rollout: Â_L · … · Â_2 · Â_1 for the layers' attention (first layer first).

    Row i says how much of the top layer's position i comes from each input position."""
    joint = np.eye(layers[0].shape[0])
    for attention in layers:
        joint = residual_attention(attention) @ joint
    return joint


def encoder_decoder_rollout(encoder: list[np.ndarray], decoder_self: list[np.ndarray],
                            cross: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Rollout through Figure 1's two stacks (the rule in the module docstring).

    Returns (to_target (T, T), to_source (T, S)): for each decoder position, the share of its
    top-layer state that comes from each target input token and from each source token; the
    two together sum to 1 on every row."""
    to_memory = rollout(encoder)  # (S, S): encoder output → source tokens
    T = decoder_self[0].shape[0]
    to_target, to_source = np.eye(T), np.zeros((T, to_memory.shape[1]))
    for self_attention, cross_attention in zip(decoder_self, cross):
        mix = residual_attention(self_attention)  # (T, T)
        to_target, to_source = mix @ to_target, mix @ to_source
        c = np.asarray(cross_attention, dtype=np.float64)  # (T, S)
        to_target, to_source = 0.5 * to_target, 0.5 * to_source + 0.5 * c @ to_memory
    return to_target, to_source


# -- flow: the same matrices as capacities of a layered graph ----------------------------------
def stack_flow_graph(layers: list[np.ndarray], prefix: str = "x") -> nx.DiGraph:
    """Nodes (prefix, layer, position), layer 0 = the token embeddings; an edge from each
    position of layer l+1 to each position of layer l with capacity Â_l[i, j] (residual
    attention), pointing downwards so flow runs from an output to the inputs."""
    import networkx as nx
    graph = nx.DiGraph()
    for l, attention in enumerate(layers):
        mix = residual_attention(attention)
        for i, j in zip(*np.nonzero(mix)):
            graph.add_edge((prefix, l + 1, int(i)), (prefix, l, int(j)), capacity=float(mix[i, j]))
    return graph


def encoder_decoder_flow_graph(encoder: list[np.ndarray], decoder_self: list[np.ndarray],
                               cross: list[np.ndarray]) -> nx.DiGraph:
    """The encoder's graph ("src", l, j) joined to the decoder's: each decoder layer is a
    self-attention level ("tgt", l, "self", t) and an output level ("tgt", l, t); the output
    level sends 0.5 to its own position (residual) and 0.5·C[t, s] to the encoder's top
    position s. Decoder layer 0's input level is ("tgt", 0, t)."""
    graph = stack_flow_graph(encoder, "src")
    top = len(encoder)
    for l, (self_attention, cross_attention) in enumerate(zip(decoder_self, cross)):
        mix = residual_attention(self_attention)
        for i, j in zip(*np.nonzero(mix)):
            graph.add_edge(("tgt", l + 1, "self", int(i)), ("tgt", l, int(j)), capacity=float(mix[i, j]))
        c = np.asarray(cross_attention, dtype=np.float64)
        for t in range(c.shape[0]):
            graph.add_edge(("tgt", l + 1, t), ("tgt", l + 1, "self", t), capacity=0.5)
            for s in np.nonzero(c[t])[0]:
                graph.add_edge(("tgt", l + 1, t), ("src", top, int(s)), capacity=0.5 * float(c[t, s]))
    return graph


def max_flows(graph: nx.DiGraph, source, sinks: list) -> np.ndarray:
    """The max-flow value from `source` to each sink in turn (Abnar & Zuidema compute one
    flow per input token, with the same preflow-push algorithm)."""
    import networkx as nx
    from networkx.algorithms.flow import preflow_push
    values = []
    for sink in sinks:
        if sink not in graph or source not in graph or not nx.has_path(graph, source, sink):
            values.append(0.0)
        else:
            values.append(nx.maximum_flow_value(graph, source, sink, flow_func=preflow_push))
    return np.asarray(values, dtype=np.float64)
