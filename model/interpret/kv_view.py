"""What the KV-cache panel draws at generation step t, without Qt: one KV head's cached keys and
values (positions 0 … t in the cache), one colour scale for both, and the query heads sharing that
head (GQA's group) reading the cache at t."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from model.interpret.input_texts import printable


@dataclass(frozen=True)
class CacheView:
    keys: np.ndarray  # (T, d_k): the KV head's keys over the whole recorded sequence
    values: np.ndarray  # (T, d_k)
    bound: float  # K and V share one symmetric colour scale, ±bound
    cached: np.ndarray  # bool (T,): the positions in the cache at step t
    heads: list[int]  # the query heads that read this KV head
    reads: np.ndarray  # (len(heads), T): their attention weights at query position t
    rows: list[str]  # each position's label, "i token"
    token: str  # the query's token at t


def cache_view(keys: np.ndarray, values: np.ndarray, weights: np.ndarray, pieces: list[str], kv_head: int,
               t: int) -> CacheView:
    """K, V (kv_heads, T, d_k) and weights (n_heads, T, T) of one layer (`cached_tensors`), seen
    from KV head `kv_head` at query position t. Query head h reads KV head h // (n_heads / kv_heads)."""
    total = keys.shape[1]
    group = weights.shape[0] // keys.shape[0]
    heads = list(range(kv_head * group, (kv_head + 1) * group))
    bound = float(max(np.abs(keys[kv_head]).max(), np.abs(values[kv_head]).max())) or 1.0
    return CacheView(keys[kv_head], values[kv_head], bound, np.arange(total) <= t, heads, weights[heads, t, :],
                     [f"{i} {printable(p)}" for i, p in enumerate(pieces[:total])],
                     printable(pieces[t]) if t < len(pieces) else "")
