"""The head atlas: what each attention head does, scored on repeated random token sequences.

Every head of every attention kind the model has (encoder self, decoder masked self, cross)
reads one batch of sequences `[prefix] [random segment] [the same segment] [suffix]`: each
segment draws L distinct ordinary tokens (no specials, no bracketed markers such as [MASK]),
so every token of the second copy occurs exactly once before, L positions back. One
recorded forward (`model.nn.hooks.record`) gives every head's weights `(B, h, T_q, T_k)`,
averaged over the batch, and five scores in [0, 1] (each a mean of attention weights):

- previous-token: weight on position q − 1, over queries q ≥ 1;
- duplicate-token: weight on the other occurrence of the query's token (the second copy
  looks back L positions; a bidirectional encoder's first copy also looks forward L);
- induction (Olsson et al. 2022): from each token of the second copy, weight on the token
  *after* its earlier occurrence (q − L + 1), the pattern that lets a model continue a
  sequence it has seen before;
- first-token: weight on position 0 (<bos>, [CLS], or an encoder's first token): the
  "attention sink" many heads park their weight on when they have nothing to do;
- self: weight on the query's own position.

Causal self-attention's position 0 can only attend itself, so its queries start at 1. In
cross-attention the queries are target positions and the keys source positions of another
sequence: previous, duplicate, induction and self have no meaning there, and only
first-token (weight on the first source position) is scored.

A head's `kind` is its highest score's name when that score reaches `threshold`, else
"mixed". Deterministic: the sequences come from a seeded generator.
"""
from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from model.data.masking import mask_id_of
from model.inference.bundle import ModelBundle
from model.nn.hooks import record
from model.nn.kinds import AttentionKind

PREVIOUS, DUPLICATE, INDUCTION, FIRST, SELF = "previous-token", "duplicate-token", "induction", "first-token", "self"
SCORE_NAMES = (PREVIOUS, DUPLICATE, INDUCTION, FIRST, SELF)
MIXED = "mixed"
KINDS = (*SCORE_NAMES, MIXED)  # every `HeadScore.kind`
MEANINGS = {PREVIOUS: "attends the token just before", DUPLICATE: "attends an earlier copy of the same token",
            INDUCTION: "attends the token after an earlier copy (continues a repeat)",
            FIRST: "parks its attention on the first position (a sink)", SELF: "attends its own position",
            MIXED: "no pattern reaches the threshold"}  # each kind in words
LETTERS = {PREVIOUS: "P", DUPLICATE: "D", INDUCTION: "I", FIRST: "F", SELF: "S", MIXED: "p d i f s"}
# Which scores an attention kind has: cross-attention's keys are another sequence's positions.
APPLIES = {AttentionKind.ENCODER: SCORE_NAMES, AttentionKind.DECODER_SELF: SCORE_NAMES,
           AttentionKind.CROSS: (FIRST,)}
_MARKER = re.compile(r"^(\[.+\]|<.+>)$")  # [MASK], [unused0], <pad>, <|endoftext|>: not ordinary text

Progress = Callable[[int, int, str], object]


def meaning(kind: str) -> str:
    """A kind in words (a mixed head's lower-case letter explained)."""
    return MEANINGS[kind] + ("; the lower-case letter is its strongest" if kind == MIXED else "")


class HeadScoreError(ValueError):
    """A model the atlas cannot score (too few ordinary tokens or positions); the message says why."""


@dataclass(frozen=True)
class HeadScore:
    """One head: where it is, its scores (only those that apply to its attention kind) and its kind."""

    attention: AttentionKind
    layer: int  # from 0
    head: int  # from 0
    scores: dict[str, float]
    kind: str  # one of SCORE_NAMES, or MIXED

    @property
    def key(self) -> tuple[str, int, int]:
        """(attention kind, layer, head): the key head surgery and importance use."""
        return (self.attention.value, self.layer, self.head)

    @property
    def letter(self) -> str:
        """Its kind's letter; a mixed head's strongest pattern's, in lower case."""
        return LETTERS[self.kind] if self.kind != MIXED else LETTERS[max(self.scores, key=self.scores.get)].lower()

    def tooltip(self) -> str:
        """Lines: where the head is, its kind in words and every score."""
        lines = [f"{self.attention.short_title} L{self.layer + 1} H{self.head + 1}: {self.kind} ({meaning(self.kind)})"]
        lines += [f"  {name}: {score:.2f}" for name, score in self.scores.items()]
        if self.attention is AttentionKind.CROSS:
            lines.append("  (cross-attention: only first-token applies)")
        return "\n".join(lines)

    def describe(self) -> str:
        """One line: where the head is, its kind and every score."""
        scores = " · ".join(f"{name} {score:.2f}" for name, score in self.scores.items())
        return f"{self.attention.short_title} L{self.layer + 1} H{self.head + 1}: {self.kind}. {scores}"


@dataclass
class HeadAtlas:
    """Every head's scores, and the sequences they were measured on."""

    model_name: str
    heads: list[HeadScore]
    threshold: float
    segment_lens: dict[str, int]  # "src"/"tgt" → L: each sequence is [prefix] L tokens, the same L tokens [suffix]
    offsets: dict[str, int]  # "src"/"tgt" → where the first copy starts (the prefix's length)
    tokens: dict[str, torch.Tensor] = field(default_factory=dict, repr=False)  # "src"/"tgt" → (B, T) ids

    def about(self) -> str:
        """How the heads were scored and coloured, in plain sentences."""
        cross = (" Cross-attention looks at the other sentence, so only first-token can apply to it."
                 if AttentionKind.CROSS in self.attention_kinds else "")
        n = len(next(iter(self.tokens.values()))) if self.tokens else 0
        return (f"The model read {n} random sequences of {self.lengths_text()} tokens, each written twice. A head "
                "gets the colour and capital letter of the pattern with the largest share of its attention, when "
                f"that share is at least {self.threshold:.0%}; otherwise it is mixed, lettered in lower case by "
                f"its strongest pattern.{cross} Hover or click a head for its scores.")

    def lengths_text(self) -> str:
        """The repeated copies' length in words: "12", or "12 (source), 3 (target)" where they differ."""
        if len(set(self.segment_lens.values())) == 1:
            return str(next(iter(self.segment_lens.values())))
        return ", ".join(f"{n} ({'source' if axis == 'src' else 'target'})" for axis, n in self.segment_lens.items())

    def head(self, attention: str, layer: int, head: int) -> HeadScore:
        for h in self.heads:
            if h.key == (AttentionKind.parse(attention).value, layer, head):
                return h
        raise KeyError(f"no head {attention} layer {layer} head {head} in the atlas")

    @property
    def attention_kinds(self) -> list[AttentionKind]:
        return list(dict.fromkeys(h.attention for h in self.heads))

    def of(self, attention: str) -> list[HeadScore]:
        """The heads of one attention kind, layer by layer."""
        kind = AttentionKind.parse(attention)
        return [h for h in self.heads if h.attention is kind]

    def counts(self, attention: str | None = None) -> dict[str, int]:
        """How many heads of each kind (of one attention kind, or all), every kind listed."""
        heads = self.heads if attention is None else self.of(attention)
        return {k: sum(h.kind == k for h in heads) for k in KINDS}

    def strongest(self, score: str, attention: str | None = None) -> HeadScore | None:
        """The head with the highest `score` (None where no head has it)."""
        if score not in SCORE_NAMES:
            raise ValueError(f"unknown score {score!r}; use one of {', '.join(SCORE_NAMES)}")
        heads = [h for h in (self.heads if attention is None else self.of(attention)) if score in h.scores]
        return max(heads, key=lambda h: (h.scores[score], -h.layer, -h.head), default=None)

    def to_csv(self) -> str:
        """One row per head: where, kind, every score (empty where it does not apply)."""
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(["attention", "layer", "head", "kind", *SCORE_NAMES])
        for h in self.heads:
            writer.writerow([*h.key, h.kind, *(f"{h.scores[s]:.4f}" if s in h.scores else "" for s in SCORE_NAMES)])
        return out.getvalue()


def ordinary_ids(tokenizer) -> list[int]:
    """Ids of the tokenizer's ordinary pieces: no specials, no mask, no bracketed markers."""
    special = set(getattr(tokenizer, "special_ids", ())) | {
        tokenizer.pad_id, tokenizer.bos_id, tokenizer.eos_id, tokenizer.unk_id, mask_id_of(tokenizer)}
    pieces = tokenizer.pieces(list(range(len(tokenizer))))
    return [i for i, p in enumerate(pieces) if i not in special and not _MARKER.match(p)]


def repeated_segments(pool: list[int], n: int, length: int, generator: torch.Generator) -> torch.Tensor:
    """(n, 2·length) ids: each row `length` distinct ids drawn from `pool`, then the same again."""
    ids = torch.tensor(pool, dtype=torch.long)
    rows = torch.stack([ids[torch.randperm(len(pool), generator=generator)[:length]] for _ in range(n)])
    return torch.cat([rows, rows], dim=1)


def self_scores(weights: torch.Tensor, offset: int, length: int, causal: bool) -> dict[str, torch.Tensor]:
    """The five scores of every head of one self-attention sublayer: weights (h, T, T), the
    batch mean; the copies start at `offset` and `offset + length`."""
    T = weights.size(-1)
    start = 1 if causal else 0
    q = torch.arange(start, T)
    second = torch.arange(offset + length, offset + 2 * length)  # queries of the second copy
    dup_q, dup_k = second, second - length
    if not causal:  # the first copy sees its later occurrence too
        dup_q, dup_k = torch.cat([dup_q, second - length]), torch.cat([dup_k, second])
    return {
        PREVIOUS: weights[:, torch.arange(1, T), torch.arange(0, T - 1)].mean(-1),
        DUPLICATE: weights[:, dup_q, dup_k].mean(-1),
        INDUCTION: weights[:, second, second - length + 1].mean(-1),
        FIRST: weights[:, q, 0].mean(-1),
        SELF: weights[:, q, q].mean(-1),
    }


def label(scores: dict[str, float], threshold: float) -> str:
    """The highest score's name when it reaches `threshold` (ties: SCORE_NAMES order), else MIXED."""
    best = max(scores, key=lambda name: (scores[name], -SCORE_NAMES.index(name)))
    return best if scores[best] >= threshold else MIXED


MIN_SEGMENT = 3  # with 2 tokens a copy, "the token after the earlier occurrence" is the previous token


def _segment_room(bundle: ModelBundle, axis: str, extra: int) -> int:
    """The longest copy the stack reads twice within max_len and, where the model's task says
    how long its training inputs were, within those (the heads' habits are learnt on such
    lengths), but never under MIN_SEGMENT because of the task alone."""
    room = (bundle.config.max_len - extra) // 2
    trained = bundle.task.get("max_src_len" if axis == "src" else "max_tgt_len")
    if isinstance(trained, int) and not isinstance(trained, bool) and trained > 0:
        trained += 1 if axis == "tgt" else 0  # the decoder reads <bos> + the target
        room = min(room, max(MIN_SEGMENT, (trained - extra) // 2))
    return room


def _sequences(bundle: ModelBundle, n: int, segment_len: int,
               seed: int) -> tuple[dict[str, torch.Tensor], dict[str, int], dict[str, int]]:
    """The model's input ids, the prefix length and L, each by axis ("src" and/or "tgt")."""
    kind = bundle.model_kind
    tokenizers = {}
    if kind.has_encoder:
        tok = bundle.src_tokenizer
        tokenizers["src"] = (tok, tuple(getattr(tok, "prefix", ())), tuple(getattr(tok, "suffix", ())))
    if kind.has_decoder:
        tokenizers["tgt"] = (bundle.tgt_tokenizer, (bundle.tgt_tokenizer.bos_id,), ())
    generator = torch.Generator().manual_seed(seed)
    tokens, offsets, lengths = {}, {}, {}
    for axis, (tok, pre, suf) in tokenizers.items():
        pool = ordinary_ids(tok)
        length = min(segment_len, _segment_room(bundle, axis, len(pre) + len(suf)), len(pool))
        if length < MIN_SEGMENT:
            raise HeadScoreError(f"{bundle.name!r} has room for copies of {length} distinct ordinary tokens; "
                                 f"the atlas needs at least {MIN_SEGMENT} (a larger vocabulary or max_len).")
        body = repeated_segments(pool, n, length, generator)
        parts = [torch.tensor([pre] * n, dtype=torch.long).view(n, -1), body,
                 torch.tensor([suf] * n, dtype=torch.long).view(n, -1)]
        tokens[axis], offsets[axis], lengths[axis] = torch.cat(parts, dim=1), len(pre), length
    return tokens, offsets, lengths


def head_scores(bundle: ModelBundle, n_sequences: int = 16, segment_len: int = 20, seed: int = 0,
                threshold: float = 0.4, progress: Progress | None = None) -> HeadAtlas:
    """Score every head of `bundle`'s model (see the module's docstring) in one recorded forward
    over `n_sequences` repeated random sequences of `segment_len` tokens per copy (fewer where
    the vocabulary, max_len or the longest input of the model's task is shorter)."""
    if not 0.0 < threshold <= 1.0:
        raise HeadScoreError(f"threshold must lie in (0, 1], got {threshold!r}")
    if not isinstance(n_sequences, int) or n_sequences < 1:
        raise HeadScoreError(f"n_sequences must be a positive integer, got {n_sequences!r}")
    tokens, offsets, lengths = _sequences(bundle, n_sequences, segment_len, seed)
    model = bundle.model
    kind = bundle.model_kind
    if progress is not None:
        shown = " and ".join(str(n) for n in dict.fromkeys(lengths.values()))
        progress(0, 2, f"Recording {n_sequences} sequences of {shown} random tokens, each repeated")
    was_training = model.training
    model.eval()
    try:
        inputs = {axis: ids.to(bundle.device) for axis, ids in tokens.items()}
        src, tgt = inputs.get("src"), inputs.get("tgt")
        with torch.no_grad(), record(model) as trace:  # the stacks only: no output layer over the vocabulary
            memory = model.encode(src) if src is not None else None
            if tgt is not None:
                model.decode(memory, src, tgt)
    finally:
        model.train(was_training)
    if progress is not None:
        progress(1, 2, "Scoring the heads")
    heads = []
    for attention in kind.attention_kinds:
        for layer in range(trace.n_layers(attention)):
            weights = trace.attention(attention, layer).mean(0)  # (h, T_q, T_k)
            if attention is AttentionKind.CROSS:
                table = {FIRST: weights[:, :, 0].mean(-1)}
            else:
                axis = attention.axes[0]
                table = self_scores(weights, offsets[axis], lengths[axis], causal=attention.causal_queries)
            for head in range(weights.size(0)):
                scores = {name: float(table[name][head]) for name in APPLIES[attention]}
                heads.append(HeadScore(attention, layer, head, scores, label(scores, threshold)))
    if progress is not None:
        progress(2, 2, "Done")
    return HeadAtlas(bundle.name, heads, threshold, lengths, offsets, tokens)
