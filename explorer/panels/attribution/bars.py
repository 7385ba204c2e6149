"""`MethodBars`: every method's scores as a row of bars over one shared token axis (compare the
methods down a column). Each row is scaled to its own largest |score|, printed on the right (the
methods' units differ); a negative score has its own colour, each method's top-1 token is outlined."""
from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg

from explorer import style
from explorer.drawing import plot_style as st
from explorer.drawing.label_axis import LabelAxis
from explorer.drawing.token_heatmap import display_piece
from model.interpret.attribution import METHOD_TITLES, METHODS, top1
from model.interpret.attribution.gradients import short_value

SHORT_NAMES = {"attention": "attn", "attention_head": "head", "rollout": "roll", "flow": "flow",
               "grad_x_input": "g×i", "integrated_gradients": "IG", "occlusion": "occl"}
ROW_FILL = 0.78  # the tallest bar's share of its row


def legend_html() -> str:
    """What the short names stand for (the bars' and the table's tooltip)."""
    rows = "".join(f"<tr><td><b>{SHORT_NAMES[m]}</b></td><td>{METHOD_TITLES[m]}</td></tr>" for m in METHODS)
    return f"<table>{rows}</table><br>"


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
        self.titles: dict[str, str] = {}
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
        plot.getAxis("right").setStyle(tickFont=style.font(style.SMALL_POINT_SIZE), tickLength=0)
        plot.getAxis("left").setStyle(tickFont=style.font(style.BASE_POINT_SIZE), tickLength=0)
        if self.scores:
            self.set_data(self.pieces, self.scores, self.titles)

    def set_data(self, pieces: list[str], scores: dict[str, np.ndarray], titles: dict[str, str]) -> None:
        """pieces: the input tokens; scores: method → one score per token (in display order,
        top row first); titles: method → its row's short name."""
        self.pieces, self.scores, self.titles = list(pieces), dict(scores), dict(titles)
        n_rows, n = len(scores), len(pieces)
        xs, y0s, heights, brushes, pens, maxima = [], [], [], [], [], []
        for r, values in enumerate(scores.values()):
            base = n_rows - 1 - r + 0.08
            values = np.asarray(values, float)
            peak = float(np.max(np.abs(values))) if len(values) else 0.0
            best = top1(values) if peak > 0 else -1
            for j, v in enumerate(values):
                xs.append(j)
                y0s.append(base)
                heights.append(abs(v) / peak * ROW_FILL if peak > 0 else 0.0)
                brushes.append(st.colour("bar" if v >= 0 else "attribution_negative"))
                pens.append(pg.mkPen(st.colour("chosen"), width=3) if j == best else pg.mkPen(st.colour("bar_edge")))
            maxima.append((base + 0.37, short_value(peak) if peak > 0 else "all 0"))
        self.bars.setOpts(x=xs, y0=y0s, height=heights, width=0.72, brushes=brushes, pens=pens)
        self.bars.setVisible(bool(xs))
        plot = self.getPlotItem()
        plot.setYRange(0, max(n_rows, 1), padding=0.01)
        plot.setXRange(-0.5, max(n, 1) - 0.5, padding=0.01)
        plot.getAxis("left").setTicks([[(n_rows - 1 - r + 0.45, titles.get(m, m)) for r, m in enumerate(scores)]])
        plot.getAxis("right").setTicks([maxima])
        self.tokens_axis.set_tokens([display_piece(p) for p in self.pieces], numeric=False, origin=-0.5)
        self.setToolTip(self._tooltip())

    def _tooltip(self) -> str:
        rows = ["<tr><th></th>" + "".join(f"<th>{html.escape(p)}</th>" for p in self.pieces) + "</tr>"]
        for method, values in self.scores.items():
            cells = "".join(f"<td>{style.format_value(v)}</td>" for v in values)
            rows.append(f"<tr><td>{html.escape(self.titles.get(method, method))}</td>{cells}</tr>")
        return "<table>" + "".join(rows) + "</table>"

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
