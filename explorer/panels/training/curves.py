"""Live training curves: loss, accuracy (training batches and a held-out score), Section 5.3's
learning rate and throughput: four light plots (`MapPlot`) in one canvas drawing what
`model.train.curve_data.CurveData` hands them (clipped to the view, downsampled). Words and
shape: `model.train.curve_texts`."""
from __future__ import annotations

import time

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer

from explorer import presentation, style
from explorer.drawing.map_plot import MapPlot
from explorer.drawing.plot_style import SCALE_PROPERTY, let_shrink, restyle_view
from explorer.drawing.spaced_axis import step_and_value_axes
from explorer.panels.live_lab.plot_look import style_axes
from explorer.screen import ScreenClass
from model.train import curve_texts as texts
from model.train.curve_data import CurveData
from model.train.curve_texts import rate_axis

PLOTS = ("loss", "acc", "lr", "speed")  # their order: 2 × 2 row by row, or one row
BUILT_LATER = {"plots", "loss_plot", "acc_plot", "lr_plot", "speed_plot", "curves", "plan", "legend", "warmup",
               "waiting"}  # `TrainingCurves.build` makes them
WAITING = "waiting for\nthe first steps"  # in each empty plot while a run starts
WARMUP_TEXTS = ("warm-up ends", "warm-up")  # a wide plot's, a narrow one's
LEFT_OF, RIGHT_OF = (1, 1), (0, 1)  # anchors: the text's bottom right / bottom left corner at the line
DOT = {"symbol": "o", "symbolPen": None}
# each curve: its plot, pen width (0: dots only), dashed, theme colour (Palette field) and its alpha
# (the raw loss faint, the rate ahead of the run lighter than the run's own), and its dots
CURVES = {"loss_raw": (0, 1, False, "loss", None, {}), "loss": (0, 3, False, "loss", 255, {}),
          "accuracy": (1, 3, False, "accuracy", 255, {}), "exact": (1, 3, False, "exact", 255, {**DOT, "symbolSize": 8}),
          "lr_plan": (2, 2, True, "lr", 150, {}), "lr": (2, 3, False, "lr", 255, {}),
          "lr_now": (2, 0, False, "lr", 255, {**DOT, "symbolSize": 10}), "tokens_per_s": (3, 3, False, "speed", 255, {})}


def make_plot(key: str) -> MapPlot:
    """A plot with its title (`titleLabel`, in the plot's own layout over its view, where a PlotItem
    has it) and axes in the theme's colours."""
    plot = MapPlot(step_and_value_axes())  # steps never run together
    plot.titleLabel = pg.LabelItem(texts.TITLES[key], color=style.TEXT.name(), size=f"{style.TITLE_POINT_SIZE}pt")
    let_shrink(plot.titleLabel)
    plot.titleLabel.setPreferredWidth(1)  # (the plots, not their titles' lengths, share the width)
    plot.grid.addItem(plot.titleLabel, 0, 0, 1, 2)  # over the value axis and the view (no top axis here)
    for item in (plot, plot.titleLabel):
        item.setToolTip(texts.TOOLTIPS[key])  # what the short title leaves out
    style_axes(plot, {"bottom": "step", "left": texts.AXIS_LABELS[False][key]}, style.SMALL_POINT_SIZE)
    plot.setPreferredSize(1, 1)  # equal shares: the layout splits the room by stretch only
    return plot


def make_curve(plot: MapPlot, key: str) -> pg.PlotDataItem:
    """No antialiasing: it doubles the paint time, which the GUI thread takes from the training thread."""
    _i, width, dashed, _role, _alpha, opts = CURVES[key]
    pen = pg.mkPen(width=width, style=Qt.DashLine if dashed else Qt.SolidLine) if width else None
    curve = pg.PlotDataItem([], [], pen=pen, clipToView=True, autoDownsample=True, downsampleMethod="peak",
                            antialias=False, **opts)
    paint_curve(curve, key)
    plot.addItem(curve)
    return curve


def paint_curve(curve: pg.PlotDataItem, key: str) -> None:
    """The curve's line and dots in the current theme's colours (the raw loss fainter on a light canvas)."""
    p, (_i, _width, _dashed, role, alpha, _opts) = style.current(), CURVES[key]
    if curve.opts["pen"] is not None:
        pen = pg.mkPen(curve.opts["pen"])
        colour = pg.mkColor(getattr(p, role))
        colour.setAlpha(alpha or (150 if p.name == "dark" else 70))
        pen.setColor(colour)
        curve.setPen(pen)
    if curve.opts["symbol"] is not None:
        curve.setSymbolBrush(getattr(p, role))


class WarmupMark(pg.InfiniteLine):
    """The dashed line where the warm-up ends (Eq. 3's peak), labelled low, beside the line towards
    the middle of the view (pyqtgraph picks the anchor by the line's side)."""

    def __init__(self, plot: MapPlot):
        super().__init__(angle=90, movable=False, label=WARMUP_TEXTS[0],
                         labelOpts=dict(position=0.04, anchors=[RIGHT_OF, LEFT_OF]))
        self.setZValue(-10)  # under the curve
        self.label.setFont(style.role_font("small"))
        self.restyle()
        self.hide()
        plot.addItem(self)

    def restyle(self) -> None:
        """The theme's colours; the canvas behind the text hides the dashed line there."""
        p = style.current()
        self.setPen(pg.mkPen(p.muted, width=1.5, style=Qt.DashLine))
        self.label.setColor(p.muted)
        self.label.fill = pg.mkBrush(p.canvas)
        self.label.update()

    def show_at(self, step: int | None) -> None:
        self.setVisible(bool(step))
        if step:
            self.setValue(step)

    def set_texts(self, narrow: bool) -> None:
        self.label.setFormat(WARMUP_TEXTS[narrow])
        self.label.setText(WARMUP_TEXTS[narrow])  # (setFormat alone skips a hidden label)


class TrainingCurves(CurveData, pg.GraphicsLayoutWidget):
    """Four plots sharing the step axis (the rate plot spans the whole run), made in the turn after
    the canvas (`build`), or when first used. It adds up the time its paints
    take (`take_paint_time`): redraws are spaced by their cost, as painting holds the GIL."""

    screen_class = ScreenClass.WIDE
    built = False
    paint_seconds = 0.0

    def __init__(self, parent=None):
        pg.GraphicsLayoutWidget.__init__(self, parent)
        CurveData.__init__(self)
        self.setBackground(style.current().canvas)
        self.ci.layout.setContentsMargins(2, 2, 2, 2)
        self.ci.layout.setSpacing(3)
        self.rate_exponent = 0  # the rate axis counts in units of 10**rate_exponent
        self.curve_shape: texts.CurveShape | None = None  # how the plots are laid out now (`_relayout`)
        QTimer.singleShot(1, self, self.build)  # (a timer: 0 ms would run it with the events already posted)

    def __getattr__(self, name: str):
        """The plots and their items, made on first use where `build` has not run yet."""
        if name in BUILT_LATER and not self.built:
            self.build()
            return getattr(self, name)
        raise AttributeError(f"'TrainingCurves' object has no attribute {name!r}")

    def build(self) -> None:
        """The plots and their items, at the normal size, then scaled as the canvas is shown."""
        if self.built:
            return
        self.built, factor = True, style.scale()
        style.set_scale(1.0)
        try:
            self._make_items()
        finally:
            style.set_scale(factor)
        self._relayout()  # (in the canvas' scene, so that the restyle reaches them)
        if factor != 1.0:
            self.setProperty(SCALE_PROPERTY, 1.0)
            restyle_view(self)
        self.apply_screen_class(self.screen_class)
        self.setUpdatesEnabled(False)  # their first paint in a turn of its own
        QTimer.singleShot(1, self, lambda: self.setUpdatesEnabled(True))

    def _make_items(self) -> None:
        self.plots = tuple(make_plot(key) for key in PLOTS)
        self.loss_plot, self.acc_plot, self.lr_plot, self.speed_plot = self.plots
        for plot in (self.acc_plot, self.speed_plot):
            plot.vb.setXLink(self.loss_plot.vb)
        self.acc_plot.vb.setYRange(-0.03, 1.02, padding=0)  # a first score of 0 above the axis
        self.acc_plot.vb.setLimits(yMin=-0.03, yMax=1.05)
        self.curves = {key: make_curve(self.plots[spec[0]], key) for key, spec in CURVES.items()}
        self.plan = self.curves["lr_plan"]  # the rate ahead (`set_plan`)
        self.plan.setZValue(-5)
        fill = style.current().q("canvas")
        fill.setAlpha(230)
        # top left: accuracy rises from the bottom left, so that corner stays empty all run long
        self.legend = pg.LegendItem(offset=(8, 4), labelTextSize=f"{style.SMALL_POINT_SIZE}pt", brush=pg.mkBrush(fill))
        self.legend.setParentItem(self.acc_plot.vb)
        self.legend.setZValue(10)
        self.legend.addItem(self.curves["accuracy"], "token accuracy (train)")
        self.legend.addItem(self.curves["exact"], texts.held_out_name(self.held_out_metric))
        self.warmup = WarmupMark(self.lr_plot)
        # until the first steps arrive the step-by-step plots say so: empty axes read as a failed run
        self.waiting = []
        for plot in (self.loss_plot, self.acc_plot, self.speed_plot):
            note = pg.TextItem(WAITING, anchor=(0.5, 0.5), color=style.current().muted)
            note.setFont(style.role_font("small"))
            note.setPos(0.5, 0.5)  # the middle of an empty plot's 0–1 ranges
            note.hide()
            plot.addItem(note, ignoreBounds=True)
            self.waiting.append(note)

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        start = time.perf_counter()
        super().paintEvent(event)
        self.paint_seconds += time.perf_counter() - start

    def take_paint_time(self) -> float:
        spent, self.paint_seconds = self.paint_seconds, 0.0
        return spent

    def restyle_marks(self) -> None:
        """The curves, the warm-up line and the notes in the current theme's colours."""
        if not self.built:
            return
        for key, curve in self.curves.items():
            paint_curve(curve, key)
        for note in self.waiting:
            note.setColor(style.current().muted)
        self.warmup.restyle()

    # -- arrangement, declared by the canvas' shape and the screen class ---------------------------
    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._relayout()

    def _relayout(self) -> None:
        """The canvas' shape (`curve_shape`): 2 × 2 or one row; short rows without "step" under the
        plots (in 2 × 2 accuracy leaves its steps to the shared throughput's); a legend only with room
        for it, else short warm-up words."""
        if not self.built:
            return
        shape = texts.curve_shape(self.width(), self.height(), self.screen_class is ScreenClass.NARROW,
                                  self.screen_class is not ScreenClass.WIDE)
        before, self.curve_shape, grid = self.curve_shape, shape, self.ci.layout
        if shape == before:
            return
        if before is None or shape.in_a_row != before.in_a_row:
            for i, plot in enumerate(self.plots):
                if before is not None:
                    grid.removeItem(plot)
                grid.addItem(plot, *((0, i) if shape.in_a_row else divmod(i, 2)))
            for i in range(4):
                grid.setColumnStretchFactor(i, 1 if shape.in_a_row or i < 2 else 0)
                grid.setRowStretchFactor(i, 1 if i == 0 or (i == 1 and not shape.in_a_row) else 0)
        for plot in self.plots:
            axis = plot.getAxis("bottom")
            axis.showLabel(not shape.short_rows)
            axis.setStyle(showValues=not (shape.short_rows and not shape.in_a_row and plot is self.acc_plot),
                          maxTextLevel=int(shape.legend))  # "0 1000", not "0 5001000"
        if before is None or shape.legend != before.legend:
            self.legend.setVisible(shape.legend)
            self.warmup.set_texts(not shape.legend)
            self._show_titles()

    def _show_titles(self) -> None:
        """At the presentation's scale; the accuracy plot's names its colours while there is no legend."""
        size = f"{style.TITLE_POINT_SIZE * presentation.applied_scale():.1f}pt"
        p = style.current()
        key = texts.colour_key_title(self.held_out_metric, p.accuracy, p.exact, self.screen_class is ScreenClass.NARROW)
        for plot, name in zip(self.plots, PLOTS):
            title = key if name == "acc" and not self.legend.isVisible() else texts.TITLES[name]
            plot.titleLabel.setText(title, color=p.text, size=size)

    def apply_screen_class(self, cls: ScreenClass) -> None:
        """WIDE: a legend and the value axes' full names; else no legend over the data, short names."""
        self.screen_class = cls
        if not self.built:
            return
        for plot, key in zip(self.plots, PLOTS):
            if key != "lr":  # (the rate's names its unit: `_scale_rate_axis`)
                plot.getAxis("left").setLabel(texts.AXIS_LABELS[cls is not ScreenClass.WIDE][key])  # (style kept)
        self._relayout()
        self._show_titles()

    # -- data: `CurveData` keeps it, the plots draw its `frame` ----------------------------------
    def reset(self, warmup: int | None = None, decay_steps: int = 0) -> None:
        CurveData.reset(self, warmup, decay_steps)
        for item in (self.lr_plot, self.lr_plot.titleLabel):
            item.setToolTip(texts.lr_tooltip(self.lr_decay_steps))
        self._scale_rate_axis(rate_axis(0.0))  # plain "lr" until the run's first rates
        for c in self.curves.values():
            c.setData([], [])
        for plot in (self.loss_plot, self.speed_plot):  # the empty 0–1 ranges the notes sit in
            plot.vb.setRange(xRange=(0, 1), yRange=(0, 1), padding=0)
            plot.vb.enableAutoRange()
        self.warmup.show_at(self.warmup_step)
        self.show_waiting(True)

    def show_waiting(self, on: bool) -> None:
        """Whether the empty plots say the first steps are coming (not once the run is over)."""
        for note in self.waiting:
            note.setVisible(on)

    def set_plan(self, steps: np.ndarray, rates: np.ndarray) -> None:
        """The run's planned rates, dashed over the whole run the rate plot then spans."""
        CurveData.set_plan(self, steps, rates)
        self.plan.setData(self.plan_steps, self.plan_rates)
        ranges, vb = self.plan_range(), self.lr_plot.vb
        if ranges is None:
            vb.enableAutoRange()
            return
        vb.setRange(xRange=ranges[0], yRange=ranges[1], padding=0.05)  # (the "0" under the start stays)
        vb.disableAutoRange()
        self._scale_rate_axis(rate_axis(ranges[1][1]))

    def refresh(self) -> None:
        """Hand what came since the last refresh to the plot items."""
        if not self.dirty:
            return
        frame = self.frame()
        self.show_waiting(frame.waiting)
        for key, (x, y) in frame.lines.items():
            self.curves[key].setData(x, y)
        self._scale_rate_axis(frame.rate_unit)
        if frame.rate_top is not None:
            self.lr_plot.vb.setYRange(0, frame.rate_top, padding=0.05)

    def _scale_rate_axis(self, unit: tuple[int, str]) -> None:
        """Rates in units of their peak's power of ten (`rate_axis`), set only when it changes."""
        exponent, label = unit
        if exponent != self.rate_exponent:
            self.rate_exponent = exponent
            axis = self.lr_plot.getAxis("left")
            axis.setScale(10.0 ** -exponent)
            axis.setLabel(label)

    def add_eval(self, event) -> None:
        """A held-out evaluation (`EvalEvent`), its points named by what it measured (`set_metric`)."""
        self.add_score(event.step, event.score, getattr(event, "metric", "exact_match"))

    def set_metric(self, metric: str) -> bool:
        """The held-out points named by their metric (exact match, masked- or next-token accuracy)."""
        changed = CurveData.set_metric(self, metric)
        if changed and self.built:
            self.legend.getLabel(self.curves["exact"]).setText(texts.held_out_name(self.held_out_metric))
            self._show_titles()  # (the accuracy title names the colours while the legend is folded away)
        return changed


__all__ = ["TrainingCurves"]
