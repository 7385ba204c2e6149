"""`SamplingBars`: the top of one next-token distribution, the most probable token on top: an
outline at its tempered probability softmax(logits / T) and, if it survives top-k and top-p, a
filled bar at its renormalised probability; a cut token keeps a grey outline and names its filter."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt

from explorer import style
from explorer.drawing.label_axis import display_piece
from explorer.input_text import printable

ROWS = 12  # tokens shown: the top of the ranking (the rest are counted in the panel's summary)
BAR_HEIGHT = 0.7


class SamplingBars(pg.PlotWidget):
    """The ROWS most probable tokens; `show_rows` redraws them."""

    def __init__(self, parent=None):
        super().__init__(parent=parent, enableMenu=False)
        plot = style.still_plot(self.getPlotItem())
        plot.showGrid(x=True, alpha=0.25)
        plot.setLabel("bottom", "probability", **{"font-size": style.css_pt(style.SMALL_POINT_SIZE)})
        plot.getAxis("left").setStyle(tickFont=style.font(style.BASE_POINT_SIZE, bold=True, mono=True), tickLength=0)
        plot.getAxis("bottom").setStyle(tickFont=style.font(style.SMALL_POINT_SIZE))
        plot.getAxis("bottom").enableAutoSIPrefix(False)  # probabilities, never "× 0.001"
        self.kept_bars = pg.BarGraphItem(x0=[0], y=[0], width=[0], height=BAR_HEIGHT)
        self.outlines = pg.BarGraphItem(x0=[0], y=[0], width=[0], height=BAR_HEIGHT)
        self.labels = [pg.TextItem(anchor=(0, 0.5)) for _ in range(ROWS)]  # each row's probability or cut
        for item in (self.kept_bars, self.outlines, *self.labels):
            plot.addItem(item, ignoreBounds=isinstance(item, pg.TextItem))
            if isinstance(item, pg.TextItem):
                item.setFont(style.font(style.SMALL_POINT_SIZE))
        self.rows: list[int] = []  # token ids drawn, top row first
        self.final = np.zeros(0, dtype=np.float32)  # their renormalised probabilities
        self.tempered = np.zeros(0, dtype=np.float32)
        self.notes: list[str] = []  # "" kept, "top-k" / "top-p": the filter that cut the row's token
        self._ticks: list = []

    def show_rows(self, ids: list[int], pieces: list[str], tempered: np.ndarray, final: np.ndarray,
                  notes: list[str]) -> None:
        """Draw these tokens (best first) with their tempered and final probabilities."""
        n = len(ids)
        self.rows, self.tempered, self.final, self.notes = list(ids), tempered, final, list(notes)
        y = np.arange(n, dtype=float)[::-1]  # the best token at the top
        self.kept_bars.setOpts(x0=np.zeros(n), y=y, width=final, height=BAR_HEIGHT,
                               brush=style.colour("bar"), pen=pg.mkPen(style.colour("bar_edge")))
        cut = np.array([bool(note) for note in notes])
        edge = [pg.mkPen(style.colour("masked") if c else style.TEXT, width=2, style=Qt.DashLine) for c in cut]
        self.outlines.setOpts(x0=np.zeros(n), y=y, width=tempered, height=BAR_HEIGHT, brush=None,
                              pen=pg.mkPen(style.TEXT), pens=edge or None)  # (pyqtgraph needs a pen for no bars)
        top = float(max(final.max(initial=0.0), tempered.max(initial=0.0), 1e-6))
        plot = self.getPlotItem()
        plot.setXRange(0, min(1.0, top) * 1.25, padding=0)
        plot.setYRange(-0.6, max(n, 1) - 0.4, padding=0)
        ticks = [[(float(y[i]), display_piece(printable(pieces[i]))) for i in range(n)]]
        if ticks != self._ticks:  # the ranking is the logits': a temperature never changes it
            self._ticks = ticks
            plot.getAxis("left").setTicks(ticks)
        for i, label in enumerate(self.labels):
            label.setVisible(i < n)
            if i >= n:
                continue
            text = f"✂ {notes[i]}  (was {tempered[i]:.3f})" if notes[i] else f"{final[i]:.3f}"
            label.setColor(style.colour("muted") if notes[i] else style.TEXT)
            label.setText(text)
            label.setPos(max(final[i], tempered[i]) + 0.005 * top, float(y[i]))


__all__ = ["ROWS", "SamplingBars"]
