"""`LogitBars`: direct logit attribution as horizontal bars, the largest |contributions| on top (as
many as the height gives a readable label, every value in the tooltip): right raises the logit
difference, left lowers it (its own colour)."""
from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QFontMetricsF

from explorer import style
from explorer.drawing import plot_style as st

MOST_SHOWN = 12  # bars drawn at most: the largest |contributions|


class LogitBars(pg.PlotWidget):
    def __init__(self, parent=None):
        super().__init__(parent=parent, enableMenu=False)
        plot = style.still_plot(self.getPlotItem())
        self.bars = pg.BarGraphItem(x0=[0], y=[0], width=[0], height=0.7)
        self.bars.setVisible(False)
        plot.addItem(self.bars)
        self.zero = pg.InfiniteLine(pos=0, angle=90)
        plot.addItem(self.zero)
        self.labels: list[str] = []
        self.values = np.zeros(0)
        self.shown: list[int] = []
        self.restyle()

    def restyle(self) -> None:
        """The theme's colours and fonts (called again on a theme change)."""
        self.setBackground(st.colour("canvas"))
        plot = self.getPlotItem()
        st.style_axis(plot.getAxis("bottom"))  # (the panel's heading above the plot names the axis)
        st.style_axis(plot.getAxis("left"))
        for name in ("left", "bottom"):
            plot.getAxis(name).setStyle(tickFont=style.font(style.SMALL_POINT_SIZE))
        self.zero.setPen(pg.mkPen(st.colour("text"), width=1))
        if len(self.values):
            self.set_data(self.labels, self.values)

    def set_data(self, labels: list[str], values: np.ndarray) -> None:
        """labels: "L1 H2", "L1 MLP" …; values: each one's direct effect (logit units)."""
        self.labels, self.values = list(labels), np.asarray(values, float)
        order = np.argsort(-np.abs(self.values), kind="stable")[:self.fitting()]
        self.shown = [int(i) for i in order]
        n = len(self.shown)
        ys = list(range(n))
        widths = [float(self.values[i]) for i in self.shown]
        brushes = [st.colour("bar" if w >= 0 else "attribution_negative") for w in widths]
        self.bars.setOpts(x0=[0.0] * n, y=ys, width=widths, height=0.7, brushes=brushes,
                          pens=[pg.mkPen(st.colour("bar_edge"))] * n)
        self.bars.setVisible(bool(n))
        plot = self.getPlotItem()
        plot.invertY(True)  # the largest on top
        plot.getAxis("left").setTicks([[(y, self.labels[i]) for y, i in zip(ys, self.shown)]])
        low, high = min(0.0, *widths) if n else 0.0, max(0.0, *widths) if n else 1.0
        pad = 0.05 * max(high - low, 1e-6)
        plot.setXRange(low - pad, high + pad, padding=0)
        plot.setYRange(-0.6, max(n, 1) - 0.4, padding=0)
        self.setToolTip(self._tooltip())

    def _tooltip(self) -> str:
        rows = "".join(f"<tr><td>{html.escape(label)}</td><td align='right'>{value:+.3f}</td></tr>"
                       for label, value in zip(self.labels, self.values))
        return (f"Each head's and MLP's direct effect on the logit difference (the {len(self.shown)} largest "
                f"are drawn):<table>{rows}</table>")

    def fitting(self) -> int:
        """How many bars the plot's height gives a label line each."""
        height = self.getPlotItem().getViewBox().height()
        line = QFontMetricsF(style.font(style.SMALL_POINT_SIZE)).lineSpacing() * 1.15
        return max(3, min(MOST_SHOWN, int(height / line))) if height > 0 else MOST_SHOWN

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if "values" in self.__dict__ and len(self.values) and self.fitting() != len(self.shown):
            self.set_data(self.labels, self.values)

    def clear_data(self) -> None:
        self.labels, self.values, self.shown = [], np.zeros(0), []
        self.bars.setVisible(False)
        self.getPlotItem().getAxis("left").setTicks([[]])

    def drawn_labels(self) -> list[str]:
        """The bars' labels, top first (tests look at the view)."""
        return [self.labels[i] for i in self.shown] if self.bars.isVisible() else []
