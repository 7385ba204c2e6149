"""The numbers behind the positional-encoding panel (Sections 3.4–3.5), without Qt.

Sinusoids: the table comes from the model's own `get_positional_encoding`, so the panel shows
exactly what the model adds; the tests check it against `math.sin`/`math.cos` independently.
The linear-shift property the paper cites ("for any fixed offset k, PE_{pos+k} can be
represented as a linear function of PE_pos") is made concrete by `rotation`: each (sin, cos)
pair of frequency ω is rotated by the angle ω·k, independent of pos. `layout` is where a pair
lives: "interleaved" (the paper, and our models: sin in dim 2i, cos in dim 2i+1) or "halves"
(Marian/opus-mt: sin in dim i, cos in dim d/2 + i). The values are the same; only the columns differ.

Rotary positions beside them: `turns` is how far each 2-D pair of a head vector has turned at
each position (m·θ_i, in turns); `offset_scores` the attention score of one query and one key
of the model itself, placed at positions m and n, for several n at each offset m − n. With
rotary positions each row (one offset) holds one value, whatever n is: q_m·k_n depends on
m − n only. With the paper's added sinusoids the same vectors, fed through the model's first
attention layer, score differently along a row: the absolute position leaks into the score.

`embedding_terms` and `layer_norm`: what a forward pass adds up before layer 1, and BERT's
LayerNorm after the sum, recomputed from its formula.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from model.nn.positional import apply_rope, get_positional_encoding, rope_angles, wavelengths

LAYOUTS = ("interleaved", "halves")


def pair_columns(d_model: int, layout: str = "interleaved") -> tuple[np.ndarray, np.ndarray]:
    """(sin dims, cos dims) of every pair i, in the table's own columns."""
    if layout == "halves":
        half = d_model // 2
        return np.arange(half), np.arange(half, 2 * half)
    if layout != "interleaved":
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    return np.arange(0, d_model, 2), np.arange(1, d_model, 2)


def pair_dims(d_model: int, i: int, layout: str = "interleaved") -> tuple[int, int]:
    """(sin dim, cos dim) of pair i: (2i, 2i+1) in the paper's layout, (i, d/2 + i) in Marian's."""
    return (i, d_model // 2 + i) if layout == "halves" else (2 * i, 2 * i + 1)


def sinusoid_table(d_model: int, length: int, layout: str = "interleaved") -> np.ndarray:
    """(length, d_model) float32: PE(pos, 2i) = sin(pos/10000^(2i/d)), PE(pos, 2i+1) = cos(…)
    (layout "halves": the sines in the first d/2 dims, the cosines in the second)."""
    return get_positional_encoding(d_model, length, layout=layout).numpy()


def pair_wavelength(d_model: int, i: int) -> float:
    """Wavelength of pair i (dims 2i and 2i+1): 2π·10000^(2i/d_model), from 2π up to 10000·2π."""
    return float(wavelengths(d_model)[2 * i])


def frequencies(d_model: int) -> np.ndarray:
    """ω_i = 1 / 10000^(2i/d_model) for each pair i (d_model/2 values)."""
    two_i = np.arange(0, d_model, 2, dtype=np.float64)
    return 1.0 / np.power(10000.0, two_i / d_model)


def rotation(d_model: int, k: int, layout: str = "interleaved") -> np.ndarray:
    """M_k (d_model × d_model), block diagonal, such that PE(pos + k) = M_k · PE(pos) for every pos.

    sin(ω(p+k)) =  cos(ωk)·sin(ωp) + sin(ωk)·cos(ωp)
    cos(ω(p+k)) = −sin(ωk)·sin(ωp) + cos(ωk)·cos(ωp)
    (in the "halves" layout the same 2×2 blocks act on dims i and d/2 + i).
    """
    m = np.zeros((d_model, d_model))
    sin_dims, cos_dims = pair_columns(d_model, layout)
    for w, a, b in zip(frequencies(d_model), sin_dims, cos_dims):
        c, s = np.cos(w * k), np.sin(w * k)
        m[a, a], m[a, b], m[b, a], m[b, b] = c, s, -s, c
    return m


def rotate(rows: np.ndarray, k: int, layout: str = "interleaved") -> np.ndarray:
    """M_k · PE for each row of `rows` (N, d_model), pair by pair — O(N·d) instead of a d × d product."""
    d_model = rows.shape[-1]
    w = frequencies(d_model) * k
    c, s = np.cos(w), np.sin(w)
    sin_dims, cos_dims = pair_columns(d_model, layout)
    sin_part, cos_part = rows[..., sin_dims].astype(np.float64), rows[..., cos_dims].astype(np.float64)
    out = np.empty(rows.shape, dtype=np.float64)
    out[..., sin_dims] = c * sin_part + s * cos_part
    out[..., cos_dims] = -s * sin_part + c * cos_part
    return out


def shift_error(table: np.ndarray, k: int, layout: str = "interleaved") -> float:
    """max over pos and dims of |M_k·PE(pos) − PE(pos+k)| for a sinusoid table (float32 rounding only)."""
    length = table.shape[0]
    if k >= length:
        return float("nan")
    return float(np.abs(rotate(table[: length - k], k, layout) - table[k:]).max())


def symmetric_levels(*arrays: np.ndarray) -> tuple[float, float]:
    """(−m, m) with m the largest |value| (1 for none), so white is exactly 0 on a diverging map."""
    m = max((float(np.abs(a).max()) for a in arrays if a.size), default=0.0)
    return (-m, m) if m > 0 else (-1.0, 1.0)


def similarity(table: np.ndarray) -> np.ndarray:
    """(L, L) dot products PE(p)·PE(q); for sinusoids = Σ_i cos(ω_i (p − q)), largest near the diagonal."""
    t = np.ascontiguousarray(table, dtype=np.float32)  # float32: a 1024 × 2048 table stays well under a second
    return t @ t.T


def default_pairs(d_model: int) -> list[int]:
    """A few pairs spread over the spectrum: the fastest waves and some slower ones."""
    half = d_model // 2
    return sorted({i for i in (0, half // 8, half // 2) if 0 <= i < half})


def sinusoid_curve(d_model: int, dim: int, positions: np.ndarray, layout: str = "interleaved") -> np.ndarray:
    """PE(pos, dim) at any (also fractional) positions: the smooth wave the integer samples lie on."""
    if layout == "halves":
        half = d_model // 2
        i, is_sin = (dim, True) if dim < half else (dim - half, False)
    else:
        i, is_sin = dim // 2, dim % 2 == 0
    w = 1.0 / np.power(10000.0, 2 * i / d_model)
    return np.sin(positions * w) if is_sin else np.cos(positions * w)


def pair_layout(bundle) -> str:
    """Where a loaded model (None: the paper) keeps each (sin, cos) pair: "halves" for Marian."""
    halves = bundle is not None and bundle.config.positional == "sinusoidal_halves"
    return "halves" if halves else "interleaved"


def positional_table(bundle, d_model: int, length: int, learned: bool = True) -> tuple[np.ndarray, str, str]:
    """(table, source, description) of `length` positions × `d_model`: the loaded model's own
    values whenever it has that size — its learned table (`learned`, for a model that learns
    its positions: source "learned") or its sinusoid buffer ("model") — else the formula."""
    layout = pair_layout(bundle)
    halves_note = (" in Marian's layout: sin(pos/10000^(2i/d)) in dim i, cos(…) in dim d/2 + i "
                   "(the paper's values, columns regrouped)") if layout == "halves" else ""
    if bundle is None:
        return sinusoid_table(d_model, length), "formula", f"The paper's formula for d_model = {d_model} (no model loaded)"
    cfg = bundle.config
    table = bundle.model.positional.table.detach().cpu().numpy()
    if cfg.positional == "learned" and learned:
        note = f" (the model has {table.shape[0]} positions)" if length > table.shape[0] else ""
        return table[:length].copy(), "learned", (f"LEARNED positional embeddings of the loaded model "
                                                  f"(Table 3 row E), d_model = {cfg.d_model}{note}")
    if cfg.positional in ("sinusoidal", "sinusoidal_halves") and d_model == cfg.d_model and length <= table.shape[0]:
        return table[:length].copy(), "model", f"The loaded model's sinusoidal buffer, d_model = {d_model}{halves_note}"
    why = (f"the loaded model has d_model = {cfg.d_model}, max_len = {cfg.max_len}"
           + (", learned positions" if cfg.positional == "learned" else ""))
    whose = "The model's formula" if layout == "halves" else "The paper's formula"
    return sinusoid_table(d_model, length, layout), "formula", f"{whose} for d_model = {d_model}{halves_note} ({why})"


def table_titles(source: str, layout: str, length: int, d_model: int) -> tuple[str, str]:
    """(the formula line over the waves, the maps' title) of a table from `positional_table`."""
    if source == "learned":
        formula = "Learned positional embedding"
    else:
        where = ("PE(pos, i)", "PE(pos, d/2+i)") if layout == "halves" else ("PE(pos, 2i)", "PE(pos, 2i+1)")
        formula = f"{where[0]} = sin(pos/10000^(2i/d)) · {where[1]} = cos(…)"
    title = (f"{'Learned P' if source == 'learned' else 'P'}ositional encoding: {length} positions × d_model = "
             f"{d_model}" + (" (sin dims, then cos dims)" if layout == "halves" else ""))
    return formula, title


def shift_texts(learned: bool, pos: int, k: int, length: int, d_model: int, layout: str,
                error: float | None) -> tuple[str, str]:
    """(title, explanation) of the linear-shift plot: PE(pos+k) against M_k·PE(pos) and its
    largest error over every position, or why there is no such rotation (`error` None)."""
    if error is None:
        why = ("Learned embeddings have no built-in M_k: the linear-shift property of Section 3.5 is a property of "
               "the sinusoids." if learned else "Increase the number of positions to try an offset.")
        return "Shift by k: a rotation exists for sinusoids only", why
    where = " (dims i and d/2 + i in this model)" if layout == "halves" else ""
    return (f"PE({pos} + {k}) and M_{k} · PE({pos}) coincide",
            f"M_k rotates each (sin, cos) pair{where} by the angle ω_i·k, whatever pos is.  "
            f"max |M_{k}·PE(pos) − PE(pos+{k})| over all {length - k} positions × {d_model} dims = "
            f"{error:.1e} (float32 rounding): PE(pos+k) is a linear function of PE(pos).")


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

    @property
    def verdict(self) -> str:
        """What the rows show (rich text): one number per offset with RoPE, not with added sinusoids."""
        if self.rotary:
            return (f"Along each row (one m − n) the score varies by at most <b>{self.spread_within:.1e}</b> "
                    f"(float rounding); between offsets by {self.spread_between:.3f}: <b>only m − n matters</b>.")
        return (f"Along each row (one m − n) the score varies by <b>{self.spread_within:.3f}</b>: with added "
                "sinusoids the absolute positions enter the score too (RoPE would give one number per row).")


def rope_note(name: str, positional: str, d_k: int) -> str:
    """What the RoPE tab shows for a model named `name` with `positional` positions."""
    if positional == "rope":
        return (f"{name} uses rotary positions (RoPE): nothing is added to the embedding; each layer turns every "
                "pair (2i, 2i+1) of q and k by m·θ_i, the sinusoids' angles. A score then sees only the distance m − n.")
    return (f"{name} adds the paper's positions to its embeddings ({positional}). Left: the rotations RoPE would "
            f"apply to its d_k = {d_k} head vectors (the same angles as the sinusoids). Right: the model's own "
            "scores, which depend on where the tokens are, not only on their distance.")


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

def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """LayerNorm over the last axis, in float64: (x − mean) / √(var + ε) · γ + β."""
    x = x.astype(np.float64)
    mean = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def embedding_terms(trace, stack: str) -> list[tuple[str, str, str]]:
    """(recorded step, title, short name) of each term of `stack`'s input to layer 1, then the
    sum (and, for a BERT encoder, the LayerNorm after it): E[token] (scaled or not), the
    positions (a rotary model adds none: it turns q and k), BERT's token type."""
    scaled = "√" in trace[f"{stack}.embedding.scaled"].formula
    terms = [(f"{stack}.embedding.scaled", "E[token]·√d_model" if scaled else "E[token] (not scaled)",
              "scaled" if scaled else "E")]
    if f"{stack}.positional" in trace:
        learned = trace[f"{stack}.positional"].formula.startswith("P[pos]")
        terms.append((f"{stack}.positional", "+ P[pos] (learned)" if learned else "+ PE(pos)", "P" if learned else "PE"))
    if f"{stack}.embedding.token_type" in trace:
        terms.append((f"{stack}.embedding.token_type", "+ T[0] (token type)", "T"))
    normed = f"{stack}.input_norm" in trace
    terms.append((f"{stack}.input", "= sum, before the norm" if normed else "= input to layer 1", "input"))
    if normed:
        terms.append((f"{stack}.input_norm", "LayerNorm → layer 1", "LayerNorm"))
    return terms


@dataclass
class EmbeddingSum:
    """What `stack` adds up before layer 1 in one recorded forward: each term's (step, title,
    short name) and values (T, d_model) as recorded, the sum's check and (BERT) the LayerNorm's."""

    terms: list[tuple[str, str, str]]
    arrays: list[np.ndarray]
    error: float = 0.0  # max |Σ addends − recorded sum|
    norm_error: float | None = None  # max |LayerNorm(sum) − recorded input_norm|, with the model's γ, β, ε

    @property
    def normed(self) -> bool:
        return self.terms[-1][0].endswith("input_norm")

    @property
    def addends(self) -> list[np.ndarray]:
        return self.arrays[:-2 if self.normed else -1]

    @property
    def total(self) -> np.ndarray:
        return self.arrays[-2 if self.normed else -1]

    def summary(self, stack: str) -> str:
        """What was recorded and how well the terms add up (and, BERT, how the norm checks)."""
        summed = " + ".join(short for _, _, short in self.terms[:len(self.addends)])
        text = (f"Recorded in this forward pass ({', '.join(name for name, _, _ in self.terms)}); "
                f"max |{summed} − input| = {self.error:.1e}.")
        if self.normed:
            text += (" BERT then normalises the sum: LayerNorm(x) = (x − mean)/√(var + ε)·γ + β over each token's "
                     "d_model values")
            if self.norm_error is not None:
                text += f" (max |LayerNorm(sum) − {stack}.input_norm| = {self.norm_error:.1e} with the model's γ, β)"
            text += "; that, not the sum, enters layer 1. The LayerNorm map has its own colour scale, the others share one."
        else:
            text += f" The same colour scale for all {len(self.arrays)}."
        if not any(name == f"{stack}.positional" for name, _, _ in self.terms):
            text += " Rotary positions add nothing here: each layer turns q and k instead (the RoPE tab)."
        return text


def embedding_sum(trace, stack: str, model=None) -> EmbeddingSum:
    """The terms of `stack`'s input in `trace`, checked: their sum against the recorded sum, and
    (a model with an embedding LayerNorm) the norm recomputed with its own γ, β and ε."""
    terms = embedding_terms(trace, stack)
    tensors = (trace[name].tensor for name, _, _ in terms)
    result = EmbeddingSum(terms, [(t[0] if t.dim() == 3 else t).numpy() for t in tensors])  # (PE: no batch axis)
    result.error = float(np.abs(sum(result.addends) - result.total).max())
    norms = getattr(model, "embed_norm", None)
    if result.normed and norms is not None and stack in norms:
        ln = norms[stack]
        weight, bias = (p.detach().cpu().numpy().astype(np.float64) for p in (ln.weight, ln.bias))
        result.norm_error = float(np.abs(layer_norm(result.total, weight, bias, float(ln.eps)) - result.arrays[-1]).max())
    return result

