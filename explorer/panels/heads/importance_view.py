"""Head importance as a figure: each head's importance (bars, a colour per attention kind), the
pruning curve (held-out score versus heads removed, least important first), the ranking per kind."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QWidget

from explorer.drawing import plot_style as st
from explorer.panels.layouts import column
from explorer.panels.texts import text_label
from explorer.style import still_plot
from explorer.theme import current
from model.interpret.importance import HeadImportance

KIND_SHORT = {"encoder": "enc", "decoder_self": "dec-self", "cross": "cross"}


class ImportanceView(QWidget):
    """Bars of one importance measure and the pruning curve; `by` picks the measure drawn."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.canvas = st.graphics_widget()
        self.bars_plot = still_plot(self.canvas.addPlot(row=0, col=0))
        self.curve_plot = still_plot(self.canvas.addPlot(row=0, col=1))
        self.bars: list[pg.BarGraphItem] = []
        self.curve = self.curve_plot.plot([], [], symbol="o", symbolSize=6)
        self.ranking = text_label(" ", st.TICK_PT)
        column((self.canvas, 1), self.ranking, parent=self, margins=0)
        self.result: HeadImportance | None = None
        self.by = "masking"
        self.restyle()

    def restyle(self, *_) -> None:
        self.canvas.setBackground(current().canvas)
        st.style_axis(self.bars_plot.getAxis("left"), "Δ loss" if self.by == "masking" else "|∂L/∂ξ|")
        st.style_axis(self.bars_plot.getAxis("bottom"), "head (by kind)")
        st.style_axis(self.curve_plot.getAxis("left"), "exact match")
        st.style_axis(self.curve_plot.getAxis("bottom"), "heads removed")
        st.set_title(self.bars_plot, "Importance" + (" (masking)" if self.by == "masking" else " (gradient)"))
        st.set_title(self.curve_plot, "Pruning curve")
        self.curve.setPen(pg.mkPen(current().exact, width=2))
        self.curve.setSymbolBrush(current().exact)
        if self.result is not None:
            self.show_result(self.result, self.by)

    def show_result(self, result: HeadImportance, by: str = "masking") -> None:
        self.result, self.by = result, by
        for item in self.bars:
            self.bars_plot.removeItem(item)
        self.bars = []
        scores = result.scores(by)
        kinds = list(dict.fromkeys(k[0] for k in result.heads))
        x = 0
        ticks = []
        for i, kind in enumerate(kinds):
            heads = [k for k in result.heads if k[0] == kind]
            xs = np.arange(x, x + len(heads))
            colour = current().series[i % len(current().series)]
            bar = pg.BarGraphItem(x=xs, height=[scores[k] for k in heads], width=0.8, brush=colour, pen=colour)
            self.bars_plot.addItem(bar)
            self.bars.append(bar)
            ticks.append((float(xs.mean()), KIND_SHORT[kind]))
            x += len(heads) + 1
        self.bars_plot.getAxis("bottom").setTicks([ticks])
        self.curve.setData(result.curve_counts, result.curve_scores)
        self.curve_plot.setYRange(0, 1.02)
        if result.curve_counts:
            self.curve_plot.setXRange(0, max(result.curve_counts))
        self.ranking.setText("Most important per kind — " + "; ".join(
            f"<b>{KIND_SHORT[kind]}</b>: " + ", ".join(f"L{layer + 1}H{head + 1} {scores[(kind, layer, head)]:.3g}"
                                                    for _k, layer, head in result.ranking(kind, by)[:3])
            for kind in kinds))
