"""The all-heads view: every head of every layer, for one kind or for every kind, one `Heatmap`
per head ("L2 H3") in a `HeatmapGrid` that scrolls when they do not fit. A model with more maps
than ALL_LAYERS_MAX shows the selected layer's heads (72 live maps would stall a frame).
Clicking a map opens that head.
"""
from __future__ import annotations

from PySide6.QtCore import Signal

from explorer.drawing import plot_style as st
from explorer.drawing.heatmap_grid import MAPS_PER_TURN, HeatmapGrid
from model.interpret.attention_maps import AttentionData
from model.nn.kinds import AttentionKind

SCALE_RULE = "attention weight: 0–1 on every map"
SCALE_NAME = "attention weight (0–1)"
EDIT_SYMBOLS = {"zero": "0", "mean": "μ", "uniform": "≡"}  # as the head surgery panel writes them


ALL_LAYERS_MAX = 48  # maps drawn at once before the grid shows one layer at a time


def weight_text(m, q: int, k: int, what: str = "weight", digits: int = 4, extra: str = "") -> str:
    """Map `m`'s cell (q, k) as the readout says it, the number first (the line may be elided)."""
    value = (f"{float(m.values[q, k]):.{digits}f}" if m.allowed is None or m.allowed[q, k]
             else "blocked by the mask: score set to −∞, weight exactly 0")
    return f"{what} {value} · query {q} “{m.row_labels[q]}” → key {k} “{m.col_labels[k]}”{extra}"


def head_label(layer: int, head: int) -> str:
    """A head as the user reads it, counted from 1 ("L2 H3" is layer index 1, head index 2)."""
    return f"L{layer + 1} H{head + 1}"


class AttentionGrid(HeatmapGrid):
    """All heads of one layer of the shown kinds. Signals: cellClicked(kind, layer, head), hovered(text)."""

    cellClicked = Signal(str, int, int)

    def __init__(self, parent=None):
        super().__init__(st.weight_cmap(), st.WEIGHT_LEVELS, SCALE_RULE, parent)
        self.shown: list[str] = []
        self.data: AttentionData | None = None
        self.edits: dict = {}  # {(kind, layer, head): op} of the frame drawn
        self._selection = ("encoder", 0, 0)
        self.drawn: dict[str, list[int]] = {}  # kind → the layers its maps show
        self._sections: list[tuple[str, int]] = []  # (kind, layer) of each section drawn, in order
        self.mapClicked.connect(lambda section, head: self.cellClicked.emit(*self._sections[section], head))
        self.mapsMade.connect(lambda: self.set_data(self.data) if self.data is not None else None)

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

    def layers_drawn(self, kind: str) -> list[int]:
        """Every layer of `kind` when the shown kinds' maps are few enough, else the selected one."""
        data = self.data
        total = sum(data.n_layers(k) * data.n_heads(k) for k in self.shown if k in data.weights)
        return list(range(data.n_layers(kind))) if total <= ALL_LAYERS_MAX else [self.layer_of(kind)]

    def set_data(self, data: AttentionData) -> None:
        """Draw the heads of every shown kind, layer by layer, labelled with this frame's tokens."""
        self.data = data
        kinds = [k for k in self.shown if k in data.weights]
        self.drawn = {kind: self.layers_drawn(kind) for kind in kinds}
        keys = [(kind, layer) for kind in kinds for layer in self.drawn[kind]]
        sections = []
        for kind, layer in keys:
            titles = [head_label(layer, h) + self._edit_mark(kind, layer, h) for h in range(data.n_heads(kind))]
            sections.append((f"{AttentionKind(kind).title} · layer {layer + 1}", titles))
        for (kind, layer), maps in zip(keys, self.set_sections(sections, at_most_new=MAPS_PER_TURN)):
            queries, tokens = data.labels[kind]
            heads = data.weights.layers(kind)[layer]
            for h, m in enumerate(maps):
                m.set_data(heads[h], queries, tokens, allowed=data.allowed[kind])
                what = f"{head_label(layer, h)} weight"
                m.describe = lambda q, k, m=m, what=what: weight_text(m, q, k, what, extra=" · click to open")
        self._sections = keys
        self._mark_selection()

    def _edit_mark(self, kind: str, layer: int, head: int) -> str:
        op = self.edits.get((kind, layer, head))
        return f" ({EDIT_SYMBOLS.get(op, op)})" if op else ""

    def select(self, kind: str, layer: int, head: int) -> None:
        """Frame the selected head; a layer not drawn draws that layer's heads."""
        self._selection = (kind, layer, head)
        if self.data is not None and kind in self.drawn and self.layer_of(kind) not in self.drawn[kind]:
            self.set_data(self.data)
            return
        self._mark_selection()

    def _mark_selection(self) -> None:
        kind, layer, head = self._selection
        for key, maps in zip(self._sections, self.maps):
            for h, m in enumerate(maps):
                m.mark(key == (kind, self.layer_of(kind)) and h == head)

    def map_of(self, kind: str, head: int, layer: int | None = None):
        """The map drawing `head` of `kind` in `layer` (default: the selected layer)."""
        key = (kind, self.layer_of(kind) if layer is None else layer)
        self.make_all_maps()  # (a map still to be made: made and drawn now)
        return self.maps[self._sections.index(key)][head]
