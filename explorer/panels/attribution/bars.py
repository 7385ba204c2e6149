"""`MethodBars`: every method's scores as a row of bars over one shared token axis (`bar_rows`: each
row scaled to its largest |score|, printed on the right), negative scores in their own colour,
each method's top-1 token outlined."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from explorer import style
from explorer.drawing import plot_style as st
from explorer.drawing.label_axis import LabelAxis
from explorer.drawing.token_heatmap import display_piece
from model.interpret.attribution.method_texts import ROW_FILL, bar_rows, legend_html, scores_html


class MethodBars(pg.PlotWidget):
    def __init__(self, parent=None):
        self.tokens_axis = LabelAxis("bottom")  # the one label policy: readable, turned, or strided and counted
        super().__init__(parent=parent, enableMenu=False, axisItems={"bottom": self.tokens_axis})
        plot = style.still_plot(self.getPlotItem())
        self.bars = pg.BarGraphItem(x=[0], y0=[0], height=[0], width=0.72, brush=st.colour("bar"), pen=st.colour("bar"))
        self.bars.setVisible(False)
        plot.addItem(self.bars)
        self.pieces: list[str] = []
        self.scores: dict[str, np.ndarray] = {}
        self.restyle()
        self.tokens_axis.name_with_count("input token")

    def restyle(self) -> None:
        """The theme's colours and fonts (called again on a theme change)."""
        self.setBackground(st.colour("canvas"))
        plot = self.getPlotItem()
        plot.showAxis("right")
        st.style_axis(plot.getAxis("left"))
        st.style_axis(self.tokens_axis)
        self.tokens_axis.setLabel("input token", color=st.current().text,  # at the labels' size: the axis holds it
                                  **{"font-size": style.css_pt(st.TICK_PT)})
        st.style_axis(plot.getAxis("right"), "row's largest |score|")  # what the numbers there are
        plot.getAxis("right").setStyle(tickFont=style.role_font("small"), tickLength=0)
        plot.getAxis("left").setStyle(tickFont=style.role_font("body"), tickLength=0)
        if self.scores:
            self.set_data(self.pieces, self.scores)

    def set_data(self, pieces: list[str], scores: dict[str, np.ndarray]) -> None:
        """pieces: the input tokens; scores: method → one score per token, top row first."""
        self.pieces, self.scores = list(pieces), dict(scores)
        rows = bar_rows(scores)
        chosen, edge = pg.mkPen(st.colour("chosen"), width=3), pg.mkPen(st.colour("bar_edge"))
        self.bars.setOpts(x=rows.x, y0=rows.y0, height=rows.height, width=0.72,
                          brushes=[st.colour("attribution_negative" if neg else "bar") for neg in rows.negative],
                          pens=[chosen if best else edge for best in rows.best])
        self.bars.setVisible(bool(rows.x))
        plot = self.getPlotItem()
        plot.setYRange(0, max(len(scores), 1), padding=0.01)
        plot.setXRange(-0.5, max(len(pieces), 1) - 0.5, padding=0.01)
        plot.getAxis("left").setTicks([rows.names])
        plot.getAxis("right").setTicks([rows.peaks])
        self.tokens_axis.set_tokens([display_piece(p) for p in self.pieces], numeric=False, origin=-0.5)
        self.setToolTip(legend_html() + scores_html(self.pieces, self.scores))

    def clear_data(self) -> None:
        self.pieces, self.scores = [], {}
        self.bars.setVisible(False)
        for name in ("right", "left"):
            self.getPlotItem().getAxis(name).setTicks([[]])
        self.tokens_axis.set_tokens([], numeric=False)

    def bar_count(self) -> int:
        """How many bars are drawn (tests look at the view)."""
        return len(self.bars.opts.get("x") or []) if self.bars.isVisible() else 0

    def heights_of(self, method: str) -> np.ndarray:
        """The drawn heights of one method's row, as fractions of its largest |score|."""
        r = list(self.scores).index(method)
        n = len(self.pieces)
        return np.asarray(self.bars.opts["height"][r * n:(r + 1) * n]) / ROW_FILL
