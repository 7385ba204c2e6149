"""Each model's output, scored by both: a bar chart per output, a pair of bars per token (the
probability A gives it, and B after the same prefix), A always in A's colour, B in B's."""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

from explorer import theme
from explorer.drawing import plot_style as st
from explorer.drawing.label_axis import LabelAxis
from explorer.drawing.token_heatmap import display_piece
from explorer.panels.layouts import column
from explorer.style import still_plot
from model.interpret.comparison_texts import token_text

BAR = 0.38  # two bars per token, side by side


class ScoredBars:
    """One output's bar pairs in one plot: the writer's bar left, the other model's right."""

    def __init__(self, layout: pg.GraphicsLayout, col: int):
        self.axis = LabelAxis("bottom")
        self.plot: pg.PlotItem = still_plot(layout.addPlot(row=0, col=col, axisItems={"bottom": self.axis}))
        self.plot.setYRange(0, 1.05, padding=0)
        st.style_axis(self.plot.getAxis("left"), "probability")
        st.style_axis(self.axis, "output token")
        self.axis.name_with_count("output token")  # "output token · 12 of 25 labels" when strided
        st.let_shrink(self.plot.titleLabel)
        self.bars = pg.BarGraphItem(x=[], height=[], width=BAR)  # the writer's bars, then the other model's
        self.plot.addItem(self.bars)
        self.output = None

    def set_output(self, output) -> None:
        """`output`: a ScoredOutput (model.interpret.comparison)."""
        self.output = output
        x = np.arange(len(output.pieces), dtype=float)
        colours = dict(zip("AB", theme.current().series))  # A's and B's colours in the current theme
        other_writer = "B" if output.writer == "A" else "A"
        pairs = np.concatenate([x - BAR / 2, x + BAR / 2])  # every writer's bar, then every other's
        brushes = [colours[output.writer]] * len(x) + [colours[other_writer]] * len(x)
        heights = np.concatenate([output.own, output.other])
        self.bars.setOpts(x=pairs, height=heights, width=BAR, brushes=brushes, pen=None)
        self.axis.set_tokens([display_piece(p) for p in output.pieces], numeric=False, origin=-0.5)
        self.plot.setXRange(-0.6, max(len(x), 1) - 0.4, padding=0)
        key = " · ".join(f"<b style='color:{colours[m]}'>■ {m}</b>" for m in "AB")  # the bars' colours: no legend over them
        st.set_title(self.plot, f"{output.writer}'s output: {key}")  # (the tab says "scored by both")

    def token_at(self, scene_pos) -> int | None:
        if self.output is None or not self.plot.vb.sceneBoundingRect().contains(scene_pos):
            return None
        i = math.floor(self.plot.vb.mapSceneToView(scene_pos).x() + 0.5)
        return i if 0 <= i < len(self.output.pieces) else None


class OutputBars(QWidget):
    """Both outputs' bar charts; hovered(text) names the token and both probabilities."""

    hovered = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.canvas = st.graphics_widget()
        column(self.canvas, parent=self, margins=0)
        self.bars_a, self.bars_b = ScoredBars(self.canvas.ci, 0), ScoredBars(self.canvas.ci, 1)
        self.recolour()
        self.canvas.scene().sigMouseMoved.connect(self._on_move)
        theme.notifier().changed.connect(self.recolour)

    def set_outputs(self, output_a, output_b) -> None:
        self.bars_a.set_output(output_a)
        self.bars_b.set_output(output_b)

    def recolour(self, *_args) -> None:
        st.restyle_view(self.canvas)  # axes and titles in the palette's colours (the titles name the bars')
        for bars in (self.bars_a, self.bars_b):
            if bars.output is not None:
                bars.set_output(bars.output)

    def _on_move(self, scene_pos) -> None:
        for bars in (self.bars_a, self.bars_b):
            i = bars.token_at(scene_pos)
            if i is not None:
                self.hovered.emit(token_text(bars.output, i))
                return
        self.hovered.emit("")
