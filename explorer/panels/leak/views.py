"""The leak lab's three pictures: both loss curves in one plot, held-out accuracies as bars, and
the two runs' decoder self-attention over one sentence side by side.

Colours are the theme's first two data series (masked run, leaking run), the same in all
three pictures; reference lines (the loss floor, the accuracy ceiling: the best a model that
reads only the past can do) are dashed in the muted colour. Plot items are created once and
updated in place; `restyle()` recolours them after a theme change.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QHBoxLayout, QWidget

from explorer import style
from explorer.drawing.token_heatmap import TokenHeatmap
from explorer.panels.live_lab.plot_look import StepPlot, colour_axes, legend_below, recolour_legend, set_title
from model.interpret.leak_lab import RUN_LABELS, RUNS, LeakResult

# (RunScores field, axis name): two short lines each, so the axis stays narrow
CATEGORIES = (("teacher_forced", "teacher-\nforced"), ("free_running", "free-\nrunning"),
              ("generated", "generated\nsentences"))  # (words above, whole sentences here: 67% and 100% agree)
CATEGORY_TIP = ("teacher-forced: the next word, with the whole sentence given (words right, held out)<br>"
                "free-running: the same words, each from its own prefix alone<br>"
                "generated sentences: openings continued to the end, right when the corpus can say the sentence")
BAR = 0.3  # each run's bar height in a category's slot of 1 (its name above, in NAME_ROOM)
NAME_ROOM = 0.2  # above a category's two bars
X_RIGHT = 1.38  # room right of a full bar for its value


def run_colour(run: str) -> str:
    return style.current().series[RUNS.index(run)]


def _band_brush():
    """The ceiling's band: the muted colour, faint (the bars over it stay the strong colours)."""
    colour = style.colour("muted")
    colour.setAlpha(70)
    return pg.mkBrush(colour)


def _dashed(width: float = 2.0):
    return pg.mkPen(style.MUTED.name(), width=width, style=Qt.DashLine)


class LossCurves(StepPlot):
    """Training loss of both runs per step, and the floor no model that reads only the past can pass."""

    def __init__(self, parent=None):
        super().__init__("Training loss", "cross-entropy", parent=parent)
        plot = self.getPlotItem()
        plot.getAxis("left").setWidth(62)
        # The legend: a row under the plot, one entry above the other, never over the steep start
        self.legend = legend_below(plot, 1)
        self.curves = {run: plot.plot([], [], pen=pg.mkPen(run_colour(run), width=3), antialias=False) for run in RUNS}
        for run, curve in self.curves.items():
            self.legend.addItem(curve, RUN_LABELS[run])
        # "floor", short, right-aligned just under the dashed line: where the leaking curve has
        # already fallen to 0 (a longer label would run into its steep start on a narrow plot)
        self.floor = pg.InfiniteLine(angle=0, movable=False, pen=_dashed(),
                                     label="floor", labelOpts=dict(
                                         position=0.98, color=style.MUTED.name(), anchors=[(1, 0), (1, 0)]))
        self.floor.label.setFont(style.font(style.SMALL_POINT_SIZE))
        self.floor.hide()
        plot.addItem(self.floor)
        self.steps = {run: np.zeros(0) for run in RUNS}
        self.losses = {run: np.zeros(0) for run in RUNS}

    def clear_runs(self) -> None:
        for run in RUNS:
            self.steps[run], self.losses[run] = np.zeros(0), np.zeros(0)
            self.curves[run].setData([], [])
        self.floor.hide()

    def extend(self, run: str, steps: np.ndarray, losses: np.ndarray) -> None:
        self.steps[run] = np.concatenate([self.steps[run], steps])
        self.losses[run] = np.concatenate([self.losses[run], losses])
        self.curves[run].setData(self.steps[run], self.losses[run])

    def show_floor(self, value: float) -> None:
        self.floor.setValue(value)
        self.floor.setToolTip(f"The loss floor, {value:.2f}: the lowest cross-entropy a model that reads only "
                              f"the past can reach on this corpus (its choices of words are free). Below it, "
                              f"a model reads the answer.")
        self.floor.show()

    def restyle(self) -> None:
        super().restyle()
        for run, curve in self.curves.items():
            curve.setPen(pg.mkPen(run_colour(run), width=3))
        recolour_legend(self.legend)
        self.floor.setPen(_dashed())
        self.floor.label.setColor(style.MUTED.name())


MAP_PENDING = "drawn when\ntraining ends"  # in an empty map (two short lines: a map may be narrow)
PENDING = "scored after\ntraining"  # (short: a plot on a projector is narrow)


class AccuracyBars(pg.PlotWidget):
    """Held-out accuracy of each run: per category one horizontal bar per run, its value at the end.

    teacher-forced: next word with the whole sentence given; free-running: the same words, each
    from its prefix alone; generated: openings continued into sentences the corpus can say."""

    def __init__(self, parent=None):
        super().__init__(parent=parent, enableMenu=False)
        plot = style.still_plot(self.getPlotItem())
        set_title(plot, "Accuracy")
        colour_axes(plot, "", "")
        left = plot.getAxis("left")
        left.setTicks([[(i + 0.5, name) for i, (_, name) in enumerate(CATEGORIES)]])
        self.setToolTip(CATEGORY_TIP)
        left.setStyle(tickLength=0)
        plot.getAxis("bottom").setTicks([[(v, f"{v:.0%}") for v in (0, 0.5, 1.0)]])
        plot.invertY(True)  # teacher-forced at the top
        plot.setXRange(0, X_RIGHT, padding=0)  # room right of a full bar for its number
        self.bars = {run: pg.BarGraphItem(x0=0, y=self._rows(run), width=np.zeros(len(CATEGORIES)), height=BAR,
                                          brush=run_colour(run), pen=run_colour(run)) for run in RUNS}
        for bars in self.bars.values():
            plot.addItem(bars)
        self.values: dict[str, np.ndarray] = {}
        self.labels = {run: [pg.TextItem(anchor=(0, 0.5), color=style.TEXT.name()) for _ in CATEGORIES] for run in RUNS}
        for items in self.labels.values():
            for item in items:
                item.setFont(style.font(style.SMALL_POINT_SIZE))
                item.fill = pg.mkBrush(style.colour("canvas"))  # the ceiling's dash never runs through "42%"
                item.setZValue(5)
                plot.addItem(item)
        self.ceiling = pg.PlotDataItem([], [], pen=_dashed(2.5))  # the best possible next-word accuracy
        plot.addItem(self.ceiling)
        # … and where its score on these sentences may fall (± 2 standard deviations): a with-mask
        # bar a point past the line is inside the band, not past the ceiling
        self.band = pg.BarGraphItem(x0=[], y0=[], width=[], height=[], brush=_band_brush(), pen=pg.mkPen(None))
        self.band.setZValue(-1)
        plot.addItem(self.band)
        self.ceiling_label = pg.TextItem("", anchor=(0.5, 1.0), color=style.MUTED.name())
        self.ceiling_label.setFont(style.font(style.SMALL_POINT_SIZE))
        plot.addItem(self.ceiling_label)
        # Until both runs are scored the bars are empty: say when they come, so bare axes beside
        # moving curves do not look like a broken plot
        self.pending = pg.TextItem(PENDING, anchor=(0.5, 0.5), color=style.MUTED.name())
        self.pending.setFont(style.font(style.SMALL_POINT_SIZE))
        self.pending.setPos(X_RIGHT / 2, len(CATEGORIES) / 2)  # (the middle of the x range: `_fit_top` widens it)
        plot.addItem(self.pending)
        plot.getViewBox().sigResized.connect(self._fit_top)
        self._fit_top()

    def _fit_top(self, *_) -> None:
        """Room above the first bars for one line of text (the ceiling's label), in data
        units for the plot's current height: u = n·L / (h − L) for n categories, a line of L px."""
        metrics = QFontMetricsF(self.ceiling_label.textItem.font())  # as drawn (presentation scales it)
        ticks = QFontMetricsF(self.getPlotItem().getAxis("bottom").style.get("tickFont") or metrics)
        line = metrics.height() * 1.1
        box = self.getPlotItem().getViewBox()
        height = max(box.height(), 2 * line)
        top = len(CATEGORIES) * line / (height - line)
        self.getPlotItem().setYRange(-top, len(CATEGORIES), padding=0)
        # and room right of a full bar for "100%" at this width: 1.02 + w·r/W ≤ r (so a narrow
        # plot does not cut the label)
        width = max(box.width(), 1.0)
        need = (metrics.horizontalAdvance("100%") + 6) / width
        right = max(X_RIGHT, 1.02 / max(1 - need, 0.2))
        self.getPlotItem().setXRange(0, right, padding=0)
        if getattr(self, "pending", None) is not None:
            self.pending.setPos(right / 2, len(CATEGORIES) / 2)
        # "50%" only where it stands apart from "100%" (on a narrow plot the two would touch)
        half_px = 0.5 * width / right
        gap = half_px - (ticks.horizontalAdvance("50%") + ticks.horizontalAdvance("100%")) / 2  # between the two, centred
        marks = (0, 0.5, 1.0) if gap >= ticks.horizontalAdvance("0") * 1.5 else (0, 1.0)
        self.getPlotItem().getAxis("bottom").setTicks([[(v, f"{v:.0%}") for v in marks]])

    @staticmethod
    def _rows(run: str) -> np.ndarray:
        """Bar centres: below each category's name, the masked run first."""
        return np.arange(len(CATEGORIES)) + NAME_ROOM + (RUNS.index(run) + 0.5) * BAR

    def set_result(self, result: LeakResult | None) -> None:
        for run in RUNS:
            scores = result.runs[run] if result is not None else None
            values = np.array([getattr(scores, key) if scores else 0.0 for key, _ in CATEGORIES])
            self.values[run] = values
            y = self._rows(run)
            self.bars[run].setOpts(x0=0, y=y, width=values, height=BAR * 0.92)
            for item, v, yy in zip(self.labels[run], values, y):
                item.setText(f"{v:.0%}" if scores else "")
                item.setPos(float(v) + 0.02, float(yy))
        self.pending.setVisible(result is None)
        if result is None:
            self.ceiling.setData([], [])
            self.band.setOpts(x0=[], y0=[], width=[], height=[])
            self.ceiling_label.setText("")
            return
        best = result.best_accuracy  # next-word categories only: a generated sentence has no such ceiling
        top, bottom = NAME_ROOM - 0.05, NAME_ROOM + 2 * BAR + 0.05
        self.ceiling.setData([best, best, np.nan, best, best], [0, bottom, np.nan, 1 + top, 1 + bottom],
                             connect="finite")
        spread = result.ceiling_spread
        self.band.setOpts(x0=[best - spread] * 2, width=[2 * spread] * 2, y0=[0, 1 + top],
                          height=[bottom, bottom - top])
        # "≈": the best guess's expected score; its score on these sentences scatters by the band
        self.ceiling_label.setText(f"ceiling ≈{best:.0%}")
        self.ceiling_label.setPos(best, 0)
        tip = (f"The ceiling, {best:.1%}: what the best possible guess from the words so far scores on average "
               f"(the exact sentence distribution). The band, {best - spread:.0%}–{best + spread:.0%}, is that "
               f"score's typical scatter (± 2 standard deviations) on {result.eval_n} sentences drawn at random: "
               f"a model that reads only the past ends at or below it; one past the band reads the answer.")
        self.ceiling.setToolTip(tip)
        self.band.setToolTip(tip)

    def restyle(self) -> None:
        for run, bars in self.bars.items():
            bars.setOpts(brush=run_colour(run), pen=run_colour(run))
        for item in (i for items in self.labels.values() for i in items):
            item.setColor(style.TEXT.name())
            item.fill = pg.mkBrush(style.colour("canvas"))
        self.ceiling.setPen(_dashed(2.5))
        self.band.setOpts(brush=_band_brush())
        self.ceiling_label.setColor(style.MUTED.name())
        self.pending.setColor(style.MUTED.name())


class AttentionPair(QWidget):
    """The masked and the leaking run's decoder self-attention over the same sentence: the
    masked one hatched above the diagonal (blocked), the leaking one with the mask's edge drawn."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.maps = {run: TokenHeatmap(RUN_LABELS[run]) for run in RUNS}
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        for heatmap in self.maps.values():
            layout.addWidget(heatmap, 1)
        self.future: dict[str, float] = {}

    def clear(self, note: str = "") -> None:
        """Empty maps with a note (none: nothing is on its way, a lab that failed)."""
        for run, heatmap in self.maps.items():
            heatmap.clear_data(note)
            heatmap.set_title(RUN_LABELS[run])

    def set_result(self, result: LeakResult | None, layer: int, head: int | None) -> None:
        """head None: the mean over heads of `layer`; result None: a lab under way (the maps say
        they are drawn when it ends)."""
        if result is None:
            self.clear(MAP_PENDING)
            return
        tokens = result.example
        for run, heatmap in self.maps.items():
            att = result.runs[run].attention[layer]  # (h, T, T)
            matrix = att.mean(0) if head is None else att[head]
            future = float(np.triu(matrix, 1).sum(-1).mean())
            self.future[run] = future
            blocked = np.triu(np.ones_like(matrix, dtype=bool), 1) if result.runs[run].causal_mask else None
            heatmap.set_data(matrix, tokens, tokens, blocked=blocked, boundary=blocked is None)
            heatmap.set_title(f"{future:.0%} ahead · {RUN_LABELS[run]}")  # weight on later positions (first: elided last)


__all__ = ["LossCurves", "AccuracyBars", "AttentionPair", "CATEGORIES", "run_colour"]
