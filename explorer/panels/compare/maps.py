"""A's map, B's map and their difference B − A for one head, side by side on one canvas.

A and B use the weights' own map (viridis on [0, 1]); the difference uses the theme's
diverging map on a symmetric scale ±m, where m is the largest |B − A| of this head (white is
exactly no change), and the scale is written on the map's title and colour bar. A difference
that is zero everywhere is not drawn as a box of the map's middle colour (a glaring pale square
on the dark theme, saying nothing): the map's place says "identical". Plot items are created
once and updated in place.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal

from explorer.drawing import plot_style as st
from explorer.drawing.canvas_widget import CanvasWidget
from explorer.drawing.heatmap_items import HeatmapPlot
from explorer.theme import notifier

MIN_SCALE = 1e-6  # a zero difference still needs a non-empty colour scale


def symmetric_scale(diff: np.ndarray, allowed: np.ndarray | None = None) -> float:
    """m for the diverging scale ±m: the largest |B − A| among the cells a query may attend."""
    cells = diff[allowed] if allowed is not None and allowed.any() else diff
    m = float(np.abs(cells).max()) if cells.size else 0.0
    return max(m, MIN_SCALE)


def diff_titles(m: float, zero: bool = False) -> tuple[str, ...]:
    """The difference map's title, its scale (or, `zero`: B − A is exactly 0, that there is
    none), then shorter forms for a narrow map (the colour bar beside it is titled "B − A")."""
    return ("B − A = 0",) if zero else (f"B − A (±{m:.2g})", f"B − A ±{m:.2g}", f"±{m:.2g}")


def exactly_zero(diff: np.ndarray, allowed: np.ndarray | None = None) -> bool:
    """B − A is 0 in every cell a query may attend (not merely below the colour scale's floor)."""
    cells = diff[allowed] if allowed is not None and allowed.any() else diff
    return not np.any(cells)


class ComparisonMaps(CanvasWidget):
    """Signals: hovered(text) with A's, B's weight and their difference under the mouse."""

    hovered = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        layout = self.canvas.ci
        self.map_a = HeatmapPlot(layout, 0, 0, st.weight_cmap(), st.WEIGHT_LEVELS, "key", "query", square=True)
        self.map_b = HeatmapPlot(layout, 0, 1, st.weight_cmap(), st.WEIGHT_LEVELS, "key", "", square=True)
        self.weight_bar = st.colorbar(st.weight_cmap(), st.WEIGHT_LEVELS, "weight")
        layout.addItem(self.weight_bar, row=0, col=2)
        self.map_diff = HeatmapPlot(layout, 0, 3, st.signed_cmap(), (-1.0, 1.0), "key", "", square=True)
        self.diff_bar = st.colorbar(st.signed_cmap(), (-1.0, 1.0), "B − A")
        self.diff_bar.axis.enableAutoSIPrefix(False)  # "±0.26", never "±260 (×0.001)"
        self.diff_bar.axis.setWidth(90)  # "-0.25" and the title beside it, apart
        layout.addItem(self.diff_bar, row=0, col=4)
        for plot in (self.map_a, self.map_b, self.map_diff):
            st.let_shrink(plot.plot.titleLabel)
        for col, plot in zip((0, 1, 3), (self.map_a, self.map_b, self.map_diff)):
            # the three maps share the width equally (their own preferred widths, which follow their
            # titles and labels, gave B − A twice A's room); the colour bars keep theirs
            layout.layout.setColumnStretchFactor(col, 1)
            plot.plot.setPreferredWidth(1)
        self.identical = pg.TextItem("identical", anchor=(0.5, 0.5))  # B − A = 0 everywhere
        self.identical.setFont(st.font(st.LABEL_PT, bold=True))
        self.identical.setVisible(False)
        self.map_diff.plot.addItem(self.identical, ignoreBounds=True)
        notifier().changed.connect(self._recolour)  # a TextItem keeps the colour it was given
        self._recolour()
        self.scale = 1.0
        self.values: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self.labels: tuple[list[str], list[str]] = ([], [])
        self.canvas.scene().sigMouseMoved.connect(self._on_move)

    @property
    def plots(self) -> tuple[HeatmapPlot, HeatmapPlot, HeatmapPlot]:
        return self.map_a, self.map_b, self.map_diff

    def set_maps(self, a: np.ndarray, b: np.ndarray, allowed: np.ndarray, q_labels: list[str], k_labels: list[str],
                 head: str, axis_names: tuple[str, str] = ("query", "key")) -> None:
        """Draw one head of A and B (T_q × T_k each) and B − A; `head` names it ("L1 H2")."""
        diff = b - a
        self.values, self.labels = (a, b, diff), (list(q_labels), list(k_labels))
        self.scale = symmetric_scale(diff, allowed)
        self.map_diff.set_levels((-self.scale, self.scale))
        self.diff_bar.setLevels((-self.scale, self.scale))
        for plot, values in zip(self.plots, self.values):
            plot.set_map(values, allowed, k_labels, q_labels)
            # a long name ("prompt | continuation") would run into the next map's: the query axis says it
            st.style_axis(plot.x_axis, f"key ({axis_names[1]})" if len(axis_names[1]) <= 8 else "key")
            st.style_axis(plot.y_axis, f"query ({axis_names[0]})")  # on all three: maps of one size
        st.set_title(self.map_a.plot, f"A · {head}")
        st.set_title(self.map_b.plot, f"B · {head}")
        zero = exactly_zero(diff, allowed)
        st.fit_plot_title(self.map_diff.plot, diff_titles(self.scale, zero), self._diff_room)
        self.map_diff.image.setVisible(not zero)
        self.diff_bar.setVisible(not zero)  # a ±1e-06 scale for nothing invited a misreading
        self.identical.setVisible(zero)
        self.identical.setPos(diff.shape[1] / 2, diff.shape[0] / 2)
        for plot in self.plots:
            plot.hug()  # room for the title just set

    def _diff_room(self) -> float:
        """The difference map's width on screen ("identical" in its place: its view box's)."""
        plot = self.map_diff
        return plot.drawn_width() if plot.image.isVisible() and plot.drawn_width() > 1 else plot.plot.vb.width()

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """A title fitted while the tab was hidden had no room to measure: fit it to what is shown."""
        super().showEvent(event)
        st.refit_plot_title(self.map_diff.plot)

    def _recolour(self, _theme: str = "") -> None:
        self.identical.setColor(st.colour("text"))

    def clear(self) -> None:
        self.values = None
        self.identical.setVisible(False)
        self.map_diff.image.setVisible(True)
        self.diff_bar.setVisible(True)
        for plot in self.plots:
            plot.clear()
        for plot in (self.map_a, self.map_b):
            st.set_title(plot.plot, "")
        st.fit_plot_title(self.map_diff.plot, ("",))

    def _on_move(self, scene_pos) -> None:
        if self.values is None:
            return
        for plot in self.plots:
            cell = plot.cell_at(scene_pos)
            if cell is not None:
                break
        else:
            self.hovered.emit("")
            return
        q, k = cell
        qs, ks = self.labels
        a, b, d = (float(v[q, k]) for v in self.values)
        where = f"query {q} “{qs[q]}” → key {k} “{ks[k]}”"
        if plot.allowed is not None and not plot.allowed[q, k]:
            self.hovered.emit(f"{where}: blocked by the mask in both (weight exactly 0)")
            return
        self.hovered.emit(f"{where}: A {a:.4f}, B {b:.4f}, B − A {d:+.4f}")
