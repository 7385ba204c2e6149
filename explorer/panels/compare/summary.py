"""Which heads changed: mean |B − A| per layer and head of one kind of attention, as a grid.

Rows are layers, columns heads (counted from 1, as everywhere on screen); the scale runs from
0 to the largest head's value and is stated on the colour bar. Clicking a cell selects that
head, so the maps beside show it.
"""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Signal

from explorer.drawing import plot_style as st
from explorer.drawing.canvas_widget import CanvasWidget
from explorer.drawing.heatmap_items import HeatmapPlot
from explorer.panels.compare.maps import MIN_SCALE


class HeadChanges(CanvasWidget):
    """Signals: hovered(text); headClicked(layer, head)."""

    hovered = Signal(str)
    headClicked = Signal(int, int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.grid = HeatmapPlot(self.canvas.ci, 0, 0, st.weight_cmap(), (0.0, 1.0), "head", "layer")
        self.bar = st.colorbar(st.weight_cmap(), (0.0, 1.0), "mean |B − A|")
        self.bar.axis.enableAutoSIPrefix(False)
        self.bar.axis.setWidth(90)  # "0.15" and the title beside it, apart
        self.canvas.ci.addItem(self.bar, row=0, col=1)
        st.let_shrink(self.grid.plot.titleLabel)
        self.values: np.ndarray | None = None
        self.canvas.scene().sigMouseMoved.connect(self._on_move)
        self.canvas.scene().sigMouseClicked.connect(self._on_click)

    def set_values(self, values: np.ndarray, kind_name: str) -> None:
        """`values`: (layers, heads) mean |B − A|."""
        self.values = np.asarray(values, dtype=np.float32)
        top = max(float(self.values.max()) if self.values.size else 0.0, MIN_SCALE)
        self.grid.set_levels((0.0, top))
        self.bar.setLevels((0.0, top))
        layers, heads = self.values.shape
        self.grid.set_map(self.values, None, [f"H{h + 1}" for h in range(heads)], [f"L{i + 1}" for i in range(layers)])
        st.set_title(self.grid.plot, f"Mean |B − A| per head: {kind_name}")

    def most_changed(self) -> tuple[int, int] | None:
        if self.values is None or not self.values.size:
            return None
        layer, head = np.unravel_index(int(np.argmax(self.values)), self.values.shape)
        return int(layer), int(head)

    def clear(self) -> None:
        self.values = None
        self.grid.clear()

    def _on_move(self, scene_pos) -> None:
        cell = self.grid.cell_at(scene_pos)
        if cell is None or self.values is None:
            self.hovered.emit("")
            return
        layer, head = cell
        self.hovered.emit(f"layer {layer + 1}, head {head + 1}: mean |B − A| = {self.values[layer, head]:.4f} "
                          "(click to show this head)")

    def _on_click(self, event) -> None:
        cell = self.grid.cell_at(event.scenePos())
        if cell is not None:
            self.headClicked.emit(*cell)
