"""Which heads changed: mean |B − A| per layer and head of one kind of attention, as a grid.

Rows are layers, columns heads (counted from 1, as everywhere on screen); the scale runs from
0 to the largest head's value and is stated on the colour bar. Clicking a cell selects that
head, so the maps beside show it.
"""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QVBoxLayout, QWidget

from explorer.drawing import plot_style as st
from explorer.drawing.heatmap import Heatmap
from explorer.panels.compare.maps import MIN_SCALE


class HeadChanges(QWidget):
    """Signals: hovered(text); headClicked(layer, head)."""

    hovered = Signal(str)
    headClicked = Signal(int, int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.grid = Heatmap(colormap=st.weight_cmap(), colour_bar="mean |B − A|", square=False)
        self.grid.set_axis_names("layer", "head")
        self.grid.describe = lambda layer, head: (f"layer {layer + 1}, head {head + 1}: mean |B − A| = "
                                                  f"{self.values[layer, head]:.4f} (click to show this head)")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.grid)
        self.values: np.ndarray | None = None
        self.grid.hovered.connect(self.hovered)
        self.grid.cellClicked.connect(self.headClicked)

    def set_values(self, values: np.ndarray, kind_name: str) -> None:
        """`values`: (layers, heads) mean |B − A|."""
        self.values = np.asarray(values, dtype=np.float32)
        self.grid.set_levels((0.0, max(float(self.values.max()) if self.values.size else 0.0, MIN_SCALE)))
        layers, heads = self.values.shape
        self.grid.set_data(self.values, [f"L{i + 1}" for i in range(layers)], [f"H{h + 1}" for h in range(heads)],
                           row_names=True)
        self.grid.set_title(f"Mean |B − A| per head: {kind_name}")

    def most_changed(self) -> tuple[int, int] | None:
        if self.values is None or not self.values.size:
            return None
        layer, head = np.unravel_index(int(np.argmax(self.values)), self.values.shape)
        return int(layer), int(head)

    def clear(self) -> None:
        self.values = None
        self.grid.clear_data()
        self.grid.set_title("")
