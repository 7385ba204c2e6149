"""Every attention map of one forward pass as numpy, ready to draw, and the maps derived from them.

A recorded `Trace` is turned once into plain float32 arrays per kind, `(layers, heads, T_q, T_k)`,
plus the boolean mask the model applied (Section 3.2.3: the decoder may not look ahead; padding
is never attended). Keeping the mask separate is what lets a view draw a *blocked* cell
differently from a cell whose weight is merely ~0.

Derived maps are not tensors the model computes itself:
* mean over heads: what a layer does on average (the heads' outputs are concatenated, not
  averaged, in Section 3.2.2 — so this is a summary for people, not part of the model);
* attention rollout (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers"):
  the residual connection is modelled as 0.5·A + 0.5·I, rows renormalised, and the layers
  multiplied, giving how much each output position draws on each input token overall.
  Rollout chains layers over the *same* tokens, so it is only defined for self-attention.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from model.nn.kinds import ATTENTION_KINDS, MODEL_KINDS, AttentionKind
from model.nn.trace import Trace

KIND_AXES = {kind.value: kind.axes for kind in AttentionKind}
# What the query / key tokens of each kind are, for axis titles. A decoder-only model's one
# sequence is <bos> + prompt + continuation, an encoder-only model's its input: neither has a
# "source" and a "target" (AttentionData.from_result picks these names for such models).
KIND_AXIS_NAMES = {kind.value: kind.axis_names for kind in AttentionKind}
DECODER_ONLY_NAMES = ("prompt | continuation", "prompt | continuation")
ENCODER_ONLY_NAMES = ("input", "input")


class LayerStacks(Mapping):
    """kind → (L, h, T_q, T_k) array, stacked from the per-layer maps only when first asked for.

    A 512-token MiniLM forward holds 75 MB of weights: copying them into one array on every
    frame cost more than drawing them. The grid averages them straight from the layers (see
    `layers`); the stack is built when a hover or a derived view needs it, then kept."""

    def __init__(self):
        self._layers: dict[str, list[np.ndarray]] = {}
        self._stacked: dict[str, np.ndarray] = {}

    def __getitem__(self, kind: str) -> np.ndarray:
        if kind not in self._stacked:
            stacked = np.ascontiguousarray(np.stack(self._layers[kind]), dtype=np.float32)
            self._stacked[kind] = stacked
            self._layers[kind] = list(stacked)  # views: the layers and the stack stay one set of numbers
        return self._stacked[kind]

    def __setitem__(self, kind: str, value) -> None:
        """A stacked array, or a list of per-layer (h, T_q, T_k) arrays."""
        if isinstance(value, np.ndarray):
            self._stacked[kind] = np.ascontiguousarray(value, dtype=np.float32)
            self._layers[kind] = list(self._stacked[kind])
        else:
            self._stacked.pop(kind, None)
            self._layers[kind] = [np.asarray(layer, dtype=np.float32) for layer in value]

    def layers(self, kind: str) -> list[np.ndarray]:
        return self._layers[kind]

    def shape(self, kind: str) -> tuple[int, ...]:
        layers = self._layers[kind]
        return (len(layers), *layers[0].shape)

    def __contains__(self, kind) -> bool:  # Mapping's default would stack the maps to find out
        return kind in self._layers

    def __iter__(self):
        return iter(self._layers)

    def __len__(self) -> int:
        return len(self._layers)


@dataclass
class AttentionData:
    """weights[kind]: (L, h, T_q, T_k) float32; allowed[kind]: (T_q, T_k) bool (True = may attend);
    labels[kind]: (query tokens, key tokens)."""

    weights: LayerStacks = field(default_factory=LayerStacks)
    allowed: dict[str, np.ndarray] = field(default_factory=dict)
    labels: dict[str, tuple[list[str], list[str]]] = field(default_factory=dict)
    names: dict[str, tuple[str, str]] = field(default_factory=lambda: dict(KIND_AXIS_NAMES))
    # kind → factor → the maps summed over blocks (`model.interpret.map_sums`): a long input's, made by the
    # compute step off the GUI thread; the grid's overview is averaged from them
    sums: dict[str, dict] = field(default_factory=dict)

    def axis_names(self, kind: str) -> tuple[str, str]:
        """(query, key) token names for axis titles, e.g. ("target", "source") for cross-attention."""
        return self.names.get(kind, KIND_AXIS_NAMES.get(kind, ("query", "key")))

    @property
    def kinds(self) -> list[str]:
        return [k for k in ATTENTION_KINDS if k in self.weights]

    def n_layers(self, kind: str) -> int:
        return self.weights.shape(kind)[0] if kind in self.weights else 0

    def n_heads(self, kind: str) -> int:
        return self.weights.shape(kind)[1] if kind in self.weights else 0

    def head(self, kind: str, layer: int, head: int) -> np.ndarray:
        """One head's (T_q, T_k) weights — the exact numbers the model computed."""
        return self.weights.layers(kind)[layer][head]

    @classmethod
    def from_trace(cls, trace: Trace, src_pieces=None, tgt_pieces=None, batch: int = 0) -> AttentionData:
        """Collect every `<sublayer>.weights` (and its `.mask`) of `trace` for one batch row.

        Missing labels fall back to position numbers, so a bare training trace still draws.
        """
        data = cls()
        tensors = {step.name: step.tensor for step in trace.steps}  # one pass; a later step wins, as in trace[name]
        pieces = {"src": src_pieces, "tgt": tgt_pieces}
        for kind, pattern in ATTENTION_KINDS.items():
            names = []
            while pattern.format(layer=len(names)) + ".weights" in tensors:
                names.append(pattern.format(layer=len(names)))
            if not names:
                continue
            data.weights[kind] = [tensors[n + ".weights"][batch].numpy() for n in names]  # L × (h, Tq, Tk)
            Tq, Tk = data.weights.shape(kind)[-2:]
            mask = tensors.get(names[0] + ".mask")  # one mask per kind: every layer of a stack shares it
            data.allowed[kind] = mask[batch].numpy().astype(bool) if mask is not None else np.ones((Tq, Tk), bool)
            q_axis, k_axis = KIND_AXES[kind]
            data.labels[kind] = (_labels(pieces[q_axis], Tq), _labels(pieces[k_axis], Tk))
        return data

    @classmethod
    def from_result(cls, result) -> AttentionData:
        """From a `ForwardResult` (labels: src_pieces / tgt_pieces) or a bare `Trace`."""
        if isinstance(result, Trace):
            return cls.from_trace(result)
        data = cls.from_trace(result.trace, result.src_pieces, result.tgt_pieces)
        data.sums = dict(getattr(result, "map_sums", None) or {})
        model_kind = next((k for k in MODEL_KINDS.values() if list(k.attention_kinds) == data.kinds), None)
        if model_kind is not None:
            data.names = {kind: token_names(model_kind, kind) for kind in data.kinds}
        return data


def token_names(model_kind, kind: str) -> tuple[str, str]:
    """(query, key) token names of `kind` in a model of `model_kind`: a decoder-only model's one
    sequence is prompt | continuation, an encoder-only model's its input, else source / target."""
    if model_kind.continues_prompt:
        return DECODER_ONLY_NAMES
    return ENCODER_ONLY_NAMES if not model_kind.has_decoder else KIND_AXIS_NAMES[kind]


def _labels(pieces, n: int) -> list[str]:
    if pieces is not None and len(pieces) == n:
        return [_visible(p) for p in pieces]
    return [str(i) for i in range(n)]


def _visible(piece: str) -> str:
    """A space token would be an invisible axis label; show it as ␣."""
    return "␣" if piece == " " else piece

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


ROLLOUT_SOURCE = " (Abnar & Zuidema 2020: Π over layers of 0.5·mean_h A + 0.5·I, rows renormalised)"
MASK_TIP = ("Grey hatched cells were blocked before the softmax (future positions in the decoder, padding): "
            "their score was set to −∞, so the weight is exactly 0 by construction — unlike a weight the "
            "model computed to be near 0, drawn dark in the colour map.")


def head_label(layer: int, head: int) -> str:
    """A head as the user reads it, counted from 1 ("L2 H3" is layer index 1, head index 2)."""
    return f"L{layer + 1} H{head + 1}"


def cell_text(m, q: int, k: int, what: str = "weight", digits: int = 4, extra: str = "") -> str:
    """Cell (q, k) of a drawn map `m` (its values, allowed, row_labels, col_labels) as a readout
    says it, the number first (the line may be elided)."""
    value = (f"{float(m.values[q, k]):.{digits}f}" if m.allowed is None or m.allowed[q, k]
             else "blocked by the mask: score set to −∞, weight exactly 0")
    return f"{what} {value} · query {q} “{m.row_labels[q]}” → key {k} “{m.col_labels[k]}”{extra}"
