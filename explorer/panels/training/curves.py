"""Live training curves: loss, accuracy (token and a held-out score: exact match, or for the
variants masked-token / next-token accuracy), the learning rate of
Section 5.3 (warm-up rising, then decaying as 1/√step) and throughput.

The plot items are created once; each batch of metric rows is appended to growing numpy
buffers, and `refresh()` (called as often as the panel's redraw budget allows) hands them
to `setData` in place (pyqtgraph clips to the view and downsamples, so a run of 100 000
steps redraws as fast as one of 100). Noisy series are shown raw (faint)
and smoothed with a debiased exponential moving average (bold), as TensorBoard does.
"""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QFontMetricsF

from explorer import presentation, style
from explorer.drawing.plot_style import fit_title_row
from explorer.panels.training.curve_plots import SUPERSCRIPT, WIDEST_VALUES, curve_colour, make_curve, make_plot
from explorer.panels.training.curve_titles import (
    AXIS_LABELS,
    METRIC_NAMES,
    TITLES,
    TOOLTIPS,
    colour_key_title,
    lr_tooltip,
)
from explorer.panels.training.messages import MetricRows
from explorer.panels.training.series import SMOOTHING, Series
from explorer.panels.training.timed_canvas import TimedCanvas
from explorer.panels.training.warmup_mark import WarmupMark
from explorer.screen import ScreenClass

pg.setConfigOptions(imageAxisOrder="row-major")

WAITING = "waiting for\nthe first steps"  # in each empty plot while a run starts (two short lines: ~150-px plots)
ROW_RATIO = 2.4  # wider than this × its height: the four plots in one row
SHORT_ROW = 230  # px: a row of plots lower than this drops the step axis' label
NARROW = 620  # px: below this the legend would hide the curves and long titles would collide


class TrainingCurves(TimedCanvas):
    """Four plots sharing the step axis."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setBackground(style.current().canvas)
        # tight: pyqtgraph's 9-px margins and 6-px gaps would cost each of two rows of plots ~10 px
        self.ci.layout.setContentsMargins(2, 2, 2, 2)
        self.ci.layout.setSpacing(3)
        self.series = {name: Series() for name in ("loss", "accuracy", "lr", "tokens_per_s")}
        self.exact_steps: list[int] = []
        self.exact_values: list[float] = []
        # What the held-out points are (EvalEvent.metric). Not named `metric`: on a QWidget that
        # name would shadow QPaintDevice.metric(), which Qt calls for fonts, and crash the app.
        self.held_out_metric = "exact_match"
        self.lr_decay_steps = 0  # the run's TrainConfig.lr_decay_steps (0: Eq. 3)
        self.rate_exponent = 0  # the rate axis counts in units of 10**rate_exponent
        self._dirty = False
        labels = AXIS_LABELS[ScreenClass.WIDE]
        self.loss_plot = make_plot(self, 0, 0, TITLES["loss"], labels["loss"], TOOLTIPS["loss"])
        self.acc_plot = make_plot(self, 0, 1, TITLES["acc"], labels["acc"], TOOLTIPS["acc"])
        self.lr_plot = make_plot(self, 1, 0, TITLES["lr"], "lr", lr_tooltip())
        self.speed_plot = make_plot(self, 1, 1, TITLES["speed"], labels["speed"], TOOLTIPS["speed"])
        # The rate plot spans the whole run (its schedule is known ahead, `set_plan`); the other
        # three share the steps trained so far.
        for plot in (self.acc_plot, self.speed_plot):
            plot.setXLink(self.loss_plot)
        for plot in (self.loss_plot, self.acc_plot, self.lr_plot, self.speed_plot):
            plot.setPreferredSize(1, 1)  # equal shares: the layout then splits the room by stretch only
        self._arrange(False)
        # a score of 0 (the first held-out point) above the axis, not half under it
        self.acc_plot.setYRange(-0.03, 1.02, padding=0)
        self.acc_plot.setLimits(yMin=-0.03, yMax=1.05)
        # Top left: accuracy rises from the bottom left, so that corner stays empty all run long.
        fill = style.current().q("canvas")  # the theme's canvas, as plot_style.restyle_view fills legends
        fill.setAlpha(230)
        legend = self.acc_plot.addLegend(offset=(8, 4), labelTextSize=f"{style.SMALL_POINT_SIZE}pt",
                                         brush=pg.mkBrush(fill))
        legend.setZValue(10)
        self.legend = legend
        self.curves = {
            "loss_raw": make_curve(self.loss_plot, "loss_raw", 1),
            "loss": make_curve(self.loss_plot, "loss", 3),
            "accuracy": make_curve(self.acc_plot, "accuracy", 3, name="token accuracy (train)"),
            "exact": make_curve(self.acc_plot, "exact", 3, name=METRIC_NAMES["exact_match"][0], symbol="o",
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
        # Until the run's first steps arrive the three step-by-step plots say so, so that empty
        # axes numbered 0–1 do not read as a run that failed.
        self.waiting = []
        for plot in (self.loss_plot, self.acc_plot, self.speed_plot):
            note = pg.TextItem(WAITING, anchor=(0.5, 0.5), color=style.current().muted)
            note.setFont(style.font(style.SMALL_POINT_SIZE))
            note.setPos(0.5, 0.5)  # the middle of an empty plot's 0–1 ranges
            note.hide()
            plot.addItem(note, ignoreBounds=True)
            self.waiting.append(note)

    def restyle_marks(self) -> None:
        """The curves, the warm-up line and its label in the current theme's colours (after a
        theme change)."""
        for key, curve in (*self.curves.items(), ("lr_plan", self.plan)):
            pen = pg.mkPen(curve.opts["pen"])  # (the dot's NoPen stays NoPen)
            pen.setColor(curve_colour(key))
            curve.setPen(pen)
        self.curves["exact"].setSymbolBrush(style.current().exact)
        self.curves["lr_now"].setSymbolBrush(style.current().lr)
        for note in self.waiting:
            note.setColor(style.current().muted)
        self.warmup.restyle()

    def _arrange(self, in_a_row: bool) -> None:
        """2 × 2, or the four plots in one row when the canvas is wide and low: each keeps a
        readable height instead of four flat strips."""
        plots = (self.loss_plot, self.acc_plot, self.lr_plot, self.speed_plot)
        if getattr(self, "in_a_row", None) == in_a_row:
            return
        self.in_a_row = in_a_row
        self.short_rows = None  # which axes are thinned depends on the arrangement
        for plot in plots:
            self.ci.removeItem(plot)
        for i, plot in enumerate(plots):
            row, col = (0, i) if in_a_row else divmod(i, 2)
            self.ci.addItem(plot, row=row, col=col)
        for i in range(4):
            self.ci.layout.setColumnStretchFactor(i, 1 if in_a_row or i < 2 else 0)
            self.ci.layout.setRowStretchFactor(i, 1 if (i == 0 or not in_a_row and i < 2) else 0)

    def _thin_axes(self, short: bool) -> None:
        """Short rows: no "step" under every plot (the titles say what is
        plotted against steps), and in 2 × 2 the accuracy plot leaves its steps to the throughput
        plot under it, which shares them. (The loss plot keeps its numbers: the rate plot under
        it spans the whole run.)"""
        if getattr(self, "short_rows", None) == short:
            return
        self.short_rows = short
        for plot in (self.loss_plot, self.acc_plot, self.lr_plot, self.speed_plot):
            axis = plot.getAxis("bottom")
            axis.showLabel(not short)
            axis.setStyle(showValues=not (short and not self.in_a_row and plot is self.acc_plot))

    compact = False  # no legend: the accuracy title names the colours (`apply_screen_class`)
    screen_class = ScreenClass.WIDE

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._relayout()

    def _relayout(self) -> None:
        """Compact (PROJECTOR, NARROW) or a canvas too narrow for a legend box beside the data: no
        legend, the accuracy title names the colours instead."""
        legend = getattr(self, "legend", None)  # pyqtgraph calls this once before __init__ is done
        if legend is None:
            return
        self._arrange(self.screen_class is not ScreenClass.NARROW and self.width() > ROW_RATIO * self.height())
        self._thin_axes(self.height() / (1 if self.in_a_row else 2) < SHORT_ROW)
        self._fit_value_axes()
        narrow = self.compact or self.width() / (2 if self.in_a_row else 1) < NARROW
        if narrow != legend.isVisible():
            return
        legend.setVisible(not narrow)
        self._show_titles()
        for plot in (self.loss_plot, self.acc_plot, self.lr_plot, self.speed_plot):
            plot.getAxis("bottom").setStyle(maxTextLevel=0 if narrow else 1)  # "0 1000", not "0 5001000"
        self.warmup.set_texts(narrow)

    def _show_titles(self) -> None:
        """The declared titles, in the current theme's text colour and presentation scale; the
        accuracy plot's names its colours while the legend is folded away."""
        colour = style.current().text
        size = f"{style.TITLE_POINT_SIZE * presentation.applied_scale():.1f}pt"
        key = colour_key_title(self.held_out_metric, two_lines=self.screen_class is ScreenClass.NARROW)
        acc = TITLES["acc"] if self.legend.isVisible() else key
        for plot, title in ((self.loss_plot, TITLES["loss"]), (self.acc_plot, acc),
                            (self.lr_plot, TITLES["lr"]), (self.speed_plot, TITLES["speed"])):
            plot.setTitle(title, color=colour, size=size)
            fit_title_row(plot)  # pyqtgraph's 30-px row would cut an enlarged or two-line title

    def apply_screen_class(self, cls: ScreenClass) -> None:
        """WIDE: legends in their plots and the value axes' full names; PROJECTOR and NARROW: no
        legend box over the data (the accuracy title names the colours) and abbreviated axis names."""
        self.screen_class = cls
        self.compact = cls is not ScreenClass.WIDE
        labels = AXIS_LABELS[cls]
        for plot, key in ((self.loss_plot, "loss"), (self.acc_plot, "acc"), (self.speed_plot, "speed")):
            plot.getAxis("left").setLabel(labels[key])  # (the label's style — colour, size — is kept)
        self._relayout()
        self._show_titles()

    def _fit_value_axes(self) -> None:
        """Each plot's value axis as wide as its widest number and its title, at the tick font's
        current size (at least 62 px), so enlarged tick labels keep every number."""
        for plot, widest in zip((self.loss_plot, self.acc_plot, self.lr_plot, self.speed_plot), WIDEST_VALUES):
            axis = plot.getAxis("left")
            metrics = QFontMetricsF(axis.style.get("tickFont") or style.font(style.SMALL_POINT_SIZE))
            title = axis.label.boundingRect().height() if axis.label.isVisible() else 0  # (it runs up the axis)
            width = max(62, int(metrics.horizontalAdvance(widest) + title + 14))  # + the tick and its gap
            if abs(axis.width() - width) > 1:
                axis.setWidth(width)

    # -- data ------------------------------------------------------------------------------------
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
        # the empty 0–1 ranges the waiting notes sit in, not a last run's range (auto-range keeps
        # it while nothing has bounds); the accuracy plot's x follows the loss'
        for plot in (self.loss_plot, self.speed_plot):
            view = plot.getViewBox()
            view.setRange(xRange=(0, 1), yRange=(0, 1), padding=0)
            view.enableAutoRange()
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
        """The learning rate the run will use at each step (`RunInfo.planned_rates`), drawn dashed
        across the whole run before it starts: Section 5.3's warm-up and decay are there to see
        from the first second, and the run's own rates trace over them, a dot where it is now.
        The rate plot then spans steps 0…the run's last; with no plan it follows the run."""
        self.plan_steps, self.plan_rates = np.asarray(steps, float), np.asarray(rates, float)
        self.plan.setData(self.plan_steps, self.plan_rates)
        vb = self.lr_plot.getViewBox()
        if len(self.plan_steps):
            # padded, so the "0" under the start is not dropped at the edge
            vb.setXRange(0, float(self.plan_steps[-1]), padding=0.05)
            vb.setYRange(0, float(self.plan_rates.max()), padding=0.05)
            vb.disableAutoRange()
            self._scale_rate_axis(float(self.plan_rates.max()))
            self.warmup.set_rates(self.plan_steps, self.plan_rates)
        else:
            vb.enableAutoRange()

    def add_rows(self, rows: MetricRows) -> None:
        """Append to the buffers only; `refresh()` hands them to the plot items."""
        x = rows.step.astype(float)
        for name in self.series:
            self.series[name].extend(x, getattr(rows, name))
        self._dirty = True

    def refresh(self) -> None:
        if not self._dirty:
            return
        self._dirty = False
        loss = self.series["loss"]
        for note in self.waiting:
            note.setVisible(loss.n == 0)
        self.curves["loss_raw"].setData(loss.x, loss.y)
        self.curves["loss"].setData(loss.x, loss.smoothed)
        acc, speed = self.series["accuracy"], self.series["tokens_per_s"]
        self.curves["accuracy"].setData(acc.x, acc.smoothed)
        self.curves["tokens_per_s"].setData(speed.x, speed.smoothed / 1000)  # short tick labels
        lr = self.series["lr"]
        self.curves["lr"].setData(lr.x, lr.y)  # exact, not smoothed: the schedule is the point
        self.curves["lr_now"].setData(lr.x[-1:], lr.y[-1:])
        peak = max(float(np.max(lr.y)) if len(lr.y) else 0.0, float(self.plan_rates.max()) if len(self.plan_rates) else 0.0)
        self._scale_rate_axis(peak)
        if len(self.plan_steps) and len(lr.y) and lr.y.max() > self.plan_rates.max() * 1.05:  # (not as planned)
            self.lr_plot.getViewBox().setYRange(0, peak, padding=0.05)
        self.warmup.set_rates(*((self.plan_steps, self.plan_rates) if len(self.plan_steps) else (lr.x, lr.y)))
        self.curves["exact"].setData(np.asarray(self.exact_steps, float), np.asarray(self.exact_values, float))

    def _scale_rate_axis(self, peak: float) -> None:
        """Rates in units of their peak's power of ten: "0 2 4 6 8" beside "lr (×10⁻³)", not
        numbers like "0.0006" that would make the axis wide and the rate plot a strip. Set only
        when the power changes (pyqtgraph's own SI prefix relabels on every range change)."""
        exponent = math.floor(math.log10(peak)) if peak > 0 else 0
        if exponent == self.rate_exponent:
            return
        self.rate_exponent = exponent
        axis = self.lr_plot.getAxis("left")
        axis.setScale(10.0 ** -exponent)
        axis.setLabel(f"lr (×10{str(exponent).translate(SUPERSCRIPT)})" if exponent else "lr")
        self._fit_value_axes()

    def add_exact_match(self, step: int, value: float) -> None:
        self.exact_steps.append(step)
        self.exact_values.append(value)
        self._dirty = True

    def add_eval(self, event) -> None:
        """A held-out evaluation (`EvalEvent`), its points named by what it measured."""
        self.set_metric(getattr(event, "metric", "exact_match"))
        self.add_exact_match(event.step, event.score)

    def set_metric(self, metric: str) -> None:
        """Name the held-out curve by its metric: exact match (encoder-decoder), masked-token
        accuracy (masked LM) or next-token accuracy (decoder-only LM)."""
        if metric == self.held_out_metric:
            return
        self.held_out_metric = metric
        curve = self.curves["exact"]
        self.legend.removeItem(curve)
        self.legend.addItem(curve, METRIC_NAMES.get(metric, (metric,))[0])
        if not self.legend.isVisible():  # folded away: the accuracy title names the colours
            self._show_titles()

    def held_out_name(self) -> str:
        """The legend's name of the held-out curve (what the points measure)."""
        return METRIC_NAMES.get(self.held_out_metric, (self.held_out_metric,))[0]


__all__ = ["TrainingCurves", "TimedCanvas", "Series", "SMOOTHING"]
