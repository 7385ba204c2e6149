"""`LabPanel`: the frame of a panel that trains its own small model live: its knobs (Start, Stop,
steps … declared as data) and progress on one row, the lab's model and a message under it, then
the lab's pictures in a grid. The run is the panel's job (`Panel.add_job`): its messages arrive
as the job's progress, a stale run's are dropped, and a closing window or a deleted panel stops it."""
from __future__ import annotations

from functools import partial

from PySide6.QtCore import Qt, QThreadPool, QTimer
from PySide6.QtWidgets import QGridLayout, QLabel, QProgressBar, QWidget

from explorer import style, theme
from explorer.panels.base import Panel
from explorer.panels.knobs import Knob, make_knobs
from explorer.panels.layouts import column, row
from explorer.panels.live_lab.plot_look import extend
from explorer.panels.stops_with_window import StopsWithWindow
from explorer.state import SessionState
from model.train.lab_stream import LabSteering, StepRows, lab_messages

STACK_HEIGHT = 720  # px: lower than this, two rows would leave a plot too short to read …
ROW_WIDTH = 900  # px: … if one row has the width (a narrow dock stays two a row)
START_TIMEOUT = 60.0  # s: `train_for` waits at most this long for the lab to be built (and scored)


def lab_knobs(start: str, start_tip: str, stop_tip: str, steps_tip: str, steps: tuple[int, int, int, int]) -> tuple:
    """A lab's Start and Stop buttons and its steps box (least, most, one click, value)."""
    return (Knob("start_button", "button", start, start_tip, "start"),
            Knob("stop_button", "button", "Stop", stop_tip, "stop"),
            Knob("steps_spin", "spin", " steps", steps_tip, options=steps))


def _end_runs(running: list[LabSteering], args: tuple) -> None:
    """A deleted panel's run ends (its widgets are gone: the handler holds only the steering)."""
    for steering in running:
        steering.stop(*args)


class LabPanel(StopsWithWindow, Panel):
    intro = ""
    knobs: tuple[Knob, ...] = ()  # `lab_knobs(…)`, and any of the lab's own after them
    stage_texts: dict[str, str] = {}  # the message while the lab is in a stage ("building" …)
    wide_ratio = 1.8  # wider than this × its height: the pictures in one row
    row_stretches: tuple[int, ...] = ()  # each picture's share of one row (default: equal)
    view_minimum = (200, 160)  # each picture's least size (px): readable, never squeezed to nothing
    stop_args: tuple = ()  # what Stop hands the lab's `stop`
    shutdown_args: tuple = ()  # … and what closing the window does
    config_class: type
    lab_class: type
    step_type: type

    def __init__(self, state: SessionState, parent=None):
        super().__init__(state, parent)
        self.run: LabSteering | None = None  # the run under way
        self.stage = "idle"  # idle, starting, building, training, evaluating or failed
        self.step = self.total_steps = 0
        self.curves: dict = {}
        self.under_way: list[LabSteering] = []  # (the panel's `destroyed` stops it)
        self.destroyed.connect(partial(_end_runs, self.under_way, self.shutdown_args))  # once per panel
        self.add_job(lambda _outcome: None, self._on_error)  # (its end: `busy` turns False)
        self.job.expected_errors = ()  # a lab's failure is a bug, not bad input: its type and traceback told
        self.job.progress.connect(self._on_message)
        self.job.busy.connect(self._on_busy)
        self._build()
        theme.notifier().changed.connect(self.restyle)  # (a bound method: dropped with the panel)

    # -- what a subclass gives: its pictures, and how it draws each message ----------------------
    def build_views(self) -> list[QWidget]:
        """The lab's pictures; `self.curves` maps each StepRows column to the curve it extends."""
        raise NotImplementedError

    def clear_views(self, config) -> None:
        """A new run begins: empty the pictures."""

    def show_message(self, message) -> None:
        """A message of the lab's (`StepRows`, a measurement, a result), counted and its curves extended."""

    def finished(self) -> None:
        """The run has ended (stopped, done or failed)."""

    def restyle(self) -> None:
        """Recolour what the plots do not recolour themselves (a theme change)."""

    # -- the frame -------------------------------------------------------------------------------
    def _build(self) -> None:
        knobs = make_knobs(self, self.knobs)
        self.progress = QProgressBar(maximum=1000, format="%p %", maximumWidth=160)  # the message names the step
        self.lab_model = style.eliding_line()  # a line of its own: the buttons leave the row no room for it
        self.lab_model.setObjectName("lab_model")
        style.set_sheet(self.lab_model, "color: {muted};")
        self._name_lab_model(self.config_class())
        self.message = QLabel(self.intro, wordWrap=True, textInteractionFlags=Qt.TextInteractionFlag.TextSelectableByMouse)
        self.views = self.build_views()
        for view in self.views:
            view.setMinimumSize(*self.view_minimum)
        self.controls = row(*knobs[:3], self.progress, *knobs[3:], None)
        self.grid = QGridLayout(spacing=4)
        self.in_a_row: bool | None = None
        self._arrange(False)
        self.column = column(self.controls, self.lab_model, self.message, (self.grid, 1), parent=self)
        self.column.setContentsMargins(4, 2, 4, 2)
        self.column.setSpacing(3)
        self.show_stage("idle")

    def _arrange(self, in_a_row: bool) -> None:
        """The pictures in one row, or two a row (an odd last one across both columns)."""
        if self.in_a_row == in_a_row:
            return
        self.in_a_row = in_a_row
        n = len(self.views)
        for i, widget in enumerate(self.views):
            self.grid.removeWidget(widget)
            if in_a_row:
                self.grid.addWidget(widget, 0, i)
            else:
                self.grid.addWidget(widget, i // 2, i % 2, 1, 2 if i == n - 1 and n % 2 else 1)
        stretches = self.row_stretches or (1,) * n
        for col in range(n):
            self.grid.setColumnStretch(col, stretches[col] if in_a_row else int(col < 2))
        for index in range((n + 1) // 2):
            self.grid.setRowStretch(index, int(index == 0 or not in_a_row))

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        wide = self.width() > self.wide_ratio * self.height()
        self._arrange(wide or (self.height() < STACK_HEIGHT and self.width() >= ROW_WIDTH))

    def apply_screen_class(self, _cls) -> None:
        """Presenting this lab alone, the window's header names its model: the row does not repeat it."""
        presentation = getattr(getattr(self.window(), "lecture", None), "presentation", None)
        alone = presentation is not None and presentation.active and list(presentation.shown) == [self.panel_name]
        self.lab_model.setVisible(not alone)

    def showEvent(self, event) -> None:  # noqa: N802
        super().showEvent(event)
        self.apply_screen_class(None)  # (a lab brought forward while presenting)

    def _name_lab_model(self, config) -> None:
        shown, whole = config.describe()
        self.lab_model.setText(shown)
        self.lab_model.setToolTip(whole)

    # -- controls ----------------------------------------------------------------------------------
    def start(self, config=None, threads: int | None = None) -> None:
        """Train a fresh lab on a worker thread (nothing if one runs already)."""
        if self.run is not None:
            return
        config = config or self.config_class(steps=self.steps_spin.value())
        self.step, self.total_steps = 0, config.steps
        self.progress.reset()  # (no "37 %" of a run before)
        style.set_sheet(self.message, "")
        self._name_lab_model(config)
        self.clear_views(config)
        self.run = steering = LabSteering()
        self.under_way[:] = [steering]
        pool = QThreadPool.globalInstance()
        pool.setMaxThreadCount(pool.maxThreadCount() + 1)  # the lab holds a pool thread all its life
        self.show_stage("starting")
        self.job.submit(partial(_holding_a_slot, pool, lab_messages, self.lab_class, self.step_type, threads,
                                config, steering))

    def start_for_scene(self) -> None:
        """A tour scene's start: the lab once; coming back shows the run going on, or its end."""
        if self.run is None and self.total_steps == 0:  # (set by `start`)
            self.start()

    def stop(self) -> None:
        """End training after the current step (its last measurement still comes)."""
        if self.run is not None:
            self.run.stop(*self.stop_args)

    def shutdown(self) -> None:
        """Stop for good (window closing, app quitting) and wait for the thread."""
        if self.run is not None:
            self.run.stop(*self.shutdown_args)
            self.job.close(int(START_TIMEOUT * 1000))

    def wait_until_drawn(self, msecs: int = 60000) -> bool:
        """A lab's run is no work a figure waits for: what it has drawn so far is the figure."""
        self.draw_now()
        return True

    def train_for(self, seconds: float) -> int:
        """Headless figures (`--train-seconds`): train for `seconds` (or all steps) with the event
        loop running, then stop; returns the steps trained."""
        timed = hasattr(self.config_class, "seconds")  # a lab that times itself
        self.start(self.config_class(steps=self.steps_spin.value(), seconds=seconds) if timed else None)
        if not timed:
            QTimer.singleShot(int(seconds * 1000), self.stop)
        if not self.job.wait(int((2 * START_TIMEOUT + seconds) * 1000)):  # out of time: stop and take what it has
            self.shutdown()
        return self.step

    # -- the job's messages (GUI thread; a stale run's never arrive) -------------------------------
    def _on_message(self, message) -> None:
        if isinstance(message, StepRows):
            self.step = max(self.step, message.last_step)
            self.progress.setValue(int(1000 * self.step / max(self.total_steps, 1)))
            for key, (steps, values) in message.columns.items():
                extend(self.curves[key], steps, values)
        if isinstance(message, str):
            self.show_stage(message)
        else:
            self.show_message(message)

    def _on_error(self, text: str) -> None:
        self.stage = "failed"
        self.message.setText(f"The lab failed: {text}")
        style.set_sheet(self.message, "color: {error};")

    def _on_busy(self, busy: bool) -> None:
        if busy or self.run is None:
            return
        self.run = None
        self.under_way.clear()
        self.finished()
        self.show_stage("failed" if self.stage == "failed" else "idle")

    def show_stage(self, stage: str) -> None:
        self.stage = stage
        running = self.run is not None
        self.start_button.setEnabled(not running)
        self.stop_button.setEnabled(running and self.stage != "evaluating")
        self.steps_spin.setEnabled(not running)
        self.progress.setVisible(running)
        self.progress.setRange(0, 0 if self.stage == "evaluating" else 1000)  # evaluating: busy, no steps
        if self.stage in self.stage_texts:
            self.message.setText(self.stage_texts[self.stage])


def _holding_a_slot(pool: QThreadPool, messages, *args):
    """The lab's messages; the pool's extra thread given back as they end, on the worker, even
    where the panel is gone by then."""
    try:
        yield from messages(*args)
    finally:
        pool.setMaxThreadCount(pool.maxThreadCount() - 1)


__all__ = ["LabPanel", "lab_knobs"]
