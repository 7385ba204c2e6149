"""The dashed line where the warm-up ends (Eq. 3's peak) on the learning-rate plot, and its label.

The label must name the line without hiding the curve: on a projector's small rate plot a
centred "warm-up ends" can be wider than the triangle under the peak and cover both of its
sides. So it tries, in order, the longer then the shorter text, centred under the peak then
beside the line on either side, and takes the first box that lies inside the plot and that no
rate point falls in (the whole run's planned rates, or the run's own where there is no plan);
else the shortest text inside the plot, drawn under the curve (which then crosses the text but
stays whole).
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt

from explorer import style

POSITION = 0.04  # of the plot's height above its bottom: the label's baseline
TEXTS = ("warm-up ends", "warm-up")
CENTRED, LEFT_OF, RIGHT_OF = (0.5, 1), (1, 1), (0, 1)  # anchors: the text's bottom centre / right / left end


class WarmupMark:
    def __init__(self, plot: pg.PlotItem):
        self.plot = plot
        self.line = pg.InfiniteLine(angle=90, movable=False, label=TEXTS[0],
                                    labelOpts=dict(position=POSITION, anchors=[CENTRED, CENTRED]))
        self.line.setZValue(-10)  # under the curve: if the label must touch it, the curve stays whole
        self.label = self.line.label
        self.label.setFont(style.font(style.SMALL_POINT_SIZE))
        self.texts = TEXTS
        self.rates = (np.zeros(0), np.zeros(0))  # (step, lr) points the label keeps clear of (`set_rates`)
        self.restyle()
        self.line.hide()
        plot.addItem(self.line)
        plot.getViewBox().sigRangeChanged.connect(lambda *_: self.place())

    def restyle(self) -> None:
        """In the current theme's colours (after a theme change): the canvas behind the text
        hides the dashed line where it crosses it."""
        p = style.current()
        self.line.setPen(pg.mkPen(p.muted, width=1.5, style=Qt.DashLine))
        self.label.setColor(p.muted)
        self.label.fill = pg.mkBrush(p.canvas)
        self.label.update()

    def show_at(self, step: int | None) -> None:
        if step:
            self.line.setValue(step)
            self.line.show()
            self.place()
        else:
            self.line.hide()

    def set_texts(self, narrow: bool) -> None:
        """A narrow plot: only the short text."""
        self.texts = TEXTS[1:] if narrow else TEXTS
        self.place()

    def set_rates(self, steps: np.ndarray, rates: np.ndarray) -> None:
        self.rates = (np.asarray(steps, float), np.asarray(rates, float))
        self.place()

    def place(self) -> None:
        if not self.line.isVisible():
            return
        vb = self.plot.getViewBox()
        (left, right), (bottom, top) = vb.viewRange()
        px, py = vb.viewPixelSize()
        x, y0 = self.line.value(), bottom + POSITION * (top - bottom)
        tries = [(text, anchor) for text in self.texts for anchor in (CENTRED, LEFT_OF, RIGHT_OF)]
        inside = []  # (text, anchor) whose box lies inside the plot, though the curve crosses it
        for text, anchor in tries:
            self._set(text, anchor)
            rect = self.label.boundingRect()
            x0 = x - anchor[0] * rect.width() * px
            box = (x0, x0 + rect.width() * px, y0, y0 + rect.height() * py)
            if left <= box[0] and box[1] <= right:
                if not self._crosses(box):
                    return
                inside.append((text, anchor))
        # the curve crosses every box (a small plot): the shortest text inside, under the curve
        short = [t for t in inside if t[0] == self.texts[-1]] or inside
        self._set(*(short[0] if short else (self.texts[-1], LEFT_OF if x > (left + right) / 2 else RIGHT_OF)))

    def _crosses(self, box) -> bool:
        steps, rates = self.rates
        inside = (steps >= box[0]) & (steps <= box[1]) & (rates >= box[2]) & (rates <= box[3])
        return bool(inside.any())

    def _set(self, text: str, anchor) -> None:
        if self.label.toPlainText() != text:
            self.label.setFormat(text)
            self.label.setText(text)  # (setFormat alone skips a hidden label)
        if self.label.anchors[0] != anchor:
            self.label.anchors = [anchor, anchor]
            self.label.updatePosition()


__all__ = ["WarmupMark"]
