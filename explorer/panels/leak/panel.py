"""The mask-leak lab: one GPT-like decoder trained twice, with and without the causal mask.

The classic bug (Section 3.2.3 left out): without the look-ahead mask, position t reads token
t+1 — the answer it is trained to give. Its training loss falls below what any honest model
can reach, its teacher-forced accuracy beats the best possible, and its attention sits above
the diagonal; asked to generate, where the next token does not exist yet, it does worse than
the run with the mask. Run trains both (model.interpret.leak_lab) on a worker thread
(`explorer.panels.live_lab`); this panel draws what the worker sends.
"""
from __future__ import annotations

from PySide6.QtWidgets import QComboBox

from explorer import style
from explorer.panels.leak.views import AccuracyBars, AttentionPair, LossCurves
from explorer.panels.live_lab.lab_panel import LabPanel
from explorer.panels.live_lab.run import StepRows
from model.interpret.leak_lab import (
    RUN_LABELS,
    RUNS,
    LeakConfig,
    LeakLab,
    LeakPhase,
    LeakResult,
    LeakStep,
    generation_lines,
    leakiest_head,
    verdict,
)


class LeakPanel(LabPanel):
    panel_name = "leak"
    title = "Mask leak"
    intro = ("Trains one small GPT-like decoder twice on the facts corpus: same start, same batches, "
             "with and without the causal mask. Press Run.")
    start_text = "Run"
    start_tip = "Train both runs (off the GUI thread), then score them on held-out sentences"
    stop_tip = "End training now and score what was trained"
    steps_tip = "Optimisation steps per run (batch 32, warm-up 100)"
    steps_range = (20, 5000, 100)
    stage_texts = {"building": "Building the two models …", "evaluating": "Scoring both runs on held-out sentences …"}
    wide_ratio = 1.6
    row_stretches = (5, 6, 9)  # two maps: each needs ~60 px of token labels beside it
    stop_args, shutdown_args = (True,), (False,)  # Stop still scores the runs; closing does not
    config_class, lab_class, step_type = LeakConfig, LeakLab, LeakStep

    def __init__(self, state, parent=None):
        self.result: LeakResult | None = None
        super().__init__(state, parent)
        # one line per run, so neither run's sentence is cut for the other's (all examples: tooltip)
        self.generations = {run: style.eliding_line() for run in RUNS}
        for label in self.generations.values():
            label.hide()  # until the runs are scored
            self.column.addWidget(label)
        self.head_combo.currentIndexChanged.connect(lambda _: self._draw_maps())
        self._fill_head_combo(LeakConfig.n_layers, LeakConfig.n_heads)

    def lab_model_text(self, config: LeakConfig) -> tuple[str, str]:
        shape = f"Own model: {config.n_layers} layer{'s' if config.n_layers != 1 else ''} × {config.n_heads} heads"
        return shape, f"{shape}, d_model {config.d_model}, facts corpus"

    def extra_controls(self) -> list:
        self.head_combo = QComboBox()
        self.head_combo.setToolTip("Which decoder self-attention the two maps show; 'ahead' is the weight on "
                                   "later positions (above the diagonal)")
        self.head_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        return [self.head_combo]

    def build_views(self) -> list:
        self.loss_plot, self.bars, self.maps = LossCurves(), AccuracyBars(), AttentionPair()
        for plot in (self.loss_plot, self.bars):
            plot.setMinimumSize(220, 170)
        return [self.loss_plot, self.bars, self.maps]

    def _fill_head_combo(self, layers: int, heads: int, leakiest: tuple[int, int] | None = None) -> None:
        """Layer × (mean, head …) choices; `leakiest` is named and chosen (the clearest picture)."""
        self.head_combo.blockSignals(True)
        self.head_combo.clear()
        for layer in range(layers):
            self.head_combo.addItem(f"layer {layer + 1} · mean of heads", (layer, None))
            for head in range(heads):
                note = " (most ahead)" if (layer, head) == leakiest else ""
                self.head_combo.addItem(f"layer {layer + 1} · head {head + 1}{note}", (layer, head))
        self.head_combo.blockSignals(False)

    def _choose(self, layer_head) -> None:
        """Select the (layer, head) entry (head None: the mean); nothing else is drawn."""
        data = [tuple(self.head_combo.itemData(i)) for i in range(self.head_combo.count())]
        self.head_combo.blockSignals(True)
        self.head_combo.setCurrentIndex(data.index(tuple(layer_head)) if tuple(layer_head) in data else 0)
        self.head_combo.blockSignals(False)

    def timed_config(self, seconds: float) -> LeakConfig:
        return self.config(seconds=seconds)  # the lab times its own training, then scores it

    def clear_views(self, config: LeakConfig) -> None:
        self.result = None
        self.loss_plot.clear_runs()
        self.bars.set_result(None)
        self.maps.set_result(None, 0, None)
        for label in self.generations.values():
            label.hide()  # until the runs are scored

    # -- what the worker sends ------------------------------------------------------------------
    def show_rows(self, rows: StepRows) -> None:
        for run, (steps, losses) in rows.columns.items():
            if len(steps):
                self.loss_plot.extend(run, steps, losses)
        last = {run: self.loss_plot.losses[run][-1] for run in RUNS if len(self.loss_plot.losses[run])}
        losses = " · ".join(f"{RUN_LABELS[r]} {v:.2f}" for r, v in last.items())
        self.message.setText(f"Step {self.step} of {self.total_steps}. Loss on the last batch: {losses}")

    def show_event(self, event) -> None:
        if isinstance(event, LeakPhase):
            self.show_stage(event.text)
        elif isinstance(event, LeakResult):
            self.show_result(event)

    def show_result(self, result: LeakResult) -> None:
        """Draw a finished lab (the worker's, or one computed elsewhere)."""
        cfg = result.config
        self._name_lab_model(cfg)
        chosen = self.head_combo.currentData() if self.result is result else leakiest_head(result)
        self._fill_head_combo(cfg.n_layers, cfg.n_heads, leakiest_head(result))
        self._choose(chosen)
        self.result = result
        self.loss_plot.show_floor(result.loss_floor)
        self.bars.set_result(result)
        self._draw_maps()
        self.message.setText(verdict(result))
        style.set_sheet(self.message, "")
        lines, every = generation_lines(result)
        for run, label in self.generations.items():
            label.setText(lines[run])
            label.setToolTip(every)
            label.show()

    def finished(self) -> None:
        if self.stage == "failed":
            self.maps.clear()  # nothing is coming: no "drawn when training ends"

    def _draw_maps(self) -> None:
        layer, head = tuple(self.head_combo.currentData() or (0, None))
        self.maps.set_result(self.result, layer, head)

    def restyle(self) -> None:
        self.loss_plot.restyle()
        self.bars.restyle()
        if self.result is not None:
            self.show_result(self.result)
        elif self.run is not None and self.stage != "failed":
            self.maps.set_result(None, 0, None)  # the empty maps' note in the new theme's colour
