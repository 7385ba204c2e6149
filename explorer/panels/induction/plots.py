"""The induction lab's plots over steps, each marking the phase change: loss and in-context-learning
score (`PhasePlot` with `LOSS`, `ICL`) and every head's induction score (colour: the head; lower
layers dashed)."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetricsF

from explorer import style
from explorer.panels.live_lab.plot_look import LabPlot, mark, theme_pen

PHASE_LABEL = "phase\nchange"  # two short lines: beside the line on a narrow plot


class PhasePlot(LabPlot):
    """A plot over steps with the phase-change line (hidden until there is one) and, given its pen
    (a theme role and a width), one curve."""

    def __init__(self, title: str, y_label: str, tooltip: str, label_phase: bool = False,
                 curve: tuple[str, float] | None = None, parent=None):
        super().__init__(title, y_label, tooltip, parent=parent)
        # the label near the top, on the side of the line towards the middle of the view
        self.phase = self.line(90, theme_pen("warning", 2, Qt.DashLine), PHASE_LABEL if label_phase else None,
                               "warning", position=0.97, anchors=[(0, 0), (1, 0)])
        self.curve = self.keep(self.plot([], [], antialias=False), theme_pen(*curve)) if curve else None

    def show_phase(self, step: int | None) -> None:
        mark(self.phase, step, f"The phase change, at step {step}: the ICL score has come half its way from "
                               "where it started to where it is now, and stays past that point")


LOSS = ("Loss", "nats / token", "Next-token cross-entropy of each training batch. Before the phase change nothing "
        "can be predicted (the dashed line: a uniform guess); after it the second copy can.")
ICL = ("ICL score", "nats", "Loss on the second copy minus loss on the first copy (nats), on a fixed batch. 0: the "
       "repeat is no easier; strongly negative: the model copies from context (Olsson et al.'s ICL score: "
       "late-token minus early-token loss).")


class HeadScorePlot(PhasePlot):
    """Each head's induction score over steps; the legend names the heads by colour (the last
    layer's, solid) and says that the layers below are dashed."""

    def __init__(self, parent=None):
        super().__init__("Induction", "score",
                         "Each head's mean attention from a token in the second copy to the token after its "
                         "first occurrence (the key an induction head reads). Colour: the head; the last layer solid, the "
                         "layers below dashed.",
                         label_phase=True, parent=parent)
        self.axes.vb.setYRange(0, 1, padding=0.02)
        self.axes.vb.enableAutoRange(y=False)
        self.legend_below(5, horSpacing=8, verSpacing=-6)
        self.curves: dict[tuple[int, int], pg.PlotDataItem] = {}

    def set_heads(self, layers: int, heads: int) -> None:
        """One curve per head (made again only when the shape changes; `set_points` empties them)."""
        if sorted(self.curves) == [(layer, head) for layer in range(layers) for head in range(heads)]:
            return
        for curve in self.curves.values():
            self.axes.removeItem(curve)
        self.legend.clear()
        self.legend.setLabelTextSize(f"{style.SMALL_POINT_SIZE * style.scale():.0f}pt")  # the size in use now
        self.themed = {item: paint for item, paint in self.themed.items() if not isinstance(item, pg.PlotDataItem)}
        self.curves = {}
        for layer in range(layers):
            for head in range(heads):
                last = layer == layers - 1  # solid; the layers below dashed
                pen = theme_pen(head, 3 if last else 2, Qt.SolidLine if last else Qt.DashLine)
                self.curves[(layer, head)] = curve = self.keep(self.plot([], [], antialias=False), pen)
                if last:
                    self.legend.addItem(curve, f"H{head + 1}")
        if layers > 1:  # a sample line for the legend only, never drawn in the plot
            lower = self.keep(pg.PlotDataItem([], []), theme_pen("muted", 2, Qt.DashLine))
            self.legend.addItem(lower, f"L1{f'–{layers - 1}' if layers > 2 else ''}")
        self._fit_legend()

    def set_points(self, steps: list[int], scores: np.ndarray) -> None:
        """scores: (n, layers, heads), one row per step."""
        for (layer, head), curve in self.curves.items():
            curve.setData(steps, scores[:, layer, head])

    def resizeEvent(self, event) -> None:  # noqa: N802
        self._fit_legend()  # first: pyqtgraph then fits the plot within the legend's new least width
        super().resizeEvent(event)

    def _fit_legend(self) -> None:
        """As many entries a row as fit (a legend wider than the view would widen the plot)."""
        if getattr(self, "legend", None) is None or not self.curves:
            return
        metrics = QFontMetricsF(style.font(style.SMALL_POINT_SIZE))
        entries = [label.text for _, label in self.legend.items]
        # every column as wide as the widest entry: its line sample, the text and the spacing
        entry = max(metrics.horizontalAdvance(text) for text in entries) + 2.5 * metrics.height() + 8
        room = self.width() - self.axes.getAxis("left").width() - 16
        self.legend.setColumnCount(max(1, min(len(entries), int(room // entry))))


__all__ = ["HeadScorePlot", "PhasePlot", "LOSS", "ICL", "PHASE_LABEL"]
