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

from dataclasses import dataclass

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
        return None if self._keys is None else self._keys.narrow(2, 0, self.length)

    @property
    def values(self) -> torch.Tensor | None:
        return None if self._values is None else self._values.narrow(2, 0, self.length)

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
        self._keys.narrow(2, self.length, k.size(2)).copy_(k)  # this step's positions, written in place
        self._values.narrow(2, self.length, v.size(2)).copy_(v)
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


def cached_tensors(trace, layer: int):
    """(K, V, weights) of a decoder layer's self-attention: K, V (kv_heads, T, d_k) as cached
    (keys after rotation for a rotary model), weights (n_heads, T, T)."""
    base = f"decoder.layers.{layer}.self_attn."
    k = trace[base + "k_rot"] if base + "k_rot" in trace else trace[base + "k"]
    return k.tensor[0].float().numpy(), trace[base + "v"].tensor[0].float().numpy(), \
        trace.attention("decoder_self", layer)[0].float().numpy()


def describe_cache(config, dtype: torch.dtype, cached: int) -> str:
    """The cache's memory in words (HTML), per token, for `cached` tokens, at full context, against MHA."""
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


def cache_note(name: str, config) -> str:
    """What a decoder-only model's cache keeps, and how its query heads share key/value heads."""
    kv, heads = config.kv_heads, config.n_heads
    gqa = (f"{heads} query heads share {kv} key/value head{'s' if kv > 1 else ''} (GQA)" if kv < heads
           else f"no GQA: each of the {heads} query heads has its own key/value head")
    return (f"Each new token needs the keys and values of every earlier position, in every layer: the cache keeps "
            f"them (hatched: not cached yet). {name}: {gqa}.")


def reads_title(t: int, n_prompt: int, token: str) -> str:
    """The title over position t's query reading the cache: generation steps count from 1 at the
    prompt's last position (<bos> is position 0)."""
    where = "prompt" if t <= n_prompt else "generated"
    generating = f"Generation step {t - n_prompt + 1}: " if t >= n_prompt else ""
    return f"{generating}pos {t}, “{token}” ({where}): its query reads the {t + 1} cached keys"


__all__ = ["CacheBudget", "KVCache", "LayerCache", "budget", "cache_bytes_per_token", "cache_note", "cached_tensors",
           "describe_cache", "human", "reads_title"]
