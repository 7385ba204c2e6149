"""Two checkpoints of one architecture, side by side: the same input through both.

`compare(a, b, source)` runs `compute_frame` for each model, then answers what a student
asks when a model has trained a little longer: what does each write, how sure is each of its
own output and of the other's ("A gives 0.93 to 'x', B gives 0.41"), and how did each head's
attention move? The attention of both is recorded over one shared decoder input (the target
if one is given, else A's own output), so the two maps have the same rows and columns and
their difference B − A is defined cell by cell. Models that are not the same architecture
(sizes, kind, vocabularies) are refused with a message naming what differs.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from model.inference.bundle import ForwardResult, ModelBundle
from model.interpret.attention_maps import AttentionData
from model.interpret.frame import DecodeSettings, Frame, compute_frame

# Config fields that do not change what an eval-mode forward computes (dropout is off at eval).
IGNORED_CONFIG_FIELDS = ("dropout",)


class ComparisonError(ValueError):
    """Two models that cannot be compared cell by cell; the message names what differs."""


def _vocab_difference(side: str, a, b) -> str | None:
    if a == b:  # (a tokenizer's own equality: its pieces and rules, not the file they were read from)
        return None
    va, vb = list(getattr(a, "vocab", [])), list(getattr(b, "vocab", []))
    only_a, only_b = sorted(set(va) - set(vb)), sorted(set(vb) - set(va))
    detail = f"A has {len(va)} entries, B {len(vb)}"
    if only_a:
        detail += f"; only in A: {', '.join(map(repr, only_a[:5]))}"
    if only_b:
        detail += f"; only in B: {', '.join(map(repr, only_b[:5]))}"
    if not only_a and not only_b:
        detail += "; the same entries in another order" if va != vb else "; the tokenizers differ"
    return f"{side} vocabulary differs ({detail})"


def mismatches(a: ModelBundle, b: ModelBundle) -> list[str]:
    """What keeps `a` and `b` from being compared, one line each (empty: comparable)."""
    ca, cb = a.config.to_dict(), b.config.to_dict()
    problems = [f"{key}: A {ca.get(key)!r}, B {cb.get(key)!r}" for key in sorted(set(ca) | set(cb))
                if key not in IGNORED_CONFIG_FIELDS and ca.get(key) != cb.get(key)]
    for side, ta, tb in (("source", a.src_tokenizer, b.src_tokenizer), ("target", a.tgt_tokenizer, b.tgt_tokenizer)):
        found = _vocab_difference(side, ta, tb)
        if found:
            problems.append(found)
    return problems


def check_comparable(a: ModelBundle, b: ModelBundle) -> None:
    """Raise ComparisonError naming every difference of architecture or vocabulary."""
    problems = mismatches(a, b)
    if problems:
        raise ComparisonError(f"{a.name} and {b.name} are not the same architecture, so their attention "
                              f"cannot be compared cell by cell: " + "; ".join(problems))


@dataclass
class ScoredOutput:
    """One model's output, scored by both: `own[t]` is the probability the model that wrote
    token t gave it, `other[t]` what the other model gives the same token after the same prefix."""

    writer: str  # "A" or "B"
    pieces: list[str]
    own: np.ndarray
    other: np.ndarray

    def largest_disagreement(self) -> int | None:
        """Index of the token the two models disagree on most (None when there is none)."""
        return int(np.argmax(np.abs(self.own - self.other))) if len(self.pieces) else None


@dataclass
class Comparison:
    """A and B on the same input. attention_a / attention_b: kind → (layers, heads, T_q, T_k),
    both over the shared decoder input; allowed: kind → (T_q, T_k) bool; labels: kind →
    (query tokens, key tokens)."""

    label_a: str
    label_b: str
    frame_a: Frame
    frame_b: Frame
    output_a: ScoredOutput
    output_b: ScoredOutput
    shared_input: str  # whose decoder input both attention maps read: "target" | "A's output" | "the input"
    attention_a: dict[str, np.ndarray]
    attention_b: dict[str, np.ndarray]
    allowed: dict[str, np.ndarray]
    labels: dict[str, tuple[list[str], list[str]]]

    @property
    def kinds(self) -> list[str]:
        return list(self.attention_a)

    @property
    def same_output(self) -> bool:
        return self.output_a.pieces == self.output_b.pieces

    def difference(self, kind: str) -> np.ndarray:
        """B − A of every head's weights, (layers, heads, T_q, T_k)."""
        return self.attention_b[kind] - self.attention_a[kind]

    def mean_abs_difference(self, kind: str) -> np.ndarray:
        """(layers, heads): mean |B − A| over the cells a query may attend (masked cells are 0 in both)."""
        diff = np.abs(self.difference(kind))
        allowed = self.allowed[kind]
        return diff[..., allowed].mean(-1) if allowed.any() else np.zeros(diff.shape[:2], np.float32)

    def most_changed(self, kind: str) -> tuple[int, int] | None:
        """(layer, head) of `kind` whose map differs most between A and B (the largest mean |B − A|)."""
        changes = self.mean_abs_difference(kind)
        return tuple(int(i) for i in np.unravel_index(int(np.argmax(changes)), changes.shape)) if changes.size else None


MIN_SCALE = 1e-6  # a zero difference still needs a non-empty colour scale


def symmetric_scale(diff: np.ndarray, allowed: np.ndarray | None = None) -> tuple[float, bool]:
    """(m, zero): the largest |B − A| among the cells a query may attend (at least MIN_SCALE), and
    whether it is exactly 0."""
    cells = diff[allowed] if allowed is not None and allowed.any() else diff
    m = float(np.abs(cells).max()) if cells.size else 0.0
    return max(m, MIN_SCALE), m == 0.0


def check_finite(label: str, result: ForwardResult) -> None:
    """Refuse a model whose outputs are NaN or infinite (e.g. a diverged run's weights): every
    probability and attention difference with it would be NaN, not a comparison."""
    probs = result.trace["generator.probs"].tensor if "generator.probs" in result.trace else None
    if probs is not None and not bool(torch.isfinite(probs).all()):
        raise ComparisonError(f"{label}: its output probabilities are NaN or infinite on this input (its weights "
                              "hold NaN or infinite values, e.g. a run that diverged), so there is nothing to compare; "
                              "choose another checkpoint")


# -- what each model writes ------------------------------------------------------------------------
def output_ids(bundle: ModelBundle, frame: Frame, src: torch.Tensor) -> list[int]:
    """The ids the frame's forward was recorded over (without <bos>/<eos>): the target, the
    greedy decode the frame already ran, or a greedy decode (what `bundle.run` records)."""
    if frame.target is not None:
        return bundle.encode_target(frame.target)
    run = frame.decode
    if run is not None and frame.settings.strategy == "greedy":
        return [i for i in run.output_ids if i != run.eos_id]
    return bundle.generate_ids(src)


def _token_probs(result: ForwardResult, ids: list[int], kind) -> np.ndarray:
    """P(each written token | what precedes it) from a recorded forward: y1 … yn and <eos> for a
    decoder (a decoder-only model's rows start after <bos> + prompt), each position's own token
    for an encoder-only model."""
    probs = result.trace["generator.probs"].tensor[0]  # (T, V)
    start = result.n_prompt if kind.continues_prompt else 0
    rows = torch.arange(start, start + len(ids))
    return probs[rows, torch.tensor(ids, dtype=torch.long)].numpy().astype(np.float32)


def _forward_over(bundle: ModelBundle, frame: Frame, encoded, ids: list[int]) -> ForwardResult:
    """The model's recorded forward over given output ids (teacher-forced), reusing the frame's when it matches."""
    if not bundle.config.has_decoder:
        return frame.forward
    return bundle.run(frame.source, frame.target, encoded=encoded, output_ids=ids)


def _scored(writer: str, own_bundle: ModelBundle, own: ForwardResult, other: ForwardResult,
            ids: list[int]) -> ScoredOutput:
    kind = own_bundle.model_kind
    if kind.has_decoder:
        scored = ids + [own_bundle.tgt_tokenizer.eos_id]
        pieces = own_bundle.tgt_tokenizer.pieces(scored)
    else:  # encoder-only: what each position predicts
        probs = own.trace["generator.probs"].tensor[0]
        scored = probs.argmax(-1).tolist()
        pieces = own_bundle.src_tokenizer.pieces(scored)
    return ScoredOutput(writer, pieces, _token_probs(own, scored, kind), _token_probs(other, scored, kind))


def compare(a: ModelBundle, b: ModelBundle, source: str, target: str | None = None,
            settings: DecodeSettings | None = None, label_a: str | None = None, label_b: str | None = None,
            frame_a: Frame | None = None) -> Comparison:
    """Run `source` (teacher-forced on `target` if given) through A and B and compare them.

    `frame_a`: A's Frame for this input if one is at hand (the GUI's), reused by compute_frame.
    Raises ComparisonError for models of different architecture, InputError for bad text."""
    check_comparable(a, b)
    label_a, label_b = label_a or a.name, label_b or b.name
    settings = settings or DecodeSettings()
    frame_a = compute_frame(a, source, target, settings, label_a, previous=frame_a)
    frame_b = compute_frame(b, source, target, settings, label_b)
    for label, frame in ((label_a, frame_a), (label_b, frame_b)):
        check_finite(label, frame.forward)
    enc_a, enc_b = a.encode_source(source), b.encode_source(source)
    with torch.no_grad():
        ids_a = output_ids(a, frame_a, enc_a[0]) if a.config.has_decoder else []
        ids_b = output_ids(b, frame_b, enc_b[0]) if b.config.has_decoder else []
        b_on_a = frame_b.forward if ids_a == ids_b else _forward_over(b, frame_b, enc_b, ids_a)
        a_on_b = frame_a.forward if ids_a == ids_b else _forward_over(a, frame_a, enc_a, ids_b)
    out_a = _scored("A", a, frame_a.forward, b_on_a, ids_a)
    out_b = _scored("B", b, frame_b.forward, a_on_b, ids_b)
    maps_a = AttentionData.from_trace(frame_a.forward.trace, frame_a.forward.src_pieces, frame_a.forward.tgt_pieces)
    maps_b = AttentionData.from_trace(b_on_a.trace)
    shared = "the target" if frame_a.target else ("A's output" if a.config.has_decoder else "the input")
    return Comparison(label_a, label_b, frame_a, frame_b, out_a, out_b, shared, dict(maps_a.weights),
                      dict(maps_b.weights), maps_a.allowed, maps_a.labels)


__all__ = ["MIN_SCALE", "Comparison", "ComparisonError", "ScoredOutput", "check_comparable", "check_finite", "compare",
           "mismatches", "output_ids", "symmetric_scale"]
