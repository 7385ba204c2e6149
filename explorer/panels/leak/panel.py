"""The mask-leak lab (model.interpret.leak_lab): one small decoder trained with and without the causal
mask; without it (Section 3.2.3) position t reads the answer, and the pictures show the cheat."""
from __future__ import annotations

from explorer import style
from explorer.panels.knobs import Knob, refill
from explorer.panels.leak.views import AccuracyBars, AttentionPair, LossCurves
from explorer.panels.live_lab.lab_panel import LabPanel, lab_knobs
from explorer.panels.live_lab.plot_look import mark
from model.interpret import leak_lab
from model.interpret.leak_lab import LeakConfig, LeakLab, LeakPhase, LeakResult, LeakStep
from model.train.lab_stream import StepRows


class LeakPanel(LabPanel):
    panel_name = "leak"
    title = "Mask leak"
    intro = ("Trains one small GPT-like decoder twice on the facts corpus: same start, same batches, "
             "with and without the causal mask. Press Run.")
    knobs = (*lab_knobs("Run", "Train both runs (off the GUI thread), then score them on held-out sentences",
                        "End training now and score what was trained",
                        "Optimisation steps per run (batch 32, warm-up 100)", (20, 5000, 100, LeakConfig.steps)),
             Knob("head_combo", "choice", tip="Which decoder self-attention the two maps show; 'ahead' is the "
                  "weight on later positions (above the diagonal)", on="draw_maps"))
    stage_texts = {"building": "Building the two models …", "evaluating": "Scoring both runs on held-out sentences …"}
    wide_ratio = 1.6
    view_minimum = (220, 170)
    row_stretches = (5, 6, 9)  # two maps: each needs ~60 px of token labels beside it
    stop_args, shutdown_args = (True,), (False,)  # Stop still scores the runs; closing does not
    config_class, lab_class, step_type = LeakConfig, LeakLab, LeakStep

    def __init__(self, state, parent=None):
        self.result: LeakResult | None = None
        super().__init__(state, parent)
        # one line per run, so neither run's sentence is cut for the other's (all examples: tooltip)
        self.generations = {run: style.eliding_line() for run in leak_lab.RUNS}
        for label in self.generations.values():
            label.hide()  # until the runs are scored
            self.column.addWidget(label)
        self._fill_head_combo(LeakConfig.n_layers, LeakConfig.n_heads)

    def build_views(self) -> list:
        self.loss_plot, self.bars, self.maps = LossCurves(), AccuracyBars(), AttentionPair()
        self.curves = self.loss_plot.curves
        return [self.loss_plot, self.bars, self.maps]

    def _fill_head_combo(self, layers: int, heads: int, leakiest=None) -> None:
        """Layer × (mean, head …) choices; `leakiest` (layer, head) named and chosen: the clearest picture."""
        choices = leak_lab.head_choices(layers, heads, leakiest)
        refill(self.head_combo, choices, [choice for _, choice in choices].index(leakiest) if leakiest else 0)

    def clear_views(self, config: LeakConfig) -> None:
        self.result = None
        self.loss_plot.clear_runs()
        self.bars.set_result(None)
        self.draw_maps()  # empty, saying when they come
        for label in self.generations.values():
            label.hide()  # until the runs are scored

    # -- what the worker sends ------------------------------------------------------------------
    def show_message(self, message) -> None:
        if isinstance(message, StepRows):
            self.message.setText(leak_lab.step_text(self.step, self.total_steps, self.loss_plot.last_losses()))
        elif isinstance(message, LeakPhase):
            self.show_stage(message.text)
        elif isinstance(message, LeakResult):
            self.show_result(message)

    def show_result(self, result: LeakResult) -> None:
        """Draw a finished lab (the worker's, or one computed elsewhere)."""
        self._name_lab_model(result.config)
        self._fill_head_combo(result.config.n_layers, result.config.n_heads, leak_lab.leakiest_head(result))
        self.result = result
        mark(self.loss_plot.floor, result.loss_floor, leak_lab.floor_tip(result.loss_floor))
        self.bars.set_result(result)
        self.draw_maps()
        self.message.setText(leak_lab.verdict(result))
        style.set_sheet(self.message, "")
        lines, every = leak_lab.generation_lines(result)
        for run, label in self.generations.items():
            label.setText(lines[run])
            label.setToolTip(every)
            label.show()

    def finished(self) -> None:
        if self.stage == "failed":
            self.maps.clear()  # nothing is coming: no "drawn when training ends"

    def draw_maps(self) -> None:
        layer, head = tuple(self.head_combo.currentData() or (0, None))
        self.maps.set_result(self.result, layer, head)
