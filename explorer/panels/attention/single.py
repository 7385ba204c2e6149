"""One head, large: query tokens down the side, key tokens along the bottom, the weight of
every cell (written in when there is room), the exact value under the mouse, a colour bar."""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QVBoxLayout, QWidget

from explorer.drawing import plot_style as st
from explorer.drawing.heatmap import Heatmap
from explorer.panels.attention.grid import SCALE_NAME
from model.interpret.attention_maps import AttentionData
from model.nn.kinds import AttentionKind


def head_title(kind: str, layer: int, head: int) -> str:
    return f"{AttentionKind(kind).title} — layer {layer + 1}, head {head + 1}"  # counted from 1, as everywhere


class SingleHeadView(QWidget):
    """Signals: hovered(text) with the exact weight under the mouse."""

    hovered = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.heatmap = Heatmap(colormap=st.weight_cmap(), levels=st.WEIGHT_LEVELS, colour_bar=SCALE_NAME, numbers=True)
        self.colorbar = self.heatmap.bar
        self.canvas = self.heatmap.canvas
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.heatmap)
        self.selection = ("encoder", 0, 0)
        self.data: AttentionData | None = None
        self.heatmap.describe = self._describe
        self.heatmap.hovered.connect(self.hovered)

    @property
    def image(self):
        return self.heatmap.image

    def set_data(self, data: AttentionData, kind: str, layer: int, head: int) -> None:
        self.data, self.selection = data, (kind, layer, head)
        if kind not in data.weights or layer >= data.n_layers(kind) or head >= data.n_heads(kind):
            self.heatmap.clear_data()
            return
        q_labels, k_labels = data.labels[kind]
        self.heatmap.set_data(data.head(kind, layer, head), q_labels, k_labels, allowed=data.allowed[kind])
        q_name, k_name = data.axis_names(kind)
        self.heatmap.set_axis_names(f"query ({q_name})", f"key ({k_name})")
        self.heatmap.set_title(head_title(kind, layer, head))

    def _describe(self, q: int, k: int) -> str:
        kind = self.selection[0]
        qs, ks = self.data.labels[kind]
        if not self.heatmap.allowed[q, k]:
            value = "blocked by the mask: score set to −∞, weight exactly 0"
        else:
            value = f"{float(self.heatmap.values[q, k]):.6f}"
        return f"weight {value} · query {q} “{qs[q]}” → key {k} “{ks[k]}”"  # the number first: the line may be elided
