"""Rotary positions beside the paper's sinusoids, in numbers (no Qt): the RoPE view's data.

`turns`: how far each 2-D pair of a head vector has turned at each position (m·θ_i, in turns).
`offset_scores`: the attention score of one query and one key of the model itself, placed at
positions m and n, for several n at each offset m − n. With rotary positions each row (one
offset) holds one value, whatever n is: q_m·k_n depends on m − n only. With the paper's added
sinusoids the same vectors, fed through the model's first attention layer, score differently
along a row: the absolute position leaks into the score.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from model.nn.positional import apply_rope, rope_angles

OFFSETS = (0, 1, 2, 4, 8, 16)
STARTS = (0, 5, 20, 60, 200)


def turns(positions: int, d_k: int, base: float) -> torch.Tensor:
    """(positions, d_k/2): the angle m·θ_i of each pair, in turns (fraction of a full circle, mod 1)."""
    return (rope_angles(torch.arange(positions), d_k, base) / (2 * math.pi)) % 1.0


@dataclass(frozen=True)
class OffsetScores:
    """scores[i, j]: query at m = starts[j] + offsets[i], key at n = starts[j]."""

    scores: torch.Tensor
    offsets: tuple[int, ...]
    starts: tuple[int, ...]
    rotary: bool  # True: the model's rotary q and k; False: added sinusoids through its first layer
    query: str  # the tokens whose vectors were used
    key: str
    head: int
    key_at: int = 0  # the key's own position in the input (one of `starts`)

    @property
    def spread_within(self) -> float:
        """The largest difference along one row (one offset): 0 up to rounding for RoPE."""
        return float((self.scores.max(1).values - self.scores.min(1).values).max())

    @property
    def spread_between(self) -> float:
        """How much the rows' first values differ: the offset matters."""
        first = self.scores[:, 0]
        return float(first.max() - first.min())


def _grid(max_len: int, key_at: int = 0) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Offsets and key positions: STARTS that fit, and the key's own position in the input."""
    starts = tuple(sorted({key_at} | {s for s in STARTS if s + max(OFFSETS) < max_len}))
    return tuple(o for o in OFFSETS if max(starts) + o < max_len) or (0,), starts


def rotary_scores(q: torch.Tensor, k: torch.Tensor, base: float, max_len: int, key_at: int = 0,
                  **names) -> OffsetScores:
    """Scores of unrotated q, k (d_k,) rotated to every (m, n) of the grid, / √d_k as in Eq. 1."""
    offsets, starts = _grid(max_len, key_at)
    d_k = q.numel()
    out = torch.empty(len(offsets), len(starts))
    for j, n in enumerate(starts):
        for i, off in enumerate(offsets):
            qm = apply_rope(q.double()[None], torch.tensor([n + off]), base)[0]
            kn = apply_rope(k.double()[None], torch.tensor([n]), base)[0]
            out[i, j] = float(qm @ kn) / math.sqrt(d_k)
    return OffsetScores(out, offsets, starts, True, key_at=key_at, **names)


@torch.no_grad()
def sinusoidal_scores(model, stack: str, token_q: torch.Tensor, token_k: torch.Tensor, *, head: int,
                      key_at: int = 0, **names) -> OffsetScores:
    """The same grid for a model that adds sinusoids: x = embedding + PE[pos], through the first
    layer's (norm and) W^Q, W^K of `head`. `token_q`, `token_k`: scaled token embeddings (d_model,)."""
    table = model.positional.table.detach().double()
    offsets, starts = _grid(table.size(0), key_at)
    layer = getattr(model, stack).layers[0]
    attn = layer.self_attn
    norm = layer.add_norm1.norm if model.config.norm_first else None
    embed_norm = model.embed_norm[stack] if model.embed_norm is not None else None
    d_k = attn.d_k
    kv_head = head // attn.groups

    def project(vector, pos, weight, index):
        x = (vector.double() + table[pos]).float()
        if embed_norm is not None:
            x = embed_norm(x)
        if norm is not None:
            x = norm(x)
        return weight(x).double()[index * d_k:(index + 1) * d_k]

    out = torch.empty(len(offsets), len(starts))
    for j, n in enumerate(starts):
        for i, off in enumerate(offsets):
            q = project(token_q, n + off, attn.w_q, head)
            k = project(token_k, n, attn.w_k, kv_head)
            out[i, j] = float(q @ k) / math.sqrt(d_k)
    return OffsetScores(out, offsets, starts, False, head=head, key_at=key_at, **names)


def model_scores(bundle, result, head: int = 0) -> OffsetScores | None:
    """The grid for the loaded model and its recorded input (a ForwardResult): the last input token as the query,
    the first after <bos> as the key, the first self-attention layer's head `head`; None for a
    model without a self-attention stack in the trace."""
    cfg, trace = bundle.config, result.trace
    stack = "encoder" if cfg.has_encoder else "decoder"
    base = f"{stack}.layers.0.self_attn."
    if base + "q" not in trace:
        return None
    q_all, k_all = trace[base + "q"].tensor[0], trace[base + "k"].tensor[0]  # (h, T, d_k), (kv, T, d_k)
    pieces = trace[base + "q"].tensor.size(2)
    tokens = list(result.src_pieces if stack == "encoder" else result.tgt_pieces)
    tokens += [str(i) for i in range(len(tokens), pieces)]
    first = 1 if stack == "decoder" and pieces > 1 else 0
    last = pieces - 1
    names = {"query": tokens[last], "key": tokens[first], "key_at": first}
    if cfg.positional == "rope":
        groups = cfg.n_heads // cfg.kv_heads
        return rotary_scores(q_all[head, last], k_all[head // groups, first], cfg.rope_base, cfg.max_len,
                             head=head, **names)
    if cfg.positional not in ("sinusoidal", "sinusoidal_halves", "learned"):
        return None
    scaled = trace[f"{stack}.embedding.scaled"].tensor[0]  # (T, d_model)
    return sinusoidal_scores(bundle.model, stack, scaled[last], scaled[first], head=head, **names)


__all__ = ["OFFSETS", "STARTS", "OffsetScores", "model_scores", "rotary_scores", "sinusoidal_scores", "turns"]
