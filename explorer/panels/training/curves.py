"""Live training curves: loss, accuracy (training batches, and a held-out score), the learning
rate of Section 5.3 and throughput. Plot items are made once; rows are appended to `Series`
buffers and `refresh()` hands them to `setData` (clipped to the view, downsampled). Noisy series
are drawn raw (faint) and smoothed (bold), as TensorBoard does. Words: `model.train.curve_texts`."""
from __future__ import annotations

import time

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from explorer import presentation, style
from explorer.drawing.plot_style import fit_title_row, let_shrink
from explorer.drawing.spaced_axis import no_prefix_on_hidden_axes, step_and_value_axes
from explorer.panels.training.warmup_mark import WarmupMark
from explorer.screen import ScreenClass
from model.train.curve_texts import AXIS_LABELS, KEY_WORDS, TITLES, TOOLTIPS, held_out_name, lr_tooltip, rate_axis
from model.train.live_messages import MetricRows
from model.train.timeline import SMOOTHING, Series

WAITING = "waiting for\nthe first steps"  # in each empty plot while a run starts
ROW_RATIO = 2.4  # wider than this × its height: the four plots in one row
SHORT_ROW = 230  # px: a row of plots lower than this drops the step axis' label
NARROW = 620  # px: below this the legend would hide the curves and long titles would collide
# each curve's theme colour (Palette field); the faint ones: the raw loss, the rate ahead of the run
CURVE_ROLES = {"loss_raw": "loss", "loss": "loss", "accuracy": "accuracy", "exact": "exact", "lr": "lr",
               "lr_now": "lr", "lr_plan": "lr", "tokens_per_s": "speed"}


def curve_colour(key: str) -> QColor:
    """A curve's colour in the current theme: the raw loss faint (stronger on the dark canvas,
    where a faint blue would vanish), the planned rate lighter than the run's own."""
    colour = pg.mkColor(getattr(style.current(), CURVE_ROLES[key]))
    dark = style.current().name == "dark"
    colour.setAlpha({"loss_raw": 150 if dark else 70, "lr_plan": 150}.get(key, 255))
    return colour


def colour_key_title(metric: str = "exact_match", two_lines: bool = False) -> str:
    """The accuracy title that names its colours ("tokens · exact") where the legend is folded away;
    on two lines for a NARROW screen's plots."""
    tokens = f"<span style='color:{style.current().accuracy}'>tokens</span>"
    held_out = f"<span style='color:{style.current().exact}'>{KEY_WORDS.get(metric, metric)}</span>"
    return f"{tokens} ·{'<br>' if two_lines else ' '}{held_out}"


def make_plot(canvas: pg.GraphicsLayoutWidget, title: str, y_label: str, tooltip: str) -> pg.PlotItem:
    """A plot titled over its whole width (value axis included), its axes in the theme's colours."""
    plot = canvas.addPlot(enableMenu=False, axisItems=step_and_value_axes())  # steps never run together
    no_prefix_on_hidden_axes(plot)
    plot.setTitle(title, color=style.TEXT.name(), size=f"{style.TITLE_POINT_SIZE}pt")
    let_shrink(plot.titleLabel)
    plot.layout.removeItem(plot.titleLabel)
    plot.layout.addItem(plot.titleLabel, 0, 0, 1, 3)
    plot.setMenuEnabled(False)
    plot.setToolTip(tooltip)  # what the short title leaves out
    for name, label in (("bottom", "step"), ("left", y_label)):
        axis = plot.getAxis(name)
        axis.setTickFont(style.font(style.SMALL_POINT_SIZE))
        axis.setPen(style.MUTED.name())
        axis.setTextPen(style.TEXT.name())
        axis.setLabel(label, color=style.TEXT.name(), **{"font-size": style.css_pt(style.SMALL_POINT_SIZE)})
    plot.setPreferredSize(1, 1)  # equal shares: the layout splits the room by stretch only
    return plot


def make_curve(plot: pg.PlotItem, key: str, width: float, dashed: bool = False, **kwargs) -> pg.PlotDataItem:
    """No antialiasing: it doubles the paint time, which the GUI thread takes from the training thread."""
    pen = pg.mkPen(curve_colour(key), width=width, style=Qt.DashLine if dashed else Qt.SolidLine)
    return plot.plot([], [], pen=pen, clipToView=True, autoDownsample=True, downsampleMethod="peak",
                     antialias=False, **kwargs)


class TimedCanvas(pg.GraphicsLayoutWidget):
    """A canvas that adds up the time its paints take (`take_paint_time()` reads and resets it), so
    redraws can be spaced by their real cost: painting holds the GIL the training thread needs."""

    paint_seconds = 0.0

    def paintEvent(self, event) -> None:  # noqa: N802
        start = time.perf_counter()
        super().paintEvent(event)
        self.paint_seconds += time.perf_counter() - start

    def take_paint_time(self) -> float:
        spent, self.paint_seconds = self.paint_seconds, 0.0
        return spent


class TrainingCurves(TimedCanvas):
    """Four plots sharing the step axis (the rate plot spans the whole run)."""

    compact = False  # no legend: the accuracy title names the colours (`apply_screen_class`)
    screen_class = ScreenClass.WIDE
    legend = None  # (pyqtgraph resizes the canvas before __init__ is done)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setBackground(style.current().canvas)
        self.ci.layout.setContentsMargins(2, 2, 2, 2)
        self.ci.layout.setSpacing(3)
        self.series = {name: Series() for name in ("loss", "accuracy", "lr", "tokens_per_s")}
        self.exact_steps: list[int] = []
        self.exact_values: list[float] = []
        self.held_out_metric = "exact_match"  # (not `metric`: a QPaintDevice method Qt calls)
        self.lr_decay_steps = 0  # the run's TrainConfig.lr_decay_steps (0: Eq. 3)
        self.rate_exponent = 0  # the rate axis counts in units of 10**rate_exponent
        self._dirty = False
        self.in_a_row = self.short_rows = None
        labels = AXIS_LABELS[False]
        self.loss_plot = make_plot(self, TITLES["loss"], labels["loss"], TOOLTIPS["loss"])
        self.acc_plot = make_plot(self, TITLES["acc"], labels["acc"], TOOLTIPS["acc"])
        self.lr_plot = make_plot(self, TITLES["lr"], "lr", lr_tooltip())
        self.speed_plot = make_plot(self, TITLES["speed"], labels["speed"], TOOLTIPS["speed"])
        self.plots = (self.loss_plot, self.acc_plot, self.lr_plot, self.speed_plot)
        for plot in (self.acc_plot, self.speed_plot):
            plot.setXLink(self.loss_plot)
        self._arrange(False)
        self.acc_plot.setYRange(-0.03, 1.02, padding=0)  # a first score of 0 above the axis
        self.acc_plot.setLimits(yMin=-0.03, yMax=1.05)
        fill = style.current().q("canvas")
        fill.setAlpha(230)
        # top left: accuracy rises from the bottom left, so that corner stays empty all run long
        self.legend = self.acc_plot.addLegend(offset=(8, 4), labelTextSize=f"{style.SMALL_POINT_SIZE}pt",
                                              brush=pg.mkBrush(fill))
        self.legend.setZValue(10)
        self.curves = {
            "loss_raw": make_curve(self.loss_plot, "loss_raw", 1),
            "loss": make_curve(self.loss_plot, "loss", 3),
            "accuracy": make_curve(self.acc_plot, "accuracy", 3, name="token accuracy (train)"),
            "exact": make_curve(self.acc_plot, "exact", 3, name=held_out_name("exact_match"), symbol="o",
                                symbolSize=8, symbolBrush=style.current().exact, symbolPen=None),
            "lr": make_curve(self.lr_plot, "lr", 3),
            "lr_now": make_curve(self.lr_plot, "lr", 0, symbol="o", symbolSize=10, symbolBrush=style.current().lr,
                                 symbolPen=None),
            "tokens_per_s": make_curve(self.speed_plot, "tokens_per_s", 3),
        }
        self.curves["lr_now"].setPen(None)  # a dot where the run is now, no line
        self.plan = make_curve(self.lr_plot, "lr_plan", 2, dashed=True)  # the rate ahead (`set_plan`)
        self.plan.setZValue(-5)
        self.plan_steps, self.plan_rates = np.zeros(0), np.zeros(0)
        self.warmup = WarmupMark(self.lr_plot)
        # until the first steps arrive the step-by-step plots say so: empty axes read as a failed run
        self.waiting = []
        for plot in (self.loss_plot, self.acc_plot, self.speed_plot):
            note = pg.TextItem(WAITING, anchor=(0.5, 0.5), color=style.current().muted)
            note.setFont(style.font(style.SMALL_POINT_SIZE))
            note.setPos(0.5, 0.5)  # the middle of an empty plot's 0–1 ranges
            note.hide()
            plot.addItem(note, ignoreBounds=True)
            self.waiting.append(note)

    def restyle_marks(self) -> None:
        """The curves, the warm-up line and the notes in the current theme's colours."""
        for key, curve in (*self.curves.items(), ("lr_plan", self.plan)):
            pen = pg.mkPen(curve.opts["pen"])  # (the dot's NoPen stays NoPen)
            pen.setColor(curve_colour(key))
            curve.setPen(pen)
        self.curves["exact"].setSymbolBrush(style.current().exact)
        self.curves["lr_now"].setSymbolBrush(style.current().lr)
        for note in self.waiting:
            note.setColor(style.current().muted)
        self.warmup.restyle()

    # -- arrangement, declared by the canvas' shape and the screen class ---------------------------
    def _arrange(self, in_a_row: bool) -> None:
        """2 × 2, or the four plots in one row on a wide, low canvas (no four flat strips)."""
        if self.in_a_row == in_a_row:
            return
        self.in_a_row, self.short_rows = in_a_row, None
        for plot in self.plots:
            self.ci.removeItem(plot)
        for i, plot in enumerate(self.plots):
            row, col = (0, i) if in_a_row else divmod(i, 2)
            self.ci.addItem(plot, row=row, col=col)
        for i in range(4):
            self.ci.layout.setColumnStretchFactor(i, 1 if in_a_row or i < 2 else 0)
            self.ci.layout.setRowStretchFactor(i, 1 if (i == 0 or not in_a_row and i < 2) else 0)

    def _thin_axes(self, short: bool) -> None:
        """Short rows: no "step" under every plot (the titles say it), and in 2 × 2 the accuracy
        plot leaves its step numbers to the throughput plot under it, which shares them."""
        if self.short_rows == short:
            return
        self.short_rows = short
        for plot in self.plots:
            axis = plot.getAxis("bottom")
            axis.showLabel(not short)
            axis.setStyle(showValues=not (short and not self.in_a_row and plot is self.acc_plot))

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._relayout()

    def _relayout(self) -> None:
        """Compact screens, or a canvas too narrow for a legend beside the data: no legend, the
        accuracy title names the colours instead."""
        if self.legend is None:
            return
        self._arrange(self.screen_class is not ScreenClass.NARROW and self.width() > ROW_RATIO * self.height())
        self._thin_axes(self.height() / (1 if self.in_a_row else 2) < SHORT_ROW)
        narrow = self.compact or self.width() / (2 if self.in_a_row else 1) < NARROW
        if narrow != self.legend.isVisible():
            return
        self.legend.setVisible(not narrow)
        self._show_titles()
        for plot in self.plots:
            plot.getAxis("bottom").setStyle(maxTextLevel=0 if narrow else 1)  # "0 1000", not "0 5001000"
        self.warmup.set_texts(narrow)

    def _show_titles(self) -> None:
        """The declared titles in the theme's text colour and presentation scale; the accuracy
        plot's names its colours while the legend is folded away."""
        size = f"{style.TITLE_POINT_SIZE * presentation.applied_scale():.1f}pt"
        key = colour_key_title(self.held_out_metric, two_lines=self.screen_class is ScreenClass.NARROW)
        titles = (TITLES["loss"], TITLES["acc"] if self.legend.isVisible() else key, TITLES["lr"], TITLES["speed"])
        for plot, title in zip(self.plots, titles):
            plot.setTitle(title, color=style.current().text, size=size)
            fit_title_row(plot)

    def apply_screen_class(self, cls: ScreenClass) -> None:
        """WIDE: legends in their plots and the value axes' full names; PROJECTOR and NARROW: no
        legend over the data (the accuracy title names the colours) and abbreviated axis names."""
        self.screen_class = cls
        self.compact = cls is not ScreenClass.WIDE
        for plot, key in ((self.loss_plot, "loss"), (self.acc_plot, "acc"), (self.speed_plot, "speed")):
            plot.getAxis("left").setLabel(AXIS_LABELS[self.compact][key])  # (the label's style is kept)
        self._relayout()
        self._show_titles()

    # -- data --------------------------------------------------------------------------------------
    def reset(self, warmup: int | None = None, decay_steps: int = 0) -> None:
        if decay_steps != self.lr_decay_steps:
            self.lr_decay_steps = decay_steps
            self.lr_plot.setToolTip(lr_tooltip(decay_steps))
        for s in self.series.values():
            s.clear()
        self.exact_steps.clear()
        self.exact_values.clear()
        self._scale_rate_axis(0.0)  # plain "lr" until the run's first rates
        for c in self.curves.values():
            c.setData([], [])
        self.set_plan(np.zeros(0), np.zeros(0))
        for plot in (self.loss_plot, self.speed_plot):  # the empty 0–1 ranges the notes sit in
            plot.getViewBox().setRange(xRange=(0, 1), yRange=(0, 1), padding=0)
            plot.getViewBox().enableAutoRange()
        self._dirty = False
        self.warmup.show_at(warmup)
        for note in self.waiting:
            note.setColor(style.current().muted)
            note.show()

    def stop_waiting(self) -> None:
        """The run is over: the empty plots no longer say the first steps are coming."""
        for note in self.waiting:
            note.hide()

    def set_plan(self, steps: np.ndarray, rates: np.ndarray) -> None:
        """The rate the run will use at each step (`RunInfo.planned_rates`), dashed across the whole
        run from its start: the run's own rates trace over it, a dot where it is now. The rate plot
        then spans the whole run; with no plan it follows the run."""
        self.plan_steps, self.plan_rates = np.asarray(steps, float), np.asarray(rates, float)
        self.plan.setData(self.plan_steps, self.plan_rates)
        vb = self.lr_plot.getViewBox()
        if len(self.plan_steps):
            vb.setXRange(0, float(self.plan_steps[-1]), padding=0.05)  # (the "0" under the start stays)
            vb.setYRange(0, float(self.plan_rates.max()), padding=0.05)
            vb.disableAutoRange()
            self._scale_rate_axis(float(self.plan_rates.max()))
        else:
            vb.enableAutoRange()

    def add_rows(self, rows: MetricRows) -> None:
        """Append to the buffers only; `refresh()` hands them to the plot items."""
        x = rows.step.astype(float)
        for name, series in self.series.items():
            series.extend(x, getattr(rows, name))
        self._dirty = True

    def refresh(self) -> None:
        if not self._dirty:
            return
        self._dirty = False
        loss, acc, speed, lr = (self.series[k] for k in ("loss", "accuracy", "tokens_per_s", "lr"))
        for note in self.waiting:
            note.setVisible(loss.n == 0)
        self.curves["loss_raw"].setData(loss.x, loss.y)
        self.curves["loss"].setData(loss.x, loss.smoothed)
        self.curves["accuracy"].setData(acc.x, acc.smoothed)
        self.curves["tokens_per_s"].setData(speed.x, speed.smoothed / 1000)  # short tick labels
        self.curves["lr"].setData(lr.x, lr.y)  # exact, not smoothed: the schedule is the point
        self.curves["lr_now"].setData(lr.x[-1:], lr.y[-1:])
        planned = float(self.plan_rates.max()) if len(self.plan_rates) else 0.0
        peak = max(float(np.max(lr.y)) if lr.n else 0.0, planned)
        self._scale_rate_axis(peak)
        if planned and peak > planned * 1.05:  # (not as planned)
            self.lr_plot.getViewBox().setYRange(0, peak, padding=0.05)
        self.curves["exact"].setData(np.asarray(self.exact_steps, float), np.asarray(self.exact_values, float))

    def _scale_rate_axis(self, peak: float) -> None:
        """Rates in units of their peak's power of ten (`rate_axis`), set only when it changes."""
        exponent, label = rate_axis(peak)
        if exponent == self.rate_exponent:
            return
        self.rate_exponent = exponent
        axis = self.lr_plot.getAxis("left")
        axis.setScale(10.0 ** -exponent)
        axis.setLabel(label)

    def add_eval(self, event) -> None:
        """A held-out evaluation (`EvalEvent`), its points named by what it measured."""
        self.set_metric(getattr(event, "metric", "exact_match"))
        self.exact_steps.append(event.step)
        self.exact_values.append(event.score)
        self._dirty = True

    def set_metric(self, metric: str) -> None:
        """Name the held-out curve by its metric: exact match (encoder-decoder), masked-token
        accuracy (masked LM) or next-token accuracy (decoder-only LM)."""
        if metric == self.held_out_metric:
            return
        self.held_out_metric = metric
        curve = self.curves["exact"]
        self.legend.removeItem(curve)
        self.legend.addItem(curve, held_out_name(metric))
        if not self.legend.isVisible():  # folded away: the accuracy title names the colours
            self._show_titles()


__all__ = ["TrainingCurves", "Series", "SMOOTHING"]
