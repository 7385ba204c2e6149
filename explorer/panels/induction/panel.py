"""Induction heads: a time-lapse of the phase change of Olsson et al. (2022).

A two-layer attention-only decoder of its own (model.train.induction) trains on random tokens
with one segment repeated. For a while it can predict nothing; then, within a few hundred
steps, a head in layer 2 learns to look back at the token after the current token's earlier
occurrence — an induction head — and the loss on the repeat collapses. The panel plots the
training loss, the in-context-learning score and every head's induction score as they come,
marks the detected phase change, and shows the best induction head's attention over one
repeated sequence (refreshed every MAP_EVERY steps): the stripe one token right of the
diagonal of the two copies appears when the head forms. Training runs on a worker thread
(`explorer.panels.induction.worker`); this panel only draws what the worker sends.
"""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QEventLoop, Qt, QTimer
from PySide6.QtWidgets import (
    QApplication,
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
from explorer.drawing.token_heatmap import TokenHeatmap
from explorer.panels.induction.plots import HeadScorePlot, IclPlot, LossPlot
from explorer.panels.induction.worker import InductionMeasure, InductionRun, LossRows
from explorer.panels.stops_with_window import StopsWithWindow
from explorer.state import SessionState
from model.train.induction import InductionConfig, phase_measure

INTRO = ("Trains a 2-layer attention-only model on random tokens with one segment repeated. "
         "Press Start and watch for the phase change: an induction head forms and the repeat becomes predictable.")
MAP_EVERY = 100  # steps between redraws of the attention map (a map costs the GUI thread more than a curve)
MAP_PENDING = "drawn as\ntraining runs"
MAP_TITLE = "Best head"
WIDE_RATIO = 1.8  # wider than this × its height: the three plots and the map in one row
STACK_HEIGHT = 720  # px: lower than this, two rows would leave a plot too short to read …
ROW_WIDTH = 900  # px: … if one row has the width (a narrow dock stays two by two)
START_TIMEOUT = 60.0  # s: `train_for` waits at most this long for the lab to be built


def lab_model_text(config: InductionConfig) -> tuple[str, str]:
    """(shown, tooltip): the lab's own model, since the input bar above names the session's."""
    shape = f"Own model: {config.n_layers} layers × {config.n_heads} heads, attention only"
    return shape, (f"{shape}, d_model {config.d_model}, vocabulary {config.vocab - 1} tokens, "
                   f"sequences of {config.seq_len} with a {config.min_len}–{config.max_len}-token segment repeated")


def phase_text(measure: InductionMeasure | None, last: InductionMeasure | None) -> str:
    """The run in one sentence, from its numbers."""
    if last is None:
        return ""
    layer, head = last.best_head()
    now = (f"Step {last.step}: loss {last.loss:.2f}, ICL score {last.icl:+.2f} nats, best induction head "
           f"L{layer + 1}H{head + 1} at {last.scores.max():.0%}.")
    if measure is None:
        return now + " No phase change yet."
    return now + f" Phase change at step {measure.step} ({measure.elapsed:.0f} s of training)."


class InductionPanel(StopsWithWindow, QWidget):
    panel_name = "induction"
    title = "Induction heads"

    def __init__(self, state: SessionState, parent=None):
        super().__init__(parent)
        self.state = state
        self.run: InductionRun | None = None
        self.measures: list[InductionMeasure] = []
        self.phase: InductionMeasure | None = None
        self.step = 0
        self.total_steps = 0
        self.map_step = -MAP_EVERY  # the step the map last showed
        self.failed = False
        self._build()
        theme.notifier().changed.connect(self._restyle)
        app = QApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)

    def _build(self) -> None:
        self.start_button = QPushButton("Start")
        self.start_button.setToolTip("Train a fresh model (off the GUI thread) and measure it as it learns")
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("End training after the current step")
        self.steps_spin = QSpinBox()
        self.steps_spin.setRange(100, 20000)
        self.steps_spin.setSingleStep(500)
        self.steps_spin.setValue(InductionConfig.steps)
        self.steps_spin.setSuffix(" steps")
        self.steps_spin.setToolTip(f"Optimisation steps (batch {InductionConfig.batch_size}); "
                                   f"measured every {InductionConfig.eval_every}")
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setFormat("%p %")
        self.progress.setMaximumWidth(160)
        self.lab_model = style.eliding_line(alignment=Qt.AlignmentFlag.AlignRight)
        self.lab_model.setObjectName("lab_model")
        style.set_sheet(self.lab_model, "color: {muted};")
        shown, whole = lab_model_text(InductionConfig())
        self.lab_model.setText(shown)
        self.lab_model.setToolTip(whole)
        self.message = QLabel(INTRO)
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.loss_plot = LossPlot()
        self.icl_plot = IclPlot()
        self.head_plot = HeadScorePlot()
        self.head_plot.set_heads(InductionConfig.n_layers, InductionConfig.n_heads)
        self.map = TokenHeatmap(MAP_TITLE)
        self.map.set_axis_names("query", "key")
        self.map.clear_data(MAP_PENDING)
        self.map.setToolTip("The best induction head's attention over one sequence's two copies (the line: "
                            "where the repeat starts). An induction head reads the stripe one step right of the "
                            "repeat's diagonal: the token after the current token's first occurrence.")
        for plot in (self.loss_plot, self.icl_plot, self.head_plot):
            plot.setMinimumSize(200, 160)
        self.map.setMinimumSize(200, 160)

        controls = QHBoxLayout()
        controls.setSpacing(6)
        for widget in (self.start_button, self.stop_button, self.steps_spin, self.progress):
            controls.addWidget(widget)
        controls.addWidget(self.lab_model, 1)
        self.grid = QGridLayout()
        self.grid.setSpacing(4)
        self.in_a_row: bool | None = None
        self._arrange(False)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 2, 4, 2)
        lay.setSpacing(3)
        lay.addLayout(controls)
        lay.addWidget(self.message)
        lay.addLayout(self.grid, 1)
        self.start_button.clicked.connect(lambda: self.start())
        self.stop_button.clicked.connect(lambda: self.stop())
        self._show_state()

    def _arrange(self, in_a_row: bool) -> None:
        """Loss | ICL | heads | map in one row on a wide, low panel; else two by two."""
        if self.in_a_row == in_a_row:
            return
        self.in_a_row = in_a_row
        widgets = (self.loss_plot, self.icl_plot, self.head_plot, self.map)
        for widget in widgets:
            self.grid.removeWidget(widget)
        for i, widget in enumerate(widgets):
            self.grid.addWidget(widget, 0 if in_a_row else i // 2, i if in_a_row else i % 2)
        for col in range(4):
            self.grid.setColumnStretch(col, 1 if in_a_row or col < 2 else 0)
        for row in range(2):
            self.grid.setRowStretch(row, 1 if row == 0 or not in_a_row else 0)

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        wide = self.width() > WIDE_RATIO * self.height()
        self._arrange(wide or (self.height() < STACK_HEIGHT and self.width() >= ROW_WIDTH))

    # -- controls ---------------------------------------------------------------------------
    def config(self, **overrides) -> InductionConfig:
        """The lab the controls describe (keyword arguments override fields: tests, figures)."""
        values = dict(steps=self.steps_spin.value())
        values.update(overrides)
        return InductionConfig(**values)

    def start(self, config: InductionConfig | None = None, threads: int | None = None) -> None:
        """Train a fresh model on a worker thread (nothing if one runs already)."""
        if self.run is not None:
            return
        config = config or self.config()
        self.measures, self.phase, self.step, self.total_steps = [], None, 0, config.steps
        self.map_step, self.failed = -MAP_EVERY, False
        self.loss_plot.clear_run(config.vocab)
        self.icl_plot.set_points([], [])
        self.icl_plot.show_phase(None)
        self.head_plot.set_heads(config.n_layers, config.n_heads)
        self.head_plot.set_points([], np.zeros((0, config.n_layers, config.n_heads)))
        self.head_plot.show_phase(None)
        self.map.clear_data(MAP_PENDING)
        self.map.set_title(MAP_TITLE)
        shown, whole = lab_model_text(config)
        self.lab_model.setText(shown)
        self.lab_model.setToolTip(whole)
        self.progress.setValue(0)
        style.set_sheet(self.message, "")
        self.message.setText("Building the model …")
        self.run = run = InductionRun(config, threads)
        run.worker.yielded.connect(self._on_message)
        run.worker.errored.connect(self._on_error)
        run.worker.finished.connect(self._on_finished)
        self._show_state()
        run.start()

    def start_for_scene(self) -> None:
        """A tour scene's start: the lab once; coming back shows the run going on, or its end."""
        if self.run is None and not self.measures:
            self.start()

    def stop(self) -> None:
        """End training after the current step (its last measurement is still drawn)."""
        if self.run is not None:
            self.run.stop()

    def shutdown(self) -> None:
        """Stop for good (window closing, app quitting) and wait for the thread."""
        run, self.run = self.run, None
        if run is None:
            return
        run.stop()
        run.join()
        self._show_state()

    def train_for(self, seconds: float) -> int:
        """Headless figures (`--train-seconds`): train for `seconds` (or all steps), then stop,
        and return the steps trained. The event loop runs meanwhile."""
        self.start()
        run = self.run
        loop = QEventLoop()
        run.worker.finished.connect(loop.quit)
        QTimer.singleShot(int(seconds * 1000), run.stop)
        QTimer.singleShot(int((START_TIMEOUT + seconds) * 1000), loop.quit)
        if not run.is_done():
            loop.exec()
        if self.run is run and not run.is_done():
            self.shutdown()
        for _ in range(5):  # queued messages, then `finished`
            QApplication.processEvents()
        return self.step

    # -- worker messages (GUI thread; those of a run no longer current are dropped) ----------
    def _mine(self) -> bool:
        return self.run is not None and self.sender() is self.run.worker.signals

    def _on_message(self, message) -> None:
        if not self._mine():
            return
        if isinstance(message, LossRows):
            self.loss_plot.extend(message.steps, message.losses)
            self.step = max(self.step, int(message.steps[-1]))
            self.progress.setValue(int(1000 * self.step / max(self.total_steps, 1)))
        elif isinstance(message, InductionMeasure):
            self.show_measure(message)

    def show_measure(self, measure: InductionMeasure) -> None:
        """Add one measurement: the ICL and head curves, the phase change, now and then the map."""
        self.measures.append(measure)
        steps = [m.step for m in self.measures]
        self.icl_plot.set_points(steps, [m.icl for m in self.measures])
        self.head_plot.set_heads(*measure.scores.shape)
        self.head_plot.set_points(steps, np.stack([m.scores for m in self.measures]))
        self.phase = phase_measure(self.measures)
        step = self.phase.step if self.phase is not None else None
        for plot in (self.loss_plot, self.icl_plot, self.head_plot):
            plot.show_phase(step)
        if measure.step - self.map_step >= MAP_EVERY or (self.run is not None and self.run.is_done()):
            self.draw_map(measure)
        self.message.setText(phase_text(self.phase, measure))

    def draw_map(self, measure: InductionMeasure) -> None:
        """The best head's attention over the example's two copies (queries × keys)."""
        self.map_step = measure.step
        layer, head = measure.best_head()
        s, n = measure.example_start, measure.example_length
        window = slice(s, s + 2 * n)
        matrix = measure.attention[layer, head][window, window]
        tokens = [str(t) for t in measure.example[window]]
        blocked = np.triu(np.ones_like(matrix, dtype=bool), 1)
        self.map.set_data(matrix, tokens, tokens, blocked=blocked, separator=n)
        self.map.set_title(f"L{layer + 1}H{head + 1} · {measure.scores[layer, head]:.0%}")

    def _on_error(self, exc: BaseException) -> None:
        if self._mine():
            self.failed = True
            self.message.setText(f"The lab failed: {type(exc).__name__}: {exc}")
            style.set_sheet(self.message, "color: {error};")

    def _on_finished(self) -> None:
        if self._mine():
            self.run = None
            if self.measures and self.map_step != self.measures[-1].step:
                self.draw_map(self.measures[-1])  # the map of the end, whatever MAP_EVERY says
            self._show_state()

    # -- drawing ----------------------------------------------------------------------------
    def _show_state(self) -> None:
        running = self.run is not None
        self.start_button.setEnabled(not running)
        self.stop_button.setEnabled(running)
        self.steps_spin.setEnabled(not running)
        self.progress.setVisible(running)

    def _restyle(self, *_) -> None:
        for plot in (self.loss_plot, self.icl_plot, self.head_plot):
            plot.restyle()
        if self.measures and self.map_step >= 0:
            last = next((m for m in self.measures if m.step == self.map_step), self.measures[-1])
            self.draw_map(last)
        elif not self.failed:
            self.map.clear_data(MAP_PENDING)  # the empty map's note in the new theme's colour
