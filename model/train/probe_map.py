"""What a live run's probe map shows, without widgets: which attention (cross-attention where the
model has one, else the first kind it has), one head or the mean over heads, and each axis'
tokens and name. A GUI draws `ProbeMap`; nothing here draws.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from model.nn.kinds import AttentionKind
from model.nn.kinds import model_kind as kind_named

KIND_TIPS = {
    "cross": "Which source tokens each decoder position looks at (Section 3.2.3); rows are labelled with the "
             "token that position predicts",
    "encoder": "Which input tokens each position looks at (Section 3.2.1); a masked LM must fill each [MASK] "
               "from the words around it",
    "decoder_self": "Which earlier tokens each position looks at when predicting the next one (masked "
                    "self-attention, Section 3.2.3); rows are labelled with the token that position predicts",
}


def preferred(kinds) -> str | None:
    """The attention a probe map shows first: cross-attention where there is one."""
    return "cross" if "cross" in kinds else (kinds[0] if kinds else None)


def expected_kind(model_kind: str) -> str | None:
    """The attention a model of this kind will show once its run sends a snapshot."""
    return preferred(kind_named(model_kind).attention_kinds)


def kind_title(kind: str | None) -> tuple[str, str]:
    """(title, tooltip) of a probe map of attention `kind`."""
    title = AttentionKind(kind).title if kind in tuple(AttentionKind) else str(kind)
    return title, f"{title}: {KIND_TIPS.get(kind, '')}"


def attention_map(result, kind: str, layer: int, head: int | None) -> np.ndarray:
    """(T_q, T_k) weights of the first batch row: one head, or the mean over heads."""
    weights = result.trace.attention(kind, layer)[0].numpy()  # (h, Tq, Tk)
    return weights.mean(axis=0) if head is None else weights[head]


def map_axes(result, kind: str) -> tuple[list[str], list[str], str, str]:
    """(key labels, query labels, key axis name, query axis name) of a probe map. Cross-attention:
    keys are source tokens, each decoder row is labelled with what it predicts; decoder
    self-attention: the tokens read, and what each position predicts; encoder self-attention:
    the input on both axes."""
    if kind == "encoder":
        return list(result.src_pieces), list(result.src_pieces), "key token", "query (attending)"
    if kind == "decoder_self":
        return list(result.tgt_pieces), list(result.out_pieces), "token read", "predicting"
    return list(result.src_pieces), list(result.out_pieces), "source token", "predicting"


def pick_names(count: int, heads: bool, short: bool) -> list[str]:
    """The layer or head picker's entries, counted from 1 ("layer 2" / "L2"); the head picker's
    first entry is the mean of the heads."""
    word, letter = ("head", "H") if heads else ("layer", "L")
    names = [f"{letter}{n}" if short else f"{word} {n}" for n in range(1, count + 1)]
    return ["mean", *names] if heads else names


@dataclass(frozen=True)
class ProbeMap:
    """One drawn probe map: its weights, rows and columns labelled, axes named, titled."""

    values: np.ndarray
    rows: list[str]
    cols: list[str]
    row_name: str
    col_name: str
    title: str
    tip: str

    @classmethod
    def of(cls, result, kind: str, layer: int, head: int | None) -> ProbeMap:
        values = attention_map(result, kind, layer, head)
        keys, queries, key_name, query_name = map_axes(result, kind)
        return cls(values, queries[: values.shape[0]], keys[: values.shape[1]], query_name, key_name,
                   *kind_title(kind))


__all__ = ["KIND_TIPS", "ProbeMap", "attention_map", "expected_kind", "kind_title", "map_axes", "pick_names",
           "preferred"]
