"""The mask-leak lab: one GPT-like decoder trained twice, with and without the causal mask.

The classic bug (Section 3.2.3 left out): without the look-ahead mask, position t reads token
t+1 — the answer it is trained to give. Its training loss falls below what any honest model
can reach, its teacher-forced accuracy beats the best possible, and its attention sits above
the diagonal; asked to generate, where the next token does not exist yet, it does worse than
the run with the mask. Run trains both (model.interpret.leak_lab) on a worker thread
(`explorer.panels.leak.worker`); this panel draws what the worker sends.
"""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QEventLoop, Qt, QTimer
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from explorer import style, theme
from explorer.panels.leak.views import AccuracyBars, AttentionPair, LossCurves
from explorer.panels.leak.worker import LeakPhase, LeakResult, LeakRun, StepRows
from explorer.panels.stops_with_window import StopsWithWindow
from explorer.state import SessionState
from model.interpret.leak_lab import RUN_LABELS, RUNS, LeakConfig

INTRO = ("Trains one small GPT-like decoder twice on the facts corpus: same start, same batches, "
         "with and without the causal mask. Press Run.")
def lab_model_text(config: LeakConfig) -> tuple[str, str]:
    """(shown, tooltip): the lab's own model, named where the panel starts, since the input bar
    above names the session's model, not this one. Its shape on the panel, its width and corpus
    in the tooltip."""
    shape = f"Own model: {config.n_layers} layer{'s' if config.n_layers != 1 else ''} × {config.n_heads} heads"
    return shape, f"{shape}, d_model {config.d_model}, facts corpus"


WIDE_RATIO = 1.6  # wider than this × its height: the plots and maps in one row
STACK_HEIGHT = 720  # px: lower than this, two rows would leave the plots under 120 px
ROW_WIDTH = 900  # px: … if one row has the width (a narrow dock stays stacked)
START_TIMEOUT = 60.0  # s: `train_for` waits at most this long for the lab to be built


def verdict(result: LeakResult) -> str:
    """The finished lab in words, from its numbers."""
    m, leak = result.runs["masked"], result.runs["leaking"]
    below = leak.final_loss < result.loss_floor
    above = leak.teacher_forced > result.best_accuracy + result.ceiling_spread  # past the band, not only the line
    # "it reads the answer" only where both measures say so (a short run may show neither)
    verdict = ": it reads the answer" if below and above else ""
    return (f"No mask: loss {leak.final_loss:.2f}, {'below' if below else 'above'} the {result.loss_floor:.2f} that "
            f"no model reading only the past can reach (with mask {m.final_loss:.2f}); teacher-forced "
            f"{leak.teacher_forced:.0%}, {'past' if above else 'not past'} the ≈{result.best_accuracy:.0%} ceiling "
            f"of a model that reads only the past (its band reaches {result.best_accuracy + result.ceiling_spread:.0%})"
            f"{verdict}. Yet {leak.generated:.0%} of its generated sentences are right (with mask {m.generated:.0%}).")


def generation_lines(result: LeakResult) -> tuple[dict[str, str], str]:
    """(one line per run: the first held-out opening as it continued it; all examples, for a tooltip)."""
    lines = {}
    for run in RUNS:
        prompt, continuation = result.runs[run].generations[0]
        lines[run] = f"{RUN_LABELS[run]}: “{prompt}” → {continuation or '(nothing)'}"
    every = [f"{RUN_LABELS[run]}: {p} → {c or '(nothing)'}" for run in RUNS for p, c in result.runs[run].generations]
    return lines, "Greedy continuations of held-out openings:\n" + "\n".join(every)


def leakiest_head(result: LeakResult) -> tuple[int, int]:
    """(layer, head) of the leaking run that puts the most weight above the diagonal."""
    att = result.runs["leaking"].attention  # (L, h, T, T)
    future = np.triu(att, 1).sum(-1).mean(-1)  # (L, h)
    layer, head = np.unravel_index(int(future.argmax()), future.shape)
    return int(layer), int(head)


class LeakPanel(StopsWithWindow, QWidget):
    panel_name = "leak"
    title = "Mask leak"

    def __init__(self, state: SessionState, parent=None):
        super().__init__(parent)
        self.state = state
        self.run: LeakRun | None = None
        self.result: LeakResult | None = None
        self.phase = "idle"
        self.step = 0
        self.total_steps = 0
        self._build()
        theme.notifier().changed.connect(self._restyle)
        app = QApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)

    def _build(self) -> None:
        self.run_button = QPushButton("Run")
        self.run_button.setToolTip("Train both runs (off the GUI thread), then score them on held-out sentences")
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("End training now and score what was trained")
        self.steps_spin = QSpinBox()
        self.steps_spin.setRange(20, 5000)
        self.steps_spin.setSingleStep(100)
        self.steps_spin.setValue(LeakConfig.steps)
        self.steps_spin.setSuffix(" steps")
        self.steps_spin.setToolTip("Optimisation steps per run (batch 32, warm-up 100)")
        self.head_combo = QComboBox()
        self.head_combo.setToolTip("Which decoder self-attention the two maps show; 'ahead' is the weight on "
                                   "later positions (above the diagonal)")
        self.head_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.progress = QProgressBar()
        self.progress.setFormat("%p %")  # how far both runs are (the message names the step)
        self.progress.setMaximumWidth(160)
        self.message = QLabel(INTRO)
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # one line per run, so neither run's sentence is cut for the other's (all examples: tooltip)
        self.generations = {run: style.eliding_line() for run in RUNS}
        self.loss_plot = LossCurves()
        self.bars = AccuracyBars()
        self.maps = AttentionPair()
        for plot in (self.loss_plot, self.bars):
            plot.setMinimumSize(220, 170)

        controls = QHBoxLayout()
        controls.setSpacing(6)
        for widget in (self.run_button, self.stop_button, self.steps_spin, self.head_combo, self.progress):
            controls.addWidget(widget)
        self.lab_model = style.eliding_line(alignment=Qt.AlignmentFlag.AlignRight)
        self._name_lab_model(LeakConfig())
        self.lab_model.setObjectName("lab_model")
        style.set_sheet(self.lab_model, "color: {muted};")
        controls.addWidget(self.lab_model, 1)
        self.grid = grid = QGridLayout()
        grid.setSpacing(4)
        self.in_a_row: bool | None = None
        self._arrange(False)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 2, 4, 2)
        lay.setSpacing(3)
        lay.addLayout(controls)
        lay.addWidget(self.message)
        lay.addLayout(grid, 1)
        for label in self.generations.values():
            label.hide()  # until the runs are scored
            lay.addWidget(label)

        self.run_button.clicked.connect(lambda: self.start())
        self.stop_button.clicked.connect(lambda: self.stop())
        self.head_combo.currentIndexChanged.connect(lambda _: self._draw_maps())
        self._fill_head_combo(LeakConfig.n_layers, LeakConfig.n_heads)
        self._show_phase()

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

    def _arrange(self, in_a_row: bool) -> None:
        """Loss | accuracy | both maps in one row on a wide, low panel;
        otherwise the two plots above the two maps."""
        if self.in_a_row == in_a_row:
            return
        self.in_a_row = in_a_row
        grid = self.grid
        for widget in (self.loss_plot, self.bars, self.maps):
            grid.removeWidget(widget)
        if in_a_row:
            grid.addWidget(self.loss_plot, 0, 0)
            grid.addWidget(self.bars, 0, 1)
            grid.addWidget(self.maps, 0, 2)
            stretches, rows = (5, 6, 9), (1, 0)  # two maps: each needs ~60 px of token labels beside it
        else:
            grid.addWidget(self.loss_plot, 0, 0)
            grid.addWidget(self.bars, 0, 1)
            grid.addWidget(self.maps, 1, 0, 1, 2)
            stretches, rows = (1, 1, 0), (1, 1)
        for col, stretch in enumerate(stretches):
            grid.setColumnStretch(col, stretch)
        for row, stretch in enumerate(rows):
            grid.setRowStretch(row, stretch)

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        wide = self.width() > WIDE_RATIO * self.height()
        self._arrange(wide or (self.height() < STACK_HEIGHT and self.width() >= ROW_WIDTH))

    # -- controls ---------------------------------------------------------------------------
    def config(self, **overrides) -> LeakConfig:
        """The lab the controls describe (keyword arguments override fields: tests, figures)."""
        values = dict(steps=self.steps_spin.value())
        values.update(overrides)
        return LeakConfig(**values)

    def start(self, config: LeakConfig | None = None, threads: int | None = None) -> None:
        """Start both trainings on a worker thread (nothing if one runs already)."""
        if self.run is not None:
            return
        config = config or self.config()
        self.result, self.step, self.total_steps = None, 0, config.steps
        self.loss_plot.clear_runs()
        self.bars.set_result(None)
        self.maps.set_result(None, 0, None)
        for label in self.generations.values():
            label.hide()  # until the runs are scored
        self.progress.reset()  # (no "37 %" of a run before)
        self.run = run = LeakRun(config, threads)
        run.worker.yielded.connect(self._on_message)
        run.worker.errored.connect(self._on_error)
        run.worker.finished.connect(self._on_finished)
        self.phase = "starting"
        self._show_phase()
        run.start()

    def start_for_scene(self) -> None:
        """A tour scene's start: the lab once; coming back shows the run going on, or its result."""
        if self.run is None and self.result is None:
            self.start()

    def stop(self) -> None:
        """End training after the current step; the runs are still scored."""
        if self.run is not None:
            self.run.stop(evaluate=True)

    def shutdown(self) -> None:
        """Stop for good (window closing, app quitting): no scoring, and wait for the thread."""
        run, self.run = self.run, None
        if run is None:
            return
        run.stop(evaluate=False)
        run.join()
        self.phase = "idle"
        self._show_phase()

    def train_for(self, seconds: float) -> int:
        """Headless figures (`--train-seconds`): run the lab for its steps or `seconds` of
        training, whichever ends first, score it, and return the steps each run trained. The
        event loop runs meanwhile (the worker's messages arrive as they would on screen)."""
        self.start(self.config(seconds=seconds))
        loop = QEventLoop()
        run = self.run
        run.worker.finished.connect(loop.quit)
        QTimer.singleShot(int((START_TIMEOUT + seconds + 60) * 1000), loop.quit)
        if not run.is_done():
            loop.exec()
        if self.run is run and not run.is_done():  # ran out of time: stop it and take what it has
            run.stop(evaluate=False)
            run.join()
        for _ in range(5):  # queued messages, then `finished`
            QApplication.processEvents()
        return self.step

    # -- worker messages (GUI thread; those of a run no longer current are dropped) ----------
    def _mine(self) -> bool:
        return self.run is not None and self.sender() is self.run.worker.signals

    def _on_message(self, message) -> None:
        if not self._mine():
            return
        if isinstance(message, StepRows):
            for run, (steps, losses) in message.columns.items():
                if len(steps):
                    self.loss_plot.extend(run, steps, losses)
            self.step = max(self.step, message.last_step)
            self.progress.setValue(int(1000 * self.step / max(self.total_steps, 1)))
            last = {run: self.loss_plot.losses[run][-1] for run in RUNS if len(self.loss_plot.losses[run])}
            losses = " · ".join(f"{RUN_LABELS[r]} {v:.2f}" for r, v in last.items())
            self.message.setText(f"Step {self.step} of {self.total_steps}. Loss on the last batch: {losses}")
        elif isinstance(message, LeakPhase):
            self.phase = message.text
            self._show_phase()
        elif isinstance(message, LeakResult):
            self.show_result(message)

    def _on_error(self, exc: BaseException) -> None:
        if self._mine():
            self.phase = "failed"
            self.maps.clear()  # nothing is coming: no "drawn when training ends"
            self.message.setText(f"The lab failed: {type(exc).__name__}: {exc}")
            style.set_sheet(self.message, "color: {error};")

    def _on_finished(self) -> None:
        if self._mine():
            self.run = None
            if self.phase != "failed":
                self.phase = "idle"
            self._show_phase()

    # -- drawing ----------------------------------------------------------------------------
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

    def _name_lab_model(self, config: LeakConfig) -> None:
        shown, whole = lab_model_text(config)
        self.lab_model.setText(shown)
        self.lab_model.setToolTip(whole)

    def _draw_maps(self) -> None:
        layer, head = tuple(self.head_combo.currentData() or (0, None))
        self.maps.set_result(self.result, layer, head)

    def _show_phase(self) -> None:
        running = self.run is not None
        self.run_button.setEnabled(not running)
        self.stop_button.setEnabled(running and self.phase in ("starting", "building", "training"))
        self.steps_spin.setEnabled(not running)
        self.progress.setVisible(running)
        if self.phase == "building":
            self.message.setText("Building the two models …")
        elif self.phase == "evaluating":
            self.progress.setRange(0, 0)  # busy: scoring takes a few seconds
            self.message.setText("Scoring both runs on held-out sentences …")
        else:
            self.progress.setRange(0, 1000)

    def _restyle(self, *_) -> None:
        self.loss_plot.restyle()
        self.bars.restyle()
        if self.result is not None:
            self.show_result(self.result)
        elif self.run is not None and self.phase != "failed":
            self.maps.set_result(None, 0, None)  # the empty maps' note in the new theme's colour

    # -- lifetime ---------------------------------------------------------------------------
