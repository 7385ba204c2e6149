"""What the head-surgery grid says without drawing it: each head's symbol and tooltip for its edit,
which layers each page of a tall stack shows, and each page's tab title (its edits counted)."""
from __future__ import annotations

from model.nn.kinds import AttentionKind

SYMBOLS = {None: "–", "zero": "0", "mean": "μ", "uniform": "≡"}
NAMES = {None: "unchanged", "zero": "zeroed", "mean": "replaced by its mean", "uniform": "uniform attention"}
KIND_TITLES = {kind.value: kind.short_title for kind in AttentionKind}
PAGE_LAYERS = 10  # a stack of more layers than this (and a few) is paged: ten rows of heads stay a big target


def layer_pages(n_layers: int, per_page: int = PAGE_LAYERS) -> list[range]:
    """The layers of each page: all on one up to a few more than `per_page`, else pages of `per_page`."""
    if n_layers <= per_page + 2:
        return [range(n_layers)]
    return [range(start, min(start + per_page, n_layers)) for start in range(0, n_layers, per_page)]


def head_cell(key: tuple[str, int, int], op: str | None) -> tuple[str, str]:
    """A head's (symbol, tooltip) for its edit `op` (None: unchanged)."""
    kind, layer, head = key
    return SYMBOLS[op], f"{KIND_TITLES[kind]} L{layer + 1} H{head + 1}: {NAMES[op]} (click to change)"


def page_titles(kind: str, pages: list[range], edits: dict) -> list[str]:
    """Each page's tab title; an edit on another page stays in sight: its tab counts it."""
    titles = []
    for page in pages:
        edited = sum(1 for (k, layer, _h) in edits if k == kind and layer in page)
        titles.append(f"L{page.start + 1}–{page.stop}" + (f" ({edited} edited)" if edited else ""))
    return titles
