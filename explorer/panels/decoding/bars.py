"""`TopKBars`: the next-token distribution of one decoding step as labelled bars: the model's own
softmax (DecodeStep.model_probs), and when sampling the distribution sampled from (after
temperature / top-k / top-p) as dashed outlines on top."""
from __future__ import annotations

import html
import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetricsF

from explorer import style
from explorer.drawing.label_axis import MIN_LABEL_PT
from explorer.drawing.plot_style import fit_title_row, let_shrink
from explorer.drawing.token_heatmap import display_piece, fitted_ticks
from model.inference.bundle import smoothed_target
from model.inference.next_token import bar_order, bars_that_fit, caption_lines, ranked_ids, smoothing_tip

Y_TOP = 1.2  # room above a bar of p = 1 for its number
BAR_WIDTH = 0.7  # in slots
MIN_SLOT_CHARS = 4.5  # a bar's slot holds a 4-letter token ("<eos") or its value ("0.93")


def _pen(role: str, dash=Qt.PenStyle.DashLine, width: float = 2):
    return pg.mkPen(style.colour(role), width=width, style=dash)


def _tick_font():
    return style.font(style.BASE_POINT_SIZE + 1, bold=True, mono=True)


class TopKBars(pg.PlotWidget):
    """The k most probable next tokens (plus the chosen one if it ranks lower), as many as the
    width shows with their tokens whole; the rest stay in the data and the tooltips."""

    def __init__(self, k: int = 10, parent=None):
        super().__init__(parent=parent, enableMenu=False)
        self.k = k
        self.caption: list[str] = []
        plot = style.still_plot(self.getPlotItem())
        plot.showGrid(y=True, alpha=0.25)
        plot.setLabel("left", "probability", **{"font-size": style.css_pt(style.SMALL_POINT_SIZE)})
        plot.getAxis("bottom").setStyle(tickFont=_tick_font(), tickLength=0)
        plot.getAxis("left").setStyle(tickFont=style.font(style.SMALL_POINT_SIZE))
        plot.getAxis("left").setTicks([[(v, f"{v:g}") for v in (0, 0.2, 0.4, 0.6, 0.8, 1.0)]])  # no "1.2"
        self.bars = pg.BarGraphItem(x=[0], height=[0], width=BAR_WIDTH, brush=style.colour("bar"),
                                    pen=style.colour("bar"))  # pyqtgraph rejects empty pens
        self.sampled = pg.BarGraphItem(x=[], height=[], width=BAR_WIDTH, brush=None, pen=_pen("text"))
        self.skip_line = pg.InfiniteLine(angle=90, movable=False, pen=_pen("muted", Qt.PenStyle.DotLine))
        self.skip_line.setToolTip("The chosen token, from further down the ranking (its rank in its value's tooltip)")
        # Section 5.4: a model trained on smoothed targets aims its best guess at 1 − ε + ε/V
        self.smoothed = pg.InfiniteLine(angle=0, movable=False, pen=_pen("muted"))
        self.smoothed.setZValue(5)  # across the bar it concerns
        self.smoothed_label = pg.TextItem(anchor=(0, 0), color=style.MUTED)  # under the line, right of the top bar
        self.smoothed_label.setFont(style.font(style.SMALL_POINT_SIZE))
        for item in (self.bars, self.sampled, self.skip_line):
            plot.addItem(item)
        for item in (self.skip_line, self.smoothed, self.smoothed_label):
            item.setVisible(False)
        for item in (self.smoothed, self.smoothed_label):
            plot.addItem(item, ignoreBounds=True)
        self.smoothing = 0.0
        self.labels = [pg.TextItem(anchor=(0.5, 1.0), color=style.TEXT) for _ in range(k + 1)]  # above their bars
        for label in self.labels:
            label.setFont(style.font(style.SMALL_POINT_SIZE))
            label.setVisible(False)
            plot.addItem(label)
        self.token_ids: list[int] = []
        self.heights = np.zeros(0, dtype=np.float32)
        self.chosen: int | None = None
        self._ranked: list[int] = []
        plot.setYRange(0, Y_TOP, padding=0)
        let_shrink(plot.titleLabel)  # a caption never widens its cell

    def set_smoothing(self, epsilon: float, vocab_size: int) -> None:
        """The model was trained with label smoothing ε over `vocab_size` tokens (0: it was not,
        or that is not known): a dashed line at the smoothed target's top, 1 − ε + ε/V."""
        self.smoothing = epsilon if epsilon > 0 and vocab_size > 0 else 0.0
        on = self.smoothing > 0
        self.smoothed.setVisible(on)
        self.smoothed_label.setVisible(on)
        if not on:
            return
        self.smoothed.setValue(smoothed_target(epsilon, vocab_size))
        self.smoothed.setPen(_pen("muted"))  # (the theme's now)
        self.smoothed_label.setColor(style.MUTED)
        for item in (self.smoothed, self.smoothed_label):
            item.setToolTip(smoothing_tip(epsilon, vocab_size))
        self._place_smoothed()

    def _place_smoothed(self) -> None:
        """The line's name under it, right of the top bar (over it, it would hide the bar's
        value): the longest form that fits before the plot's right end."""
        if self.smoothing <= 0:
            return
        view = self.getPlotItem().getViewBox()
        (x0, x1), _ = view.viewRange()
        left = BAR_WIDTH / 2 + 0.05
        room = (x1 - left) * view.width() / max(x1 - x0, 1e-9) - 4
        top = self.smoothed.value()
        metrics = QFontMetricsF(self.smoothed_label.textItem.font())
        forms = (f"smoothed target {top:.2f}", f"target {top:.2f}", f"{top:.2f}")
        text = next((t for t in forms if metrics.horizontalAdvance(t) <= room), forms[-1])
        if self.smoothed_label.toPlainText() != text:
            self.smoothed_label.setText(text)
        self.smoothed_label.setPos(left, top)

    def set_caption(self, *parts: str) -> None:
        """The caption: its parts on one line, or on as many lines as the plot's width needs
        (a part is never broken): always whole."""
        self.caption = list(parts)
        self._show_caption()

    def _show_caption(self) -> None:
        plot = self.getPlotItem()
        size = style.BASE_POINT_SIZE * style.scale()
        f = style.font(style.BASE_POINT_SIZE)
        f.setPointSizeF(size)
        metrics = QFontMetricsF(f)
        room = self.width() - plot.getAxis("left").width() - 12  # centred over the bars
        # the title is rich text: a token such as <eos> would otherwise vanish as an unknown tag
        title = "<br>".join(html.escape(line) for line in caption_lines(self.caption, metrics.horizontalAdvance, room))
        if title != plot.titleLabel.text or plot.titleLabel.opts.get("size") != f"{size:.1f}pt":
            plot.setTitle(title, size=f"{size:.1f}pt")
            fit_title_row(plot)

    def set_data(self, probs, pieces: list[str], chosen: int | None, sample_probs=None) -> None:
        """probs: (V,) the model's distribution; pieces: the target vocabulary; chosen: the id
        the decoder emitted; sample_probs: (V,) what sampling drew from, or None."""
        probs = np.asarray(probs, dtype=np.float64)
        self._ranked = ids = ranked_ids(probs, self.k, chosen)
        self._probs = probs[ids].astype(np.float32)
        self._sample = None if sample_probs is None else np.asarray(sample_probs, dtype=np.float64)[ids]
        self._pieces = [pieces[i] for i in ids]
        self.chosen = chosen
        self.bars.setVisible(True)
        self._fit()

    def _fit(self) -> None:
        """Bars, values and tokens for the plot's width: the most probable first, the chosen
        token moved into view (after a dotted line) when it ranks below the bars shown."""
        if not self._ranked:
            return
        plot, view = self.getPlotItem(), self.getPlotItem().getViewBox()
        metrics = QFontMetricsF(_tick_font())
        shown = bars_that_fit([metrics.horizontalAdvance(display_piece(t)) for t in self._pieces], view.width(),
                              MIN_SLOT_CHARS * metrics.horizontalAdvance("m"))
        order = bar_order(len(self._ranked), self._ranked.index(self.chosen) if self.chosen in self._ranked else -1, shown)
        ids = [self._ranked[j] for j in order]
        self.token_ids, self.heights = ids, self._probs[order]
        x = np.arange(len(ids))
        self.bars.setOpts(x=x, height=self.heights, width=BAR_WIDTH,
                          brushes=[style.colour("chosen" if i == self.chosen else "bar") for i in ids],
                          pens=[pg.mkPen(style.colour("chosen_text" if i == self.chosen else "bar_edge"), width=1.5)
                                for i in ids])
        self.sampled.setVisible(self._sample is not None)
        if self._sample is not None:
            self.sampled.setOpts(x=x, height=self._sample[order], width=BAR_WIDTH)
        slot = view.width() / (shown + 0.2) if view.width() > 0 else 60.0
        value_metrics = QFontMetricsF(style.font(style.SMALL_POINT_SIZE))
        # "0.003" over every tail bar runs together on a narrow plot: then only the readable ones
        roomy = all(value_metrics.horizontalAdvance(style.prob_text(float(h))) + 6 <= slot for h in self.heights[:shown])
        for j, (label, i, h) in enumerate(zip(self.labels, ids, self.heights)):
            label.setText(style.prob_text(float(h)))
            rank = order[j] + 1 if order[j] < self.k else None
            label.setToolTip(f"p = {h:.6f}, " + (f"rank {rank}" if rank else f"below the top {self.k}"))
            label.setColor(style.colour("chosen_text") if i == self.chosen else style.TEXT)
            label.setPos(j, float(h) + 0.01)
            label.setVisible(j < shown and bool(roomy or h >= 0.005))  # (none beyond the plot's edge)
        for label in self.labels[len(ids):]:
            label.setVisible(False)
        moved = next((j for j, r in enumerate(order) if r != j), None)
        self.skip_line.setVisible(moved is not None)
        if moved is not None:
            self.skip_line.setValue(moved - 0.5)
            self.skip_line.setPen(_pen("muted", Qt.PenStyle.DotLine))  # (the theme's now)
        plot.setXRange(-0.6, max(shown, 1) - 0.4, padding=0)
        self._place_smoothed()
        self._fit_tokens([self._pieces[j] for j in order], shown, slot)

    def _fit_tokens(self, pieces: list[str], shown: int, slot: float) -> None:
        """The tokens under the bars: a token wider than its slot shrinks, down to the legible
        minimum, before it is cut to "<eo…"; the axis as tall as its labels."""
        axis = self.getPlotItem().getAxis("bottom")
        font = _tick_font()
        widest = max((display_piece(t) for t in pieces[:shown]), key=len, default="")
        while font.pointSizeF() > MIN_LABEL_PT and QFontMetricsF(font).horizontalAdvance(widest) > slot - 2:
            font.setPointSizeF(max(MIN_LABEL_PT, font.pointSizeF() - 1))
        if axis.style.get("tickFont") != font:
            axis.setTickFont(font)
        metrics = QFontMetricsF(font)
        # pyqtgraph sizes the axis from the text it last painted: an enlarged font would lose its descenders
        need = math.ceil(metrics.height() + axis.style["tickTextOffset"][1] + max(0, axis.style["tickLength"]))
        if axis.fixedHeight != need:
            axis.setHeight(need)
        axis.setTicks([fitted_ticks(pieces, slot, metrics.horizontalAdvance("m"))])

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if getattr(self, "caption", None):
            self._show_caption()
        if getattr(self, "_ranked", None):
            self._fit()

    def clear_data(self) -> None:
        self.set_smoothing(0.0, 0)  # no bars: no target line
        self.bars.setOpts(x=[0], height=[0], brushes=[style.colour("bar")], pens=[pg.mkPen(style.colour("bar"))])
        for item in (self.bars, self.sampled, self.skip_line, *self.labels):
            item.setVisible(False)
        self.token_ids, self.heights, self.chosen, self._ranked = [], np.zeros(0, dtype=np.float32), None, []
        self.getPlotItem().getAxis("bottom").setTicks([[]])
