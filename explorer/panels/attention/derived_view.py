"""The derived view: mean over heads and attention rollout side by side, labelled as derived."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QStackedWidget, QWidget

from explorer.drawing import plot_style as st
from explorer.drawing.heatmap import Heatmap
from explorer.panels.attention.grid import weight_text
from explorer.panels.layouts import row
from explorer.theme import set_sheet
from model.interpret.attention_maps import ROLLOUT_KINDS, ROLLOUT_UNDEFINED, AttentionData, mean_over_heads, rollout

ROLLOUT_SOURCE = " (Abnar & Zuidema 2020: Π over layers of 0.5·mean_h A + 0.5·I, rows renormalised)"


class DerivedView(QWidget):
    """Left: mean_h A of the selected layer. Right: rollout through layers 1..selected."""

    hovered = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.mean = Heatmap(colormap=st.weight_cmap(), levels=st.WEIGHT_LEVELS, numbers=True)
        self.rollout = Heatmap(colormap=st.weight_cmap(), levels=st.WEIGHT_LEVELS, colour_bar=True, numbers=True)
        self.note = QLabel(ROLLOUT_UNDEFINED, wordWrap=True, alignment=Qt.AlignmentFlag.AlignCenter,
                           font=st.font(st.LABEL_PT))
        set_sheet(self.note, "background: {canvas}; color: {muted}; padding: 24px;")
        self.right = QStackedWidget()
        self.right.addWidget(self.rollout)
        self.right.addWidget(self.note)
        row((self.mean, 1), (self.right, 1), parent=self, margins=0)
        self.mean_values: np.ndarray | None = None
        self.rollout_values: np.ndarray | None = None
        self.mean.describe = lambda q, k: weight_text(self.mean, q, k, "mean over heads", 6)
        self.rollout.describe = lambda q, k: weight_text(self.rollout, q, k, "rollout", 6, ROLLOUT_SOURCE)
        for heatmap in (self.mean, self.rollout):
            heatmap.hovered.connect(self.hovered)

    def set_data(self, data: AttentionData, kind: str, layer: int) -> None:
        if kind not in data.weights or layer >= data.n_layers(kind):
            self.mean.clear_data()
            self.rollout.clear_data()
            return
        w, allowed = data.weights[kind], data.allowed[kind]
        q_labels, k_labels = data.labels[kind]
        q_name, k_name = data.axis_names(kind)
        self.mean_values = mean_over_heads(w[layer])
        self.mean.set_data(self.mean_values, q_labels, k_labels, allowed=allowed)
        self.mean.set_axis_names(f"query ({q_name})", f"key ({k_name})")
        self.mean.set_title(f"Derived: mean of {w.shape[1]} heads, L{layer + 1}")
        if kind in ROLLOUT_KINDS:
            self.rollout_values = rollout(w, upto=layer)
            self.rollout.set_data(self.rollout_values, q_labels, k_labels, allowed=allowed)
            self.rollout.set_axis_names(f"after L{layer + 1}", f"input ({k_name})")
            self.rollout.set_title(f"Derived: rollout, L1–L{layer + 1}" if layer else "Derived: rollout, L1")
            self.right.setCurrentWidget(self.rollout)
        else:
            self.rollout_values = None
            self.rollout.clear_data()
            self.right.setCurrentWidget(self.note)
