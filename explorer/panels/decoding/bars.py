"""`TopKBars`: the next-token distribution of one decoding step as labelled bars.

Bar heights are the model's own softmax (DecodeStep.model_probs) — the numbers a lecturer
reads off are exactly the model's. When sampling, the distribution that was actually
sampled from (after temperature / top-k / top-p) is drawn as outlines on top, so the
effect of those knobs is visible next to the model's belief.
"""
from __future__ import annotations

import html
import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QFontMetricsF

from explorer import style
from explorer.drawing.label_axis import MIN_LABEL_PT
from explorer.drawing.plot_style import fit_title_row, let_shrink
from explorer.drawing.token_heatmap import display_piece, fitted_ticks
from model.inference.bundle import smoothed_target

Y_TOP = 1.2  # room above a bar of p = 1 for its number
BAR_WIDTH = 0.7  # in slots
CAPTION_MARGIN = 12  # pixels beside the caption: the title's own padding
MIN_SLOT_CHARS = 4.5  # a bar's slot holds a 4-letter token ("<eos") or its value ("0.93")


def _smoothed_pen():
    """The label-smoothing target's line, in the theme's muted colour."""
    return pg.mkPen(style.MUTED, width=2, style=pg.QtCore.Qt.DashLine)


class TopKBars(pg.PlotWidget):
    """The k most probable next tokens (plus the chosen one if it ranks lower)."""

    def __init__(self, k: int = 10, parent=None):
        super().__init__(parent=parent)
        self.k = k
        self.caption = ""
        self._caption_shown: tuple = ()
        plot = style.still_plot(self.getPlotItem())
        plot.showGrid(y=True, alpha=0.25)
        plot.setLabel("left", "probability", **{"font-size": style.css_pt(style.SMALL_POINT_SIZE)})
        bottom = plot.getAxis("bottom")
        bottom.setStyle(tickFont=style.font(style.BASE_POINT_SIZE + 1, bold=True, mono=True), tickLength=0)
        plot.getAxis("left").setStyle(tickFont=style.font(style.SMALL_POINT_SIZE))
        self.bars = pg.BarGraphItem(x=[0], height=[0], width=0.7, brush=style.colour("bar"),
                                    pen=style.colour("bar"))  # pyqtgraph rejects empty pens
        self.sampled = pg.BarGraphItem(x=[], height=[], width=0.7, brush=None,
                                       pen=pg.mkPen(style.TEXT, width=2, style=pg.QtCore.Qt.DashLine))
        plot.addItem(self.bars)
        plot.addItem(self.sampled)
        self.skip_line = pg.InfiniteLine(angle=90, movable=False,
                                         pen=pg.mkPen(style.MUTED, width=2, style=pg.QtCore.Qt.DotLine))
        self.skip_line.setToolTip("The chosen token, from further down the ranking (its rank in its value's tooltip)")
        self.skip_line.setVisible(False)
        plot.addItem(self.skip_line)
        # Section 5.4: a model trained on smoothed targets aims its best guess at 1 − ε + ε/V and
        # every other token at ε/V: the line says why a sure model stops near 0.90, the rest ≈ 0.003
        self.smoothed = pg.InfiniteLine(angle=0, movable=False, pen=_smoothed_pen())
        self.smoothed.setZValue(5)  # across the bar it concerns
        self.smoothed_label = pg.TextItem(anchor=(0, 0), color=style.MUTED)  # under the line, right of the top bar
        self.smoothed_label.setFont(style.font(style.SMALL_POINT_SIZE))
        for item in (self.smoothed, self.smoothed_label):
            item.setVisible(False)
            plot.addItem(item, ignoreBounds=True)
        self.smoothing = 0.0
        self.labels: list[pg.TextItem] = []
        self._tick_labels: list[str] = []
        self.token_ids: list[int] = []
        self.heights = np.zeros(0, dtype=np.float32)
        self.chosen: int | None = None
        plot.setYRange(0, Y_TOP, padding=0)
        let_shrink(plot.titleLabel)  # a caption never widens its cell, even enlarged for a lecture
        plot.getAxis("left").setTicks([[(v, f"{v:g}") for v in (0, 0.2, 0.4, 0.6, 0.8, 1.0)]])  # no "1.2"

    def set_smoothing(self, epsilon: float, vocab_size: int) -> None:
        """The model was trained with label smoothing ε over `vocab_size` tokens (0: it was not,
        or that is not known): a dashed line at the smoothed target's top, 1 − ε + ε/V."""
        self.smoothing = epsilon if epsilon > 0 and vocab_size > 0 else 0.0
        on = self.smoothing > 0
        self.smoothed.setVisible(on)
        self.smoothed_label.setVisible(on)
        if not on:
            return
        top = smoothed_target(epsilon, vocab_size)
        self.smoothed.setValue(top)
        self.smoothed.setPen(_smoothed_pen())  # (the theme's now)
        self.smoothed_label.setColor(style.MUTED)
        tip = (f"Trained with label smoothing ε = {epsilon:g} (Section 5.4): the target gives the right token "
               f"1 − ε + ε/V = {top:.3f} and each of the other {vocab_size - 1} tokens ε/V = {epsilon / vocab_size:.4f}, "
               "so a well-trained model is never sure: its best guess stops near this line, the rest near ε/V.")
        self.smoothed.setToolTip(tip)
        self.smoothed_label.setToolTip(tip)
        self._place_smoothed()

    def _place_smoothed(self) -> None:
        """The line's name under it, from the top bar's right edge over the tail's low bars: the
        longest form that fits before the plot's right end (over the top bar it would hide its value)."""
        if self.smoothing <= 0:
            return
        view = self.getPlotItem().getViewBox()
        (x0, x1), _ = view.viewRange()
        left = BAR_WIDTH / 2 + 0.05  # (bar 0 spans ±BAR_WIDTH/2)
        room = (x1 - left) * view.width() / max(x1 - x0, 1e-9) - 4
        top = self.smoothed.value()
        metrics = QFontMetricsF(self.smoothed_label.textItem.font())
        forms = (f"smoothed target {top:.2f}", f"target {top:.2f}", f"{top:.2f}")
        text = next((t for t in forms if metrics.horizontalAdvance(t) <= room), forms[-1])
        if self.smoothed_label.toPlainText() != text:
            self.smoothed_label.setText(text)
        self.smoothed_label.setPos(left, top)

    def set_caption(self, text: str) -> None:  # noqa: D401
        """The caption on one line, or broken after its last comma where the plot is narrower
        (a long decode's maps take most of a narrow screen's width): always whole."""
        self.caption, self._caption_shown = text, ()
        self._show_caption()

    def _caption_lines(self, text: str, width: float) -> list[str]:
        if ", " not in text or self._line_width(text) + self._beside_caption() <= width:
            return [text]
        head, tail = text.rsplit(", ", 1)
        return [head + ",", tail]

    def _line_width(self, line: str) -> float:
        return QFontMetricsF(self._caption_font()).horizontalAdvance(line)

    def _caption_font(self):
        f = style.font(style.BASE_POINT_SIZE)
        f.setPointSizeF(style.BASE_POINT_SIZE * style.scale())  # the size set_caption gives the title
        return f

    def _show_caption(self) -> None:
        lines = self._caption_lines(self.caption, self.width())
        if (lines, style.scale()) == self._caption_shown:
            return
        self._caption_shown = (lines, style.scale())
        # the title is rich text: a token such as <eos> would otherwise vanish as an unknown tag
        self.getPlotItem().setTitle("<br>".join(html.escape(line) for line in lines),
                                    size=f"{style.BASE_POINT_SIZE * style.scale():.1f}pt")
        fit_title_row(self.getPlotItem())

    def least_size(self, width: float | None = None) -> tuple[float, float]:
        """The room its caption needs whole, on two lines if need be (asked by the decoding
        panel's grid; the plot's height does not depend on `width`)."""
        if not self.caption:
            return 0.0, 0.0
        lines = self._caption_lines(self.caption, 0.0)
        return max(self._line_width(line) for line in lines) + self._beside_caption(), 0.0

    def _beside_caption(self) -> float:
        """The plot's width the caption cannot use: it is centred over the bars, right of the
        probability axis."""
        return self.getPlotItem().getAxis("left").width() + CAPTION_MARGIN

    def _label(self, i: int) -> pg.TextItem:
        while len(self.labels) <= i:
            item = pg.TextItem(anchor=(0.5, 1.0), color=style.TEXT)
            item.setFont(style.font(style.SMALL_POINT_SIZE))
            self.getPlotItem().addItem(item)
            self.labels.append(item)
        return self.labels[i]

    def set_data(self, probs, pieces: list[str], chosen: int | None, sample_probs=None) -> None:
        """probs: (V,) the model's distribution; pieces: the target vocabulary; chosen: the id
        the decoder emitted; sample_probs: (V,) what sampling drew from, or None."""
        probs = np.asarray(probs, dtype=np.float64)
        k = min(self.k, len(probs))
        ids = [int(i) for i in np.argsort(-probs, kind="stable")[:k]]
        if chosen is not None and chosen not in ids:
            ids.append(int(chosen))  # always show what was picked, even from the tail
        self._ranked = ids
        self._probs = probs[ids].astype(np.float32)
        self._sample = None if sample_probs is None else np.asarray(sample_probs, dtype=np.float64)[ids]
        self._pieces = [pieces[i] for i in ids]
        self.chosen = chosen
        self.bars.setVisible(True)
        self._order = None
        self._fit_ticks()

    def _draw(self, order: list[int]) -> None:
        """The ranked bars in `order` (indices into the ranking): the most probable first, and
        the chosen token moved into view when the plot shows fewer bars than it ranks."""
        if order == self._order:
            return
        self._order = order
        ids = [self._ranked[j] for j in order]
        heights = self._probs[order]
        chosen = self.chosen
        self.token_ids, self.heights = ids, heights
        x = np.arange(len(ids))
        self.bars.setOpts(x=x, height=heights, width=0.7,
                          brushes=[style.colour("chosen" if i == chosen else "bar") for i in ids],
                          pens=[pg.mkPen(style.colour("chosen_text" if i == chosen else "bar_edge"), width=1.5) for i in ids])
        if self._sample is not None:
            self.sampled.setOpts(x=x, height=self._sample[order], width=0.7)
            self.sampled.setVisible(True)
        else:
            self.sampled.setVisible(False)
        for j, (i, h) in enumerate(zip(ids, heights)):
            label = self._label(j)
            label.setText(style.prob_text(float(h)))
            rank = order[j] + 1 if order[j] < self.k else None  # (the chosen token from the tail: below the top k)
            label.setToolTip(f"p = {h:.6f}, " + (f"rank {rank}" if rank else f"below the top {self.k}"))
            # always above its bar (the y range leaves room over a bar of 1.0): never over it
            label.setAnchor((0.5, 1.0))
            label.setColor(style.colour("chosen_text") if i == chosen else style.TEXT)
            label.setPos(j, float(h) + 0.01)
            label.setVisible(True)
        for label in self.labels[len(ids):]:
            label.setVisible(False)
        self._tick_labels = [self._pieces[j] for j in order]
        # a chosen token moved into view from further down the ranking stands after a dotted
        # line: it is not the next most probable
        moved = next((j for j, r in enumerate(order) if r != j), None)
        self.skip_line.setVisible(moved is not None)
        if moved is not None:
            self.skip_line.setValue(moved - 0.5)
            self.skip_line.setPen(pg.mkPen(style.MUTED, width=2, style=pg.QtCore.Qt.DotLine))  # (the theme's now)

    def _shown_count(self, width: float, total: int) -> int:
        """How many bars the plot shows: as many of the most probable as have slots wide enough
        for their tokens at the labels' own size (at least 3). Ten slivers with labels shrunk to
        8 pt read worse than five whole ones;
        the rest stay in the data and in the tooltips."""
        if width <= 0:
            return total
        metrics = QFontMetricsF(style.font(style.BASE_POINT_SIZE + 1, bold=True, mono=True))
        chars = metrics.horizontalAdvance("m")
        most = max(3, min(total, int(width // (MIN_SLOT_CHARS * chars))))
        for n in range(most, 3, -1):
            widest = max((metrics.horizontalAdvance(display_piece(t)) for t in self._pieces[:n]), default=0.0)
            if widest <= width / (n + 0.2) - 2:
                return n
        return 3

    def _fit_ticks(self) -> None:
        view = self.getPlotItem().getViewBox()
        axis = self.getPlotItem().getAxis("bottom")
        if "_ranked" not in self.__dict__:
            return
        total = max(len(self._ranked), self.k)
        shown = min(self._shown_count(view.width(), total), len(self._ranked)) if self._ranked else total
        order = list(range(len(self._ranked)))
        c = self._ranked.index(self.chosen) if self.chosen in self._ranked else -1
        if 0 < shown <= c:  # the chosen token in view: last of the shown bars, after a dotted line
            order = order[:shown - 1] + [c] + order[shown - 1:c] + order[c + 1:]
        self._draw(order)
        self.getPlotItem().setXRange(-0.6, max(shown, 1) - 0.4, padding=0)
        self._place_smoothed()
        slot = view.width() / (shown + 0.2) if view.width() > 0 else 60.0
        # a token still wider than its slot (three bars in a narrow cell) shrinks, down to the
        # token axes' legible minimum, before it is cut to "<eo…"
        label_font = style.font(style.BASE_POINT_SIZE + 1, bold=True, mono=True)
        widest = max((display_piece(t) for t in self._tick_labels[:shown]), key=len, default="")
        while label_font.pointSizeF() > MIN_LABEL_PT and QFontMetricsF(label_font).horizontalAdvance(widest) > slot - 2:
            label_font.setPointSizeF(max(MIN_LABEL_PT, label_font.pointSizeF() - 1))
        if axis.style.get("tickFont") is None or axis.style["tickFont"] != label_font:
            axis.setTickFont(label_font)
        # the axis as tall as its labels: pyqtgraph sizes it from the text it last painted, so a
        # label font grown by the presentation would be cut through its descenders
        need = QFontMetricsF(label_font).height() + axis.style["tickTextOffset"][1] + max(0, axis.style["tickLength"])
        if axis.fixedHeight != math.ceil(need):
            axis.setHeight(math.ceil(need))
        char_width = QFontMetricsF(label_font).horizontalAdvance("m")
        axis.setTicks([fitted_ticks(self._tick_labels, slot, char_width)])
        # "0.003" over every tail bar runs together on a narrow plot: keep those numbers for the
        # tooltip then, and the readable ones (≥ 0.005, "0.12") on the bars
        value_font = self.labels[0].textItem.font() if self.labels else style.font(style.SMALL_POINT_SIZE)
        metrics = QFontMetricsF(value_font)
        roomy = all(metrics.horizontalAdvance(style.prob_text(float(h))) + 6 <= slot for h in self.heights)
        for label, h in zip(self.labels, self.heights):
            label.setVisible(bool(roomy or h >= 0.005))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if getattr(self, "caption", ""):
            self._show_caption()
        if "_tick_labels" in self.__dict__:
            self._fit_ticks()

    def clear_data(self) -> None:
        self.set_smoothing(0.0, 0)  # (no bars: no target line; the next model's ε comes with its decode)
        self.bars.setOpts(x=[0], height=[0], brushes=[style.colour("bar")], pens=[pg.mkPen(style.colour("bar"))])
        self.bars.setVisible(False)
        self.sampled.setVisible(False)
        self.skip_line.setVisible(False)
        for label in self.labels:
            label.setVisible(False)
        self.token_ids, self.heights, self.chosen = [], np.zeros(0, dtype=np.float32), None
        self._tick_labels = []
        self.__dict__.pop("_ranked", None)
        self._order = None
        self.getPlotItem().getAxis("bottom").setTicks([[]])
