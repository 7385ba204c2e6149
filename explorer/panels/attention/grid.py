"""The all-heads view: every head of the selected layer, for one kind or for every kind.

One `Heatmap` per head (titled "L2 H3", one title per map), in a `HeatmapGrid`: the maps take
the columns that make them largest on the screen, and the grid scrolls when they do not fit,
so every head of every kind (cross-attention included) stays reachable. Each map is labelled
with the query and key tokens of the frame drawn. Clicking a map opens that head.
"""
from __future__ import annotations

from PySide6.QtCore import Signal

from explorer.drawing import plot_style as st
from explorer.drawing.heatmap_grid import HeatmapGrid
from explorer.panels.attention.data import AttentionData

SCALE_RULE = "attention weight: 0–1 on every map"
EDIT_SYMBOLS = {"zero": "0", "mean": "μ", "uniform": "≡"}  # as the head surgery panel writes them
SHORT_TITLES = {"encoder": "Encoder self-attention", "decoder_self": "Decoder masked self-attention",
                "cross": "Cross-attention (target × source)"}


def head_label(layer: int, head: int) -> str:
    """A head as the user reads it, counted from 1 ("L2 H3" is layer index 1, head index 2)."""
    return f"L{layer + 1} H{head + 1}"


class AttentionGrid(HeatmapGrid):
    """All heads of one layer of the shown kinds. Signals: cellClicked(kind, layer, head), hovered(text)."""

    cellClicked = Signal(str, int, int)
    hovered = Signal(str)

    def __init__(self, parent=None):
        super().__init__(st.weight_cmap(), st.WEIGHT_LEVELS, SCALE_RULE, parent)
        self.shown: list[str] = []
        self.data: AttentionData | None = None
        self.edits: dict = {}  # {(kind, layer, head): op} of the frame drawn
        self._selection = ("encoder", 0, 0)
        self.drawn: dict[str, int] = {}  # kind → the layer its maps show
        self._wired: set[int] = set()
        self._kinds: list[str] = []  # the kinds drawn, in section order

    def show_kinds(self, kinds: list[str]) -> None:
        """One section of maps per kind."""
        self.shown = list(kinds)
        st.restyle_view(self.bar_canvas)  # a bar built before a theme change wears the new theme

    def set_edits(self, edits: dict) -> None:
        """The heads the drawn frame was computed with edited (marked in their titles)."""
        self.edits = dict(edits)

    def layer_of(self, kind: str) -> int:
        """The layer drawn for `kind`: the selected one, within the kind's layers."""
        layer = self._selection[1]
        return max(0, min(layer, self.data.n_layers(kind) - 1)) if self.data is not None else 0

    def set_data(self, data: AttentionData) -> None:
        """Draw the selected layer's heads of every shown kind, labelled with this frame's tokens."""
        self.data = data
        kinds = [k for k in self.shown if k in data.weights]
        sections = []
        for kind in kinds:
            layer = self.layer_of(kind)
            titles = [head_label(layer, h) + self._edit_mark(kind, layer, h) for h in range(data.n_heads(kind))]
            sections.append((f"{SHORT_TITLES.get(kind, kind)} · layer {layer + 1}", titles))
        for kind, maps in zip(kinds, self.set_sections(sections)):
            layer = self.drawn[kind] = self.layer_of(kind)
            queries, keys = data.labels[kind]
            heads = data.weights.layers(kind)[layer]
            for h, m in enumerate(maps):
                m.set_data(heads[h], queries, keys, allowed=data.allowed[kind])
                m.describe = self._describer(kind, layer, h)
                self._wire(m)
        self._kinds = kinds
        self._mark_selection()

    def _edit_mark(self, kind: str, layer: int, head: int) -> str:
        op = self.edits.get((kind, layer, head))
        return f" ({EDIT_SYMBOLS.get(op, op)})" if op else ""

    def _describer(self, kind: str, layer: int, head: int):
        def describe(q: int, k: int) -> str:
            qs, ks = self.data.labels[kind]
            if not self.data.allowed[kind][q, k]:
                value = "blocked by the mask (weight exactly 0)"
            else:
                value = f"{self.data.weights.layers(kind)[layer][head, q, k]:.4f}"
            return f"{value} · {head_label(layer, head)}: query {q} “{qs[q]}” → key {k} “{ks[k]}” · click to open"
        return describe

    def _wire(self, m) -> None:
        """Clicks and hovers of a map reach the grid's signals (once per map: maps are reused)."""
        if id(m) in self._wired:
            return
        self._wired.add(id(m))
        m.hovered.connect(self.hovered)
        m.cellClicked.connect(lambda _r, _c, m=m: self._clicked(m))

    def _clicked(self, m) -> None:
        for kind, maps in zip(self._kinds, self.maps):
            if m in maps:
                self.cellClicked.emit(kind, self.drawn[kind], maps.index(m))

    def select(self, kind: str, layer: int, head: int) -> None:
        """Frame the selected head; another layer than drawn draws that layer's heads."""
        self._selection = (kind, layer, head)
        if self.data is not None and kind in self.drawn and self.layer_of(kind) != self.drawn[kind]:
            self.set_data(self.data)
            return
        self._mark_selection()

    def _mark_selection(self) -> None:
        kind, _layer, head = self._selection
        for k, maps in zip(self._kinds, self.maps):
            for h, m in enumerate(maps):
                m.mark((k, h) == (kind, head))

    def map_of(self, kind: str, head: int):
        """The map drawing `head` of `kind` (for the panel and tests)."""
        return self.maps[self._kinds.index(kind)][head]
