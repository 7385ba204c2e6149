"""View 4: mean over heads and attention rollout, side by side, labelled as derived."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QStackedWidget, QWidget

from explorer.drawing import plot_style as st
from explorer.theme import set_sheet
from explorer.panels.attention.data import AttentionData
from explorer.panels.attention.derived import ROLLOUT_KINDS, ROLLOUT_UNDEFINED, mean_over_heads, rollout
from explorer.drawing.heatmap_items import HeatmapPlot
from explorer.panels.attention.grid import SCALE_RULE


class DerivedView(QWidget):
    """Left: mean_h A for the selected layer. Right: rollout through layers 1..selected (as read)."""

    hovered = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.mean_canvas = st.graphics_widget()
        self.mean = HeatmapPlot(self.mean_canvas.ci, 0, 0, st.weight_cmap(), st.WEIGHT_LEVELS, "key", "query", numbers=True, square=True)
        self.rollout_canvas = st.graphics_widget()
        self.rollout = HeatmapPlot(self.rollout_canvas.ci, 0, 0, st.weight_cmap(), st.WEIGHT_LEVELS, "input token", "position", numbers=True, square=True)
        self.mean_canvas.ci.addItem(st.colorbar(st.weight_cmap(), st.WEIGHT_LEVELS, SCALE_RULE), row=0, col=1)
        self.note = QLabel(ROLLOUT_UNDEFINED)
        self.note.setWordWrap(True)
        self.note.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.note.setFont(st.font(st.LABEL_PT))
        set_sheet(self.note, "background: {canvas}; color: {muted}; padding: 24px;")
        self.right = QStackedWidget()
        self.right.addWidget(self.rollout_canvas)
        self.right.addWidget(self.note)
        lay.addWidget(self.mean_canvas, 1)
        lay.addWidget(self.right, 1)
        self.data: AttentionData | None = None
        self.selection = ("encoder", 0)
        self.mean_values: np.ndarray | None = None
        self.rollout_values: np.ndarray | None = None
        self.mean_canvas.scene().sigMouseMoved.connect(lambda pos: self._on_move(self.mean, pos, "mean over heads"))
        self.rollout_canvas.scene().sigMouseMoved.connect(lambda pos: self._on_move(self.rollout, pos, "rollout"))

    @property
    def rollout_defined(self) -> bool:
        return self.selection[0] in ROLLOUT_KINDS

    def set_data(self, data: AttentionData, kind: str, layer: int) -> None:
        self.data, self.selection = data, (kind, layer)
        if kind not in data.weights or layer >= data.n_layers(kind):
            self.mean.clear()
            self.rollout.clear()
            return
        w, allowed = data.weights[kind], data.allowed[kind]
        q_labels, k_labels = data.labels[kind]
        h = w.shape[1]
        q_name, k_name = data.axis_names(kind)
        for heatmap, (x_text, y_text) in ((self.mean, (f"key ({k_name})", f"query ({q_name})")),
                                          (self.rollout, (f"input token ({k_name})", f"position after layer {layer + 1}"))):
            st.style_axis(heatmap.x_axis, x_text)
            st.style_axis(heatmap.y_axis, y_text)
        self.mean_values = mean_over_heads(w[layer])
        self.mean.set_map(self.mean_values, allowed, k_labels, q_labels)
        st.set_title(self.mean.plot, f"DERIVED · mean of the {h} heads, layer {layer + 1}")
        if kind in ROLLOUT_KINDS:
            self.rollout_values = rollout(w, upto=layer)
            self.rollout.set_map(self.rollout_values, allowed, k_labels, q_labels)
            span = "layer 1" if layer == 0 else f"layers 1–{layer + 1}"  # counted from 1, as everywhere
            st.set_title(self.rollout.plot, f"DERIVED · attention rollout through {span}")
            self.right.setCurrentWidget(self.rollout_canvas)
        else:
            self.rollout_values = None
            self.rollout.clear()
            self.right.setCurrentWidget(self.note)

    def _on_move(self, heatmap: HeatmapPlot, scene_pos, what: str) -> None:
        cell = heatmap.cell_at(scene_pos)
        if cell is None or self.data is None:
            self.hovered.emit("")
            return
        q, k = cell
        qs, ks = self.data.labels[self.selection[0]]
        if heatmap.allowed is not None and not heatmap.allowed[q, k]:
            value = "blocked by the mask"
        else:
            value = f"{float(heatmap.values[q, k]):.6f}"
        extra = " (Abnar & Zuidema 2020: Π over layers of 0.5·mean_h A + 0.5·I, rows renormalised)" if what == "rollout" else ""
        self.hovered.emit(f"{what} {value} · “{qs[q]}” ({q}) ← “{ks[k]}” ({k}){extra}")  # the number first
