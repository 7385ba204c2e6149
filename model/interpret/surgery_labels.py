"""What the head-surgery grid says without drawing it: each head's symbol and tooltip for its edit,
which layers each page of a tall stack shows, and each page's tab title (its edits counted)."""
from __future__ import annotations

from model.nn.kinds import AttentionKind

SYMBOLS = {None: "–", "zero": "0", "mean": "μ", "uniform": "≡"}
NAMES = {None: "unchanged", "zero": "zeroed", "mean": "replaced by its mean", "uniform": "uniform attention"}
KIND_TITLES = {kind.value: kind.short_title for kind in AttentionKind}
PAGE_LAYERS = 10  # a page of a tall stack holds at most ten rows of heads: each a big target


def layer_pages(n_layers: int, fit: int = PAGE_LAYERS + 2) -> list[range]:
    """The layers of each page where `fit` rows of heads fit the room: all on one page where they
    fit, else pages of at most PAGE_LAYERS and at most `fit` layers (at least one)."""
    if n_layers <= fit:
        return [range(n_layers)]
    per_page = max(1, min(fit, PAGE_LAYERS))
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
