"""Key/value cache: what cached generation (`model.inference.generation`) keeps per layer.

A decoder position's keys and values never change once computed (the mask stops it reading
later tokens), so generation can keep them: each new token then runs the network over one
position instead of the whole prefix — the difference between O(T) and O(T²) work per text.
What the cache costs is memory: per token, 2 (K and V) × layers × kv_heads × d_k numbers;
grouped-query attention (fewer key/value heads) divides exactly that.

The viewers' step-by-step decoding (`model.inference.decoding.decode_steps`) still runs the
whole prefix each step, so what it shows is what the teacher-forced pass computes.
"""
from __future__ import annotations

import torch

from model.nn.config import TransformerConfig
from model.nn.transformer import Transformer


class LayerCache:
    """One layer's keys and values so far, (B, kv_heads, T, d_k) each. Stored in buffers that
    double when full, so a step writes only its own position instead of copying the cache."""

    def __init__(self, capacity: int = 0):
        self._keys: torch.Tensor | None = None
        self._values: torch.Tensor | None = None
        self.length = 0
        self.capacity = capacity  # positions the first buffers hold (more are made room for as needed)

    @property
    def keys(self) -> torch.Tensor | None:
        return None if self._keys is None else self._keys[:, :, :self.length]

    @property
    def values(self) -> torch.Tensor | None:
        return None if self._values is None else self._values[:, :, :self.length]

    def append(self, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Add the new positions' keys and values (already rotated, for RoPE); return all of them."""
        end = self.length + k.size(2)
        if self._keys is None or end > self._keys.size(2):
            capacity = max(end, 2 * (self._keys.size(2) if self._keys is not None else 0), 16, self.capacity)
            keys = k.new_empty(k.size(0), k.size(1), capacity, k.size(3))
            values = v.new_empty(v.size(0), v.size(1), capacity, v.size(3))
            if self.length:
                keys[:, :, :self.length] = self.keys
                values[:, :, :self.length] = self.values
            self._keys, self._values = keys, values
        self._keys[:, :, self.length:end] = k
        self._values[:, :, self.length:end] = v
        self.length = end
        return self.keys, self.values

    def truncate(self, length: int) -> None:
        """Forget the positions from `length` on (the buffers stay, to be written again)."""
        self.length = min(self.length, length)


class KVCache:
    """Every decoder layer's `LayerCache`, plus the ids they hold (for the padding mask).

    >>> cache = KVCache(model)
    >>> logits = model.project(model.decode(None, None, prompt, cache=cache))  # the prompt, once
    >>> logits = model.project(model.decode(None, None, next_id, cache=cache))  # then one token a step
    """

    def __init__(self, model: Transformer, capacity: int = 0):
        """`capacity`: the positions to make room for at once (a known length: no buffer is then
        made, or copied, while decoding)."""
        cfg = model.config
        if not cfg.model_kind.has_decoder:
            raise ValueError("a key/value cache serves a decoder; this model is encoder-only")
        self.layers = [LayerCache(capacity) for _ in range(cfg.n_decoder_layers)]
        self.ids: torch.Tensor | None = None  # (B, length): what the cached positions hold

    def layer(self, i: int) -> LayerCache:
        return self.layers[i]

    @property
    def length(self) -> int:
        """How many positions are cached (the position the next token will take)."""
        return self.layers[0].length

    def truncate(self, length: int) -> None:
        """Forget the positions from `length` on: the cache then holds what it held when it was
        `length` long, and the next forward continues from there (run some tokens again, say
        recorded this time)."""
        if not 0 <= length <= self.length:
            raise ValueError(f"a cache of {self.length} positions cannot be cut to {length}")
        for layer in self.layers:
            layer.truncate(length)
        if self.ids is not None:
            self.ids = self.ids[:, :length]

    def nbytes(self) -> int:
        """Memory the cached keys and values take."""
        return sum(t.numel() * t.element_size() for c in self.layers for t in (c.keys, c.values) if t is not None)


def cache_bytes_per_token(config: TransformerConfig, dtype: torch.dtype = torch.float32,
                          full_attention: bool = False) -> int:
    """Bytes the cache grows by per token: 2 (K, V) × layers × kv_heads × d_k × element size.

    `full_attention=True`: the same for one key/value head per query head (plain multi-head
    attention), to compare with what grouped-query attention saves.
    """
    heads = config.n_heads if full_attention else config.kv_heads
    size = torch.empty((), dtype=dtype).element_size()
    return 2 * config.n_decoder_layers * heads * config.d_k * size


__all__ = ["KVCache", "LayerCache", "cache_bytes_per_token"]
