"""Maps derived from the recorded attention — not tensors the model computes itself.

* mean over heads: what a layer does on average (the heads' outputs are concatenated, not
  averaged, in Section 3.2.2 — so this is a summary for people, not part of the model);
* attention rollout (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers"):
  the residual connection is modelled as 0.5·A + 0.5·I, rows renormalised, and the layers
  multiplied, giving how much each output position draws on each input token overall.
  Rollout chains layers over the *same* tokens, so it is only defined for self-attention.
"""
from __future__ import annotations

import numpy as np

ROLLOUT_KINDS = ("encoder", "decoder_self")

ROLLOUT_UNDEFINED = (
    "Rollout is defined for self-attention only.\n\n"
    "It multiplies one layer's (tokens × tokens) map by the next, following information up "
    "through the residual stream. Cross-attention maps target positions to the encoder's "
    "output, and every decoder layer looks at the same encoder output, so cross maps of "
    "successive layers do not chain. Use the mean over heads instead."
)


def mean_over_heads(weights: np.ndarray) -> np.ndarray:
    """(h, T_q, T_k) → (T_q, T_k): the average head of one layer (rows still sum to 1)."""
    return weights.mean(axis=0, dtype=np.float64).astype(np.float32)


def rollout(weights: np.ndarray, upto: int | None = None) -> np.ndarray:
    """(L, h, T, T) → (T, T): Ã_l = rownorm(0.5·mean_h(A_l) + 0.5·I); R = Ã_upto ⋯ Ã_1 Ã_0.

    Row i of the result is the share of each input token in output position i after layer
    `upto` (default: the last layer). Rows sum to 1.
    """
    L, _, T, Tk = weights.shape
    if Tk != T:
        raise ValueError(f"rollout needs square self-attention maps, got {T}×{Tk}")
    upto = L - 1 if upto is None else int(upto)
    eye = np.eye(T)
    result = eye
    for layer in range(upto + 1):
        a = 0.5 * weights[layer].mean(axis=0, dtype=np.float64) + 0.5 * eye  # (T, T)
        a = a / a.sum(axis=-1, keepdims=True)
        result = a @ result  # later layers act on what earlier layers already mixed
    return result.astype(np.float32)
