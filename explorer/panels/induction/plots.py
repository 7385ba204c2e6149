"""The induction lab's three curves over training steps: the training loss, the in-context
learning score, and every head's induction score, each with a dashed vertical line at the
detected phase change.

Colours come from the theme: the loss in its `loss` colour, the ICL score in `accent`, the
heads in the first data series by head number, layer 1 dashed and layer 2 solid (so the
legend's eight entries stay readable), the phase change in `warning`. Legends stand in a row
under their plot, never over the curves. Items are made once and updated in place;
`restyle()` recolours them after a theme change.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetricsF

from explorer import style
from explorer.drawing.plot_style import fit_title_row, let_shrink
from explorer.drawing.spaced_axis import SpacedAxis

PHASE_LABEL = "phase\nchange"  # two short lines: beside the line on a narrow plot


def head_pen(layer: int, head: int) -> pg.QtGui.QPen:
    colour = style.current().series[head % len(style.current().series)]
    return pg.mkPen(colour, width=3 if layer else 2, style=Qt.DashLine if layer == 0 else Qt.SolidLine)


def _phase_pen():
    return pg.mkPen(style.current().warning, width=2, style=Qt.DashLine)


class StepPlot(pg.PlotWidget):
    """One still plot over steps, titled, with the phase-change line (hidden until there is one)."""

    def __init__(self, title: str, y_label: str, tooltip: str, label_phase: bool = False, parent=None):
        super().__init__(parent=parent, enableMenu=False, axisItems={"bottom": SpacedAxis("bottom")})  # steps never run together
        plot = style.still_plot(self.getPlotItem())
        self.title_text = title
        self._set_title()
        for name, label in (("bottom", "step"), ("left", y_label)):
            axis = plot.getAxis(name)
            axis.setTickFont(style.font(style.SMALL_POINT_SIZE))
            axis.setLabel(label, **{"font-size": style.css_pt(style.SMALL_POINT_SIZE)})
        plot.getAxis("left").enableAutoSIPrefix(False)
        plot.showGrid(y=True, alpha=0.2)
        self.setToolTip(tooltip)
        # the label near the top, on the side of the line towards the middle of the view (pyqtgraph
        # picks between the two anchors), so it never runs off the plot's edge
        opts = dict(position=0.97, anchors=[(0, 0), (1, 0)], color=style.current().warning) if label_phase else None
        self.phase = pg.InfiniteLine(angle=90, movable=False, pen=_phase_pen(),
                                     label=PHASE_LABEL if label_phase else None, labelOpts=opts)
        self.phase_label = self.phase.label if label_phase else None  # (pyqtgraph makes one only when asked)
        if self.phase_label is not None:
            self.phase_label.setFont(style.font(style.SMALL_POINT_SIZE))
        self.phase.hide()
        plot.addItem(self.phase, ignoreBounds=True)
        self._colour_axes()

    def _set_title(self) -> None:
        plot = self.getPlotItem()
        plot.setTitle(self.title_text, color=style.TEXT.name(), size=f"{style.TITLE_POINT_SIZE * style.scale():.1f}pt")
        let_shrink(plot.titleLabel)
        fit_title_row(plot)

    def _colour_axes(self) -> None:
        for name in ("bottom", "left"):
            axis = self.getPlotItem().getAxis(name)
            axis.setPen(style.MUTED.name())
            axis.setTextPen(style.TEXT.name())
            axis.setLabel(axis.labelText, color=style.TEXT.name(),
                          **{"font-size": style.css_pt(style.SMALL_POINT_SIZE)})

    def show_phase(self, step: int | None) -> None:
        if step is None:
            self.phase.hide()
            return
        self.phase.setValue(step)
        self.phase.show()
        self.phase.setToolTip(f"The phase change, at step {step}: the ICL score has come half its way "
                              "from where it started to where it is now, and stays past that point")

    def restyle(self) -> None:
        self._set_title()
        self._colour_axes()
        self.phase.setPen(_phase_pen())
        if self.phase_label is not None:
            self.phase_label.setColor(style.current().warning)


class LossPlot(StepPlot):
    """The training loss per step, and ln(vocab-1): the loss of a uniform guess."""

    def __init__(self, parent=None):
        super().__init__("Loss", "nats / token",
                         "Next-token cross-entropy of each training batch. Before the phase change nothing "
                         "can be predicted (the dashed line: a uniform guess); after it the second copy can.",
                         parent=parent)
        self.curve = self.plot([], [], pen=pg.mkPen(style.current().loss, width=2), antialias=False)
        self.uniform = pg.InfiniteLine(angle=0, movable=False, pen=pg.mkPen(style.MUTED.name(), width=1.5,
                                                                            style=Qt.DotLine))
        self.uniform.hide()
        self.addItem(self.uniform)
        self.steps, self.losses = np.zeros(0), np.zeros(0)

    def clear_run(self, vocab: int) -> None:
        self.steps, self.losses = np.zeros(0), np.zeros(0)
        self.curve.setData([], [])
        self.uniform.setValue(float(np.log(vocab - 1)))
        self.uniform.setToolTip(f"ln({vocab - 1}) = {np.log(vocab - 1):.2f}: the loss of a uniform guess")
        self.uniform.show()
        self.show_phase(None)

    def extend(self, steps: np.ndarray, losses: np.ndarray) -> None:
        self.steps = np.concatenate([self.steps, steps])
        self.losses = np.concatenate([self.losses, losses])
        self.curve.setData(self.steps, self.losses)

    def restyle(self) -> None:
        super().restyle()
        self.curve.setPen(pg.mkPen(style.current().loss, width=2))
        self.uniform.setPen(pg.mkPen(style.MUTED.name(), width=1.5, style=Qt.DotLine))


class IclPlot(StepPlot):
    """The in-context-learning score: loss on the second copy minus loss on the first."""

    def __init__(self, parent=None):
        super().__init__("ICL score", "nats",
                         "Loss on the second copy minus loss on the first copy (nats), on a fixed batch. "
                         "0: the repeat is no easier; strongly negative: the model copies from context "
                         "(Olsson et al.'s ICL score: late-token minus early-token loss).", parent=parent)
        self.curve = self.plot([], [], pen=pg.mkPen(style.current().accent, width=3), antialias=False,
                               symbol=None)
        self.zero = pg.InfiniteLine(0.0, angle=0, movable=False, pen=pg.mkPen(style.MUTED.name(), width=1))
        self.addItem(self.zero)

    def set_points(self, steps: list[int], values: list[float]) -> None:
        """The curve, in a range that holds at least -1 … 0.2 nats: early noise of a few hundredths
        must not look like a swing."""
        self.curve.setData(steps, values)
        low = min([-1.0, *values])
        high = max([0.2, *values])
        self.getPlotItem().setYRange(low, high, padding=0.05)

    def restyle(self) -> None:
        super().restyle()
        self.curve.setPen(pg.mkPen(style.current().accent, width=3))
        self.zero.setPen(pg.mkPen(style.MUTED.name(), width=1))


class HeadScorePlot(StepPlot):
    """Each head's induction score over steps. The legend under the plot names the heads by colour
    (the last layer's, solid) and says that the layers below are dashed: short enough for a beamer."""

    def __init__(self, parent=None):
        super().__init__("Induction", "score",
                         "Each head's mean attention from a token in the second copy to the token after its "
                         "first occurrence (the key an induction head reads). Colour: the head; the last layer solid, the "
                         "layers below dashed.",
                         label_phase=True, parent=parent)
        plot = self.getPlotItem()
        plot.setYRange(0, 1, padding=0.02)
        plot.enableAutoRange(y=False)
        self.legend = pg.LegendItem(colCount=5, frame=False, labelTextColor=style.TEXT.name(),
                                    labelTextSize=f"{style.SMALL_POINT_SIZE * style.scale():.0f}pt",
                                    horSpacing=8, verSpacing=-6)
        plot.layout.addItem(self.legend, 4, 1)
        plot.layout.setAlignment(self.legend, Qt.AlignHCenter)
        self.curves: dict[tuple[int, int], pg.PlotDataItem] = {}
        self.lower: pg.PlotDataItem | None = None  # the legend's "layers below: dashed" sample
        self.layers = 0

    def set_heads(self, layers: int, heads: int) -> None:
        """One curve per head (made again only when the shape changes; `set_points` empties them)."""
        if self.layers == layers and len(self.curves) == layers * heads:
            return
        for curve in self.curves.values():
            self.removeItem(curve)
        self.legend.clear()
        self.curves = {}
        for layer in range(layers):
            for head in range(heads):
                curve = self.plot([], [], pen=head_pen(layer, head), antialias=False)
                self.curves[(layer, head)] = curve
                if layer == layers - 1:
                    self.legend.addItem(curve, f"H{head + 1}")
        if layers > 1:  # a sample line only, never drawn in the plot
            self.lower = pg.PlotDataItem([], [], pen=self._lower_pen())
            self.legend.addItem(self.lower, f"L1{f'–{layers - 1}' if layers > 2 else ''}")
        self.layers = layers
        self._fit_legend()

    @staticmethod
    def _lower_pen():
        return pg.mkPen(style.MUTED.name(), width=2, style=Qt.DashLine)

    def set_points(self, steps: list[int], scores: np.ndarray) -> None:
        """scores: (n, layers, heads), one row per step."""
        for (layer, head), curve in self.curves.items():
            curve.setData(steps, scores[:, layer, head] if len(steps) else np.zeros(0))

    def resizeEvent(self, event) -> None:  # noqa: N802
        self._fit_legend()  # first: pyqtgraph then fits the plot within the legend's new least width
        super().resizeEvent(event)

    def _fit_legend(self) -> None:
        """As many entries a row as fit (a legend wider than the view would widen the plot past
        its cell)."""
        if getattr(self, "legend", None) is None or not self.curves:
            return
        metrics = QFontMetricsF(style.font(style.SMALL_POINT_SIZE))
        entries = [label.text for _, label in self.legend.items]
        # every column as wide as the widest entry: its line sample, the text and the spacing
        entry = max(metrics.horizontalAdvance(text) for text in entries) + 2.5 * metrics.height() + 8
        room = self.width() - self.getPlotItem().getAxis("left").width() - 16
        self.legend.setColumnCount(max(1, min(len(entries), int(room // entry))))

    def restyle(self) -> None:
        super().restyle()
        for (layer, head), curve in self.curves.items():
            curve.setPen(head_pen(layer, head))
        if getattr(self, "lower", None) is not None:
            self.lower.setPen(self._lower_pen())
        for _, label in self.legend.items:  # (pyqtgraph recolours a legend's text only when it is set again)
            label.setText(label.text, color=style.TEXT.name())


__all__ = ["LossPlot", "IclPlot", "HeadScorePlot", "StepPlot", "head_pen", "PHASE_LABEL"]
