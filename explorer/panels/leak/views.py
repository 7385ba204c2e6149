"""The leak lab's pictures: both runs' loss curves, held-out accuracies as bars and both runs'
self-attention; the limits of a model that reads only the past (floor, ceiling) dashed."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QGridLayout, QLabel, QWidget

from explorer import style
from explorer.drawing.token_heatmap import TokenHeatmap
from explorer.panels.live_lab.plot_look import LabPlot, small_text, theme_colour, theme_pen, theme_text
from model.interpret.leak_lab import RUN_LABELS, RUNS, LeakResult, attention_map, ceiling_tip

# (RunScores field, axis name): two short lines each, so the axis stays narrow
CATEGORIES = (("teacher_forced", "teacher-\nforced"), ("free_running", "free-\nrunning"),
              ("generated", "generated\nsentences"))
CATEGORY_TIP = ("teacher-forced: the next word, with the whole sentence given (words right, held out)<br>"
                "free-running: the same words, each from its own prefix alone<br>"
                "generated sentences: openings continued to the end, right when the corpus can say the sentence")
BAR = 0.3  # each run's bar height in a category's slot of 1 (its name above, in NAME_ROOM)
NAME_ROOM = 0.2  # above a category's two bars
X_RIGHT = 1.38  # room right of a full bar for its value
MAP_PENDING = "drawn when\ntraining ends"  # (short lines: a map or a plot may be narrow)
PENDING = "scored after\ntraining"


def _band(item) -> None:
    """The ceiling's band: the muted colour, faint (the bars over it stay the strong colours)."""
    colour = style.colour("muted")
    colour.setAlpha(70)
    item.setOpts(brush=pg.mkBrush(colour), pen=pg.mkPen(None))


class LossCurves(LabPlot):
    """Training loss of both runs per step, and the floor no model that reads only the past can pass."""

    def __init__(self, parent=None):
        super().__init__("Training loss", "cross-entropy", parent=parent)
        self.axes.getAxis("left").setWidth(62)
        self.legend_below(1)  # one entry above the other, never over the steep start
        self.curves = {run: self.keep(self.plot([], [], antialias=False), theme_pen(RUNS.index(run), 3))
                       for run in RUNS}
        for run, curve in self.curves.items():
            self.legend.addItem(curve, RUN_LABELS[run])
        # "floor", short, right-aligned under the line: where the leaking curve has fallen to 0 already
        self.floor = self.line(0, theme_pen("muted", 2, Qt.DashLine), "floor", position=0.98, anchors=[(1, 0), (1, 0)])

    def clear_runs(self) -> None:
        for curve in self.curves.values():
            curve.setData([], [])
        self.floor.hide()

    def last_losses(self) -> dict[str, float]:
        data = {run: curve.getData()[1] for run, curve in self.curves.items()}
        return {run: float(losses[-1]) for run, losses in data.items() if losses is not None and len(losses)}


class AccuracyBars(LabPlot):
    """Held-out accuracy of each run: per category one horizontal bar per run, its value at its end,
    and the best a model that reads only the past can do (the ceiling, with its band)."""

    def __init__(self, parent=None):
        super().__init__("Accuracy", "", CATEGORY_TIP, x_label="", parent=parent)
        plot = self.axes
        plot.getAxis("left").setGrid(False)
        left = plot.getAxis("left")
        left.setTicks([[(i + 0.5, name) for i, (_, name) in enumerate(CATEGORIES)]])
        left.setStyle(tickLength=0)
        plot.invertY(True)  # teacher-forced at the top
        self.bars = {run: self.keep(pg.BarGraphItem(x0=0, y=self._rows(run), width=np.zeros(len(CATEGORIES)),
                                                    height=BAR), self._run_brush(run)) for run in RUNS}
        self.values: dict[str, np.ndarray] = {}
        self.labels = {run: [self.keep(small_text(anchor=(0, 0.5)), self._label_colours) for _ in CATEGORIES]
                       for run in RUNS}
        self.ceiling = self.keep(pg.PlotDataItem([], []), theme_pen("muted", 2.5, Qt.DashLine))
        # where the best guess's score on these sentences may fall (± 2 standard deviations)
        self.band = self.keep(pg.BarGraphItem(x0=[], y0=[], width=[], height=[]), _band)
        self.band.setZValue(-1)
        self.ceiling_label = self.keep(small_text(anchor=(0.5, 1.0)), theme_text("muted"))
        # until both runs are scored: say when the bars come (bare axes would look broken)
        self.pending = self.keep(small_text(PENDING), theme_text("muted"))
        for item in (*self.bars.values(), *(i for items in self.labels.values() for i in items), self.ceiling,
                     self.band, self.ceiling_label, self.pending):
            plot.addItem(item)
        plot.vb.sigResized.connect(self._fit_range)
        self._fit_range()

    @staticmethod
    def _run_brush(run: str):
        return lambda item: item.setOpts(brush=theme_colour(RUNS.index(run)), pen=theme_colour(RUNS.index(run)))

    @staticmethod
    def _label_colours(item) -> None:
        item.setColor(style.TEXT.name())
        item.fill = pg.mkBrush(style.colour("canvas"))  # the ceiling's dash never runs through "42%"
        item.setZValue(5)

    def _fit_range(self, *_) -> None:
        """Room above the first bars for the ceiling's label (u = n·L / (h − L) data units for n categories,
        a line of L px), right of a full bar for "100%", and "50%" only where it stands apart from "100%"."""
        metrics = QFontMetricsF(self.ceiling_label.textItem.font())  # as drawn (presentation scales it)
        ticks = QFontMetricsF(self.axes.getAxis("bottom").style.get("tickFont") or metrics)
        line = metrics.height() * 1.1
        box = self.axes.vb
        top = len(CATEGORIES) * line / (max(box.height(), 2 * line) - line)
        box.setYRange(-top, len(CATEGORIES), padding=0)
        width = max(box.width(), 1.0)
        right = max(X_RIGHT, 1.02 / max(1 - (metrics.horizontalAdvance("100%") + 6) / width, 0.2))
        box.setXRange(0, right, padding=0)
        self.pending.setPos(right / 2, len(CATEGORIES) / 2)
        gap = 0.5 * width / right - (ticks.horizontalAdvance("50%") + ticks.horizontalAdvance("100%")) / 2
        marks = (0, 0.5, 1.0) if gap >= ticks.horizontalAdvance("0") * 1.5 else (0, 1.0)
        self.axes.getAxis("bottom").setTicks([[(v, f"{v:.0%}") for v in marks]])

    @staticmethod
    def _rows(run: str) -> np.ndarray:
        """Bar centres: below each category's name, the masked run first."""
        return np.arange(len(CATEGORIES)) + NAME_ROOM + (RUNS.index(run) + 0.5) * BAR

    def set_result(self, result: LeakResult | None) -> None:
        for run in RUNS:
            scores = result.runs[run] if result is not None else None
            self.values[run] = values = np.array([getattr(scores, key) if scores else 0.0 for key, _ in CATEGORIES])
            y = self._rows(run)
            self.bars[run].setOpts(x0=0, y=y, width=values, height=BAR * 0.92)
            for item, v, yy in zip(self.labels[run], values, y):
                item.setText(f"{v:.0%}" if scores else "")
                item.setPos(float(v) + 0.02, float(yy))
        self.pending.setVisible(result is None)
        for item in (self.ceiling, self.band, self.ceiling_label):
            item.setVisible(result is not None)
        if result is None:
            return
        best, spread = result.best_accuracy, result.ceiling_spread  # next-word categories only
        top, bottom = NAME_ROOM - 0.05, NAME_ROOM + 2 * BAR + 0.05
        self.ceiling.setData([best, best, np.nan, best, best], [0, bottom, np.nan, 1 + top, 1 + bottom],
                             connect="finite")
        self.band.setOpts(x0=[best - spread] * 2, width=[2 * spread] * 2, y0=[0, 1 + top],
                          height=[bottom, bottom - top])
        self.ceiling_label.setText(f"ceiling ≈{best:.0%}")  # "≈": the best guess's expected score
        self.ceiling_label.setPos(best, 0)
        self.ceiling.setToolTip(ceiling_tip(result))
        self.band.setToolTip(ceiling_tip(result))


class AttentionPair(QWidget):
    """The masked and the leaking run's decoder self-attention over the same sentence: the
    masked one hatched above the diagonal (blocked), the leaking one with the mask's edge drawn.
    Each map's title stands above it on two short lines (the map's own title row keeps its label
    count); the maps are built a turn after the panel (or when first asked for): a lighter first build."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.grid = QGridLayout(self, horizontalSpacing=6, verticalSpacing=2)
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.grid.setRowStretch(1, 1)
        self.titles = {run: QLabel(RUN_LABELS[run], alignment=Qt.AlignHCenter) for run in RUNS}
        for col, title in enumerate(self.titles.values()):
            self.grid.addWidget(title, 0, col)
            self.grid.setColumnStretch(col, 1)
        self.built: dict[str, TokenHeatmap] = {}
        QTimer.singleShot(0, self, self.build_maps)

    @property
    def maps(self) -> dict[str, TokenHeatmap]:
        return self.build_maps()

    def build_maps(self) -> dict[str, TokenHeatmap]:
        if not self.built:
            self.built = {run: TokenHeatmap() for run in RUNS}
            for col, heatmap in enumerate(self.built.values()):
                self.grid.addWidget(heatmap, 1, col)
        return self.built

    def clear(self, note: str = "") -> None:
        """Empty maps with a note (none: nothing is on its way, a lab that failed)."""
        for run, heatmap in self.maps.items():
            heatmap.clear_data(note)
            self.titles[run].setText(RUN_LABELS[run])

    def set_result(self, result: LeakResult | None, layer: int, head: int | None) -> None:
        """head None: the mean over heads of `layer`; result None: a lab under way."""
        if result is None:
            self.clear(MAP_PENDING)
            return
        for run, heatmap in self.maps.items():
            matrix, blocked, ahead = attention_map(result, run, layer, head)
            heatmap.set_data(matrix, result.example, result.example, blocked=blocked, boundary=blocked is None)
            self.titles[run].setText(f"{RUN_LABELS[run]}\n{ahead:.0%} ahead")


__all__ = ["LossCurves", "AccuracyBars", "AttentionPair"]
