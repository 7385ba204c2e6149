"""One head, large: query tokens down the side, key tokens along the bottom, the weight of
every cell (written in when there is room), the exact value under the mouse, a colour bar."""
from __future__ import annotations

from PySide6.QtCore import Signal

from explorer.drawing import plot_style as st
from explorer.drawing.canvas_widget import CanvasWidget
from explorer.panels.attention.data import KIND_AXIS_NAMES, AttentionData
from explorer.drawing.heatmap_items import HeatmapPlot
from explorer.panels.attention.grid import SCALE_RULE



def head_title(kind: str, layer: int, head: int) -> str:
    # Short: a title at least as wide as its plot held the axes a hand's width from a small map
    # ("Encoder–decoder (cross) attention — …" over an 11 × 12 map on a 1280×720 beamer)
    names = {"encoder": "Encoder self-attention", "decoder_self": "Masked self-attention",
             "cross": "Cross-attention"}
    return f"{names[kind]} — layer {layer + 1}, head {head + 1}"  # counted from 1, as everywhere


class SingleHeadView(CanvasWidget):
    """Signals: hovered(text) with the exact weight under the mouse."""

    hovered = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.heatmap = HeatmapPlot(self.canvas.ci, 0, 0, st.weight_cmap(), st.WEIGHT_LEVELS,
                                   "key (attended to)", "query (attending)", numbers=True, square=True)
        self.colorbar = st.colorbar(st.weight_cmap(), st.WEIGHT_LEVELS, SCALE_RULE)
        self.canvas.ci.addItem(self.colorbar, row=0, col=1)
        self.selection = ("encoder", 0, 0)
        self.data: AttentionData | None = None
        self.canvas.scene().sigMouseMoved.connect(self._on_move)

    @property
    def image(self):
        return self.heatmap.image

    def set_data(self, data: AttentionData, kind: str, layer: int, head: int) -> None:
        self.data, self.selection = data, (kind, layer, head)
        if kind not in data.weights or layer >= data.n_layers(kind) or head >= data.n_heads(kind):
            self.heatmap.clear()
            return
        q_labels, k_labels = data.labels[kind]
        self.heatmap.set_map(data.head(kind, layer, head), data.allowed[kind], k_labels, q_labels)
        q_name, k_name = data.axis_names(kind)
        st.style_axis(self.heatmap.y_axis, f"query: {q_name} token (attending)")
        st.style_axis(self.heatmap.x_axis, f"key: {k_name} token (attended to)")
        # a short plot on a beamer says it in fewer words ("query: target token (attending)" ran
        # 74 px past a 346-px axis)
        st.fit_axis_title(self.heatmap.y_axis, (f"query: {q_name} token (attending)", f"query: {q_name} token", "query"))
        st.fit_axis_title(self.heatmap.x_axis, (f"key: {k_name} token (attended to)", f"key: {k_name} token", "key"))
        st.set_title(self.heatmap.plot, head_title(kind, layer, head))

    def _on_move(self, scene_pos) -> None:
        cell = self.heatmap.cell_at(scene_pos)
        if cell is None or self.data is None:
            self.hovered.emit("")
            return
        kind, layer, head = self.selection
        q, k = cell
        qs, ks = self.data.labels[kind]
        if self.heatmap.allowed is not None and not self.heatmap.allowed[q, k]:
            value = "blocked by the mask: score set to −∞, weight exactly 0"
        else:
            value = f"{float(self.heatmap.values[q, k]):.6f}"
        self.hovered.emit(f"weight {value} · query {q} “{qs[q]}” → key {k} “{ks[k]}”")  # the number first: the line may be elided
