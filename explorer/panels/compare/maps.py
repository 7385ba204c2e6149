"""A's map, B's map and B − A for one head, side by side. The difference is on a symmetric scale
±m (m: this head's largest |B − A|, written on its title); a difference of exactly zero is not
drawn as a box of the map's middle colour: its place says "identical"."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

from explorer.drawing import plot_style as st
from explorer.drawing.heatmap import Heatmap
from explorer.panels.layouts import row
from explorer.theme import notifier

MIN_SCALE = 1e-6  # a zero difference still needs a non-empty colour scale


def symmetric_scale(diff: np.ndarray, allowed: np.ndarray | None = None) -> tuple[float, bool]:
    """(m, zero): the largest |B − A| among the cells a query may attend (at least MIN_SCALE), and
    whether it is exactly 0."""
    cells = diff[allowed] if allowed is not None and allowed.any() else diff
    m = float(np.abs(cells).max()) if cells.size else 0.0
    return max(m, MIN_SCALE), m == 0.0


class ComparisonMaps(QWidget):
    """Signals: hovered(text) with A's, B's weight and their difference under the mouse."""

    hovered = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.map_a = Heatmap(colormap=st.weight_cmap(), levels=st.WEIGHT_LEVELS)
        self.map_b = Heatmap(colormap=st.weight_cmap(), levels=st.WEIGHT_LEVELS, colour_bar=True)
        self.map_diff = Heatmap(colormap=st.signed_cmap(), levels=(-1.0, 1.0), colour_bar=True)
        self.diff_bar = self.map_diff.bar
        self.plots = (self.map_a, self.map_b, self.map_diff)
        row(*((heatmap, 1) for heatmap in self.plots), parent=self, margins=0)  # the maps share the width equally
        for heatmap in self.plots:
            heatmap.describe = lambda q, k, h=heatmap: self._describe(h, q, k)
            heatmap.hovered.connect(self.hovered)
        self.identical = pg.TextItem("identical", anchor=(0.5, 0.5))  # B − A = 0 everywhere
        self.identical.setFont(st.font(st.LABEL_PT, bold=True))
        self.identical.setVisible(False)
        self.map_diff.plot.addItem(self.identical, ignoreBounds=True)
        notifier().changed.connect(self._recolour)  # a TextItem keeps the colour it was given
        self._recolour()
        self.scale = 1.0
        self.values: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def set_maps(self, a: np.ndarray, b: np.ndarray, allowed: np.ndarray, q_labels: list[str], k_labels: list[str],
                 head: str, axis_names: tuple[str, str] = ("query", "key")) -> None:
        """Draw one head of A and B (T_q × T_k each) and B − A; `head` names it ("L1 H2")."""
        diff = b - a
        self.values = (a, b, diff)
        self.scale, zero = symmetric_scale(diff, allowed)
        self.map_diff.set_levels((-self.scale, self.scale))
        for heatmap, values in zip(self.plots, self.values):
            heatmap.set_data(values, q_labels, k_labels, allowed=allowed)
        self.map_a.set_axis_names(f"query ({axis_names[0]})", "key")
        self.map_a.set_title(f"A · {head}")
        self.map_b.set_title(f"B · {head}")
        self.map_diff.set_title("B − A = 0" if zero else f"B − A (±{self.scale:.2g})")
        self.map_diff.image.setVisible(not zero)
        self.diff_bar.setVisible(not zero)
        self.identical.setVisible(zero)
        self.identical.setPos(diff.shape[1] / 2, diff.shape[0] / 2)

    def _recolour(self, _theme: str = "") -> None:
        self.identical.setColor(st.colour("text"))

    def clear(self) -> None:
        self.values = None
        self.identical.setVisible(False)
        self.map_diff.image.setVisible(True)
        self.diff_bar.setVisible(True)
        for heatmap in self.plots:
            heatmap.clear_data()
            heatmap.set_title("")

    def _describe(self, heatmap: Heatmap, q: int, k: int) -> str:
        qs, ks = heatmap.row_labels, heatmap.col_labels
        a, b, d = (float(v[q, k]) for v in self.values)
        where = f"query {q} “{qs[q]}” → key {k} “{ks[k]}”"
        if heatmap.allowed is not None and not heatmap.allowed[q, k]:
            return f"{where}: blocked by the mask in both (weight exactly 0)"
        return f"{where}: A {a:.4f}, B {b:.4f}, B − A {d:+.4f}"
