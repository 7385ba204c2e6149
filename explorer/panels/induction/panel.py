"""Induction heads (Olsson et al. 2022): a two-layer attention-only model trains on random tokens with
a segment repeated; the panel plots the phase change and shows the induction head that forms."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt, QTimer

from explorer.drawing.token_heatmap import TokenHeatmap
from explorer.panels.induction.plots import ICL, LOSS, HeadScorePlot, PhasePlot
from explorer.panels.live_lab.lab_panel import LabPanel, lab_knobs
from explorer.panels.live_lab.plot_look import mark, theme_pen
from model.train import induction
from model.train.induction import InductionConfig, InductionLab, InductionMeasure, InductionStep

MAP_EVERY = 100  # steps between redraws of the attention map (a map costs the GUI thread more than a curve)
MAP_PENDING = "drawn as\ntraining runs"
MAP_TITLE = "Best head"


class InductionPanel(LabPanel):
    panel_name = "induction"
    title = "Induction heads"
    intro = ("Trains a 2-layer attention-only model on random tokens with one segment repeated. "
             "Press Start and watch for the phase change: an induction head forms and the repeat becomes predictable.")
    knobs = lab_knobs("Start", "Train a fresh model (off the GUI thread) and measure it as it learns",
                      "End training after the current step",
                      f"Optimisation steps (batch {InductionConfig.batch_size}); measured every "
                      f"{InductionConfig.eval_every}", (100, 20000, 500, InductionConfig.steps))
    stage_texts = {"building": "Building the model …"}
    config_class, lab_class, step_type = InductionConfig, InductionLab, InductionStep

    def build_views(self) -> list:
        self.loss_plot, self.icl_plot = PhasePlot(*LOSS, curve=("loss", 2)), PhasePlot(*ICL, curve=("accent", 3))
        self.head_plot = HeadScorePlot()
        self.uniform = self.loss_plot.line(0, theme_pen("muted", 1.5, Qt.DotLine))  # the loss of a uniform guess
        mark(self.icl_plot.line(0, theme_pen("muted", 1)), 0.0)
        self.curves = {"": self.loss_plot.curve}
        self.map = TokenHeatmap(MAP_TITLE)
        self.map.set_axis_names("query", "key")
        self.map.setToolTip("The best induction head's attention over one sequence's two copies (the line: "
                            "where the repeat starts). An induction head reads the stripe one step right of the "
                            "repeat's diagonal: the token after the current token's first occurrence.")
        self.measures, self.mapped, self.phase = [], None, None
        self.map.clear_data(MAP_PENDING)
        # the rest (the heads' curves and legend) a turn later, unless a run has begun: a light first build
        QTimer.singleShot(0, self, lambda: self.run is None and self.clear_views(InductionConfig()))
        return [self.loss_plot, self.icl_plot, self.head_plot, self.map]

    def clear_views(self, config: InductionConfig) -> None:
        self.measures: list[InductionMeasure] = []
        self.mapped: InductionMeasure | None = None  # the measurement the map shows
        self.loss_plot.curve.setData([], [])
        uniform = float(np.log(config.vocab - 1))
        mark(self.uniform, uniform, f"ln({config.vocab - 1}) = {uniform:.2f}: the loss of a uniform guess")
        self.head_plot.set_heads(config.n_layers, config.n_heads)
        self._draw_curves(np.zeros((0, config.n_layers, config.n_heads)))
        self.map.clear_data(MAP_PENDING)
        self.map.set_title(MAP_TITLE)

    # -- what the worker sends ------------------------------------------------------------------
    def show_message(self, message) -> None:
        if isinstance(message, InductionMeasure):
            self.show_measure(message)

    def show_measure(self, measure: InductionMeasure) -> None:
        """Add one measurement: the ICL and head curves, the phase change, now and then the map."""
        self.measures.append(measure)
        self.head_plot.set_heads(*measure.scores.shape)
        self._draw_curves(np.stack([m.scores for m in self.measures]))
        if self.mapped is None or measure.step - self.mapped.step >= MAP_EVERY:
            self.draw_map(measure)
        self.message.setText(induction.phase_text(self.phase, measure))

    def _draw_curves(self, scores: np.ndarray) -> None:
        """The ICL and head curves of the measurements so far, and the phase change if there is one."""
        steps = [m.step for m in self.measures]
        icl = [m.icl for m in self.measures]
        self.icl_plot.curve.setData(steps, icl)  # in a range of at least -1 … 0.2 nats (early noise is no swing)
        self.icl_plot.axes.vb.setYRange(min([-1.0, *icl]), max([0.2, *icl]), padding=0.05)
        self.head_plot.set_points(steps, scores)
        self.phase = induction.phase_measure(self.measures)  # the measurement at the phase change
        for plot in (self.loss_plot, self.icl_plot, self.head_plot):
            plot.show_phase(self.phase.step if self.phase is not None else None)

    def draw_map(self, measure: InductionMeasure) -> None:
        """The best head's attention over the example's two copies (queries × keys)."""
        self.mapped = measure
        layer, head, matrix, letters = measure.best_map()
        blocked = np.triu(np.ones_like(matrix, dtype=bool), 1)
        self.map.set_data(matrix, letters, letters, blocked=blocked, separator=measure.example_length)
        self.map.set_title(f"L{layer + 1}H{head + 1} · {measure.scores[layer, head]:.0%}")
        self.map.set_axis_names("query", "key")  # at the text size in use (hidden axes are not rescaled)

    def finished(self) -> None:
        if self.measures and self.mapped is not self.measures[-1]:
            self.draw_map(self.measures[-1])  # the map of the end, whatever MAP_EVERY says
