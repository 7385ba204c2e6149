"""The key/value cache's size in words and numbers, without Qt (the KV-cache panel's text).

Each generated token leaves, in every decoder layer, one key and one value vector per
key/value head: 2 · layers · kv_heads · d_k numbers. Grouped-query attention (GQA) shares each
key/value head among n_heads / kv_heads query heads, so the cache is that many times smaller
than full multi-head attention's.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from model.inference.kv_cache import cache_bytes_per_token


@dataclass(frozen=True)
class CacheBudget:
    """The cache of one model in one dtype: per token, with full multi-head attention, and the ratio."""

    per_token: int
    full_mha_per_token: int  # the same model with n_heads key/value heads
    context: int  # tokens the model reads at most (max_len)
    groups: int  # query heads per key/value head (1: no GQA)

    def at(self, tokens: int) -> int:
        return tokens * self.per_token


def budget(config, dtype: torch.dtype) -> CacheBudget:
    return CacheBudget(cache_bytes_per_token(config, dtype), cache_bytes_per_token(config, dtype, full_attention=True),
                       config.max_len, config.n_heads // config.kv_heads)


def human(n: float) -> str:
    """Bytes as a person reads them: 1,536 B → 1.5 KiB."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:,.1f} GiB"


def describe(config, dtype: torch.dtype, cached: int) -> str:
    """The panel's memory paragraph (HTML) for a cache holding `cached` tokens."""
    b = budget(config, dtype)
    name = str(dtype).removeprefix("torch.")
    per = (f"2 (K, V) × {config.n_decoder_layers} layers × {config.kv_heads} KV heads × {config.d_k} (d_k) × "
           f"{torch.empty((), dtype=dtype).element_size()} B ({name})")
    lines = [f"<b>Per token</b>: {per} = <b>{human(b.per_token)}</b>",
             f"<b>Now</b>, {cached} tokens: <b>{human(b.at(cached))}</b> · full context ({b.context:,}): "
             f"{human(b.at(b.context))}"]
    if b.groups > 1:
        saved = b.full_mha_per_token - b.per_token
        lines.append(f"<b>GQA</b>, {config.n_heads} query heads on {config.kv_heads} KV heads: full multi-head "
                     f"attention would cache {human(b.full_mha_per_token)} a token "
                     f"({human(b.full_mha_per_token * b.context)} at full context); GQA saves {human(saved)} a token, "
                     f"{saved / b.full_mha_per_token:.0%}.")
    else:
        lines.append(f"<b>No GQA</b>: each of the {config.n_heads} query heads has its own key/value head "
                     "(the paper's multi-head attention), so nothing is shared.")
    return "<br>".join(lines)


__all__ = ["CacheBudget", "budget", "describe", "human"]
