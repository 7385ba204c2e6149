"""Live training panel: train a Transformer with the paper's recipe (Section 5) and watch the loss
fall, the accuracy rise, Eq. 3's learning rate warm up then decay and a probe's attention change.
The run goes on off the GUI thread (`worker`); it replaces the session's model only when asked."""
from __future__ import annotations

import os
import sys
from pathlib import Path

from PySide6.QtCore import QEventLoop, QStandardPaths, QTimer
from PySide6.QtWidgets import QApplication, QFileDialog, QSizePolicy, QWidget

from explorer.panels.layouts import column
from explorer.panels.split_pages import SplitPages
from explorer.panels.stops_with_window import StopsWithWindow
from explorer.panels.texts import say, text_label
from explorer.panels.training.controls import TrainingControls
from explorer.panels.training.curves import TrainingCurves
from explorer.panels.training.probe import ProbeView
from explorer.panels.training.run_reports import RunReports
from explorer.panels.training.sandbox import PUBLISH_INTERVAL, Sandbox  # noqa: F401 - tests read it
from explorer.panels.training.worker import TrainingRun, in_background
from explorer.screen import ScreenClass
from explorer.state import SessionState
from model.io.checkpoints import save_checkpoint
from model.train.live_messages import Offer, ProbeFailed, RunInfo, Saved, SaveFailed, Snapshot
from model.train.request import TrainingRequest

EVAL_SIZE = 50  # held-out pairs per live evaluation (a full evaluation is the CLI's job)
START_TIMEOUT = 60.0  # s: `train_for` waits at most this long for the first step
DATA_ENV = "TRANSFORMER_EXPLORER_DATA"  # overrides where the app keeps its files (tests, kiosks)


def last_run_dir() -> Path:
    """Where a run goes when the window closes mid-run: $TRANSFORMER_EXPLORER_DATA, else the
    platform's data folder (e.g. ~/.local/share/transformer-explorer on Linux)."""
    base = os.environ.get(DATA_ENV)
    if not base:
        found = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.GenericDataLocation)
        base = Path(found) / "transformer-explorer" if found else Path.home() / ".transformer-explorer"
    return Path(base) / "last-run"


class TrainingPanel(StopsWithWindow, RunReports, QWidget):
    panel_name = "training"
    title = "Training"

    def __init__(self, state: SessionState, parent=None):
        super().__init__(parent)
        self.state = state
        self.run: TrainingRun | None = None
        self.phase = "idle"
        self.redraw_when_shown = False  # data came while the panel was hidden: drawn when it is shown
        self.step = self.total_steps = 0
        self.info: RunInfo | None = None
        self.trained: Offer | None = None  # the last model a run handed over
        self._own = None  # the session's own model the controls were last set up for
        self._defaults_pending = False  # it changed during a run: its task and kind once the run ends
        self.screen_class = ScreenClass.WIDE
        self.controls, self.curves, self.probe = TrainingControls(), TrainingCurves(), ProbeView()
        self.message = text_label(selectable=True)  # what the run did: wrapped, never cut
        self.message.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)  # never widens the window
        self.message.setVisible(False)  # until there is something to say
        self.curves.setMinimumSize(330, 260)  # below this the 2 × 2 plots would be clipped
        self.curves_page = QWidget(autoFillBackground=True)  # (in a tab: the window's colour, not the tab pane's)
        self.left = column((self.curves, 1), parent=self.curves_page, margins=0)
        # half the width each (2 × 2 curves of readable plots), or a tab each on a narrow screen
        self.body = SplitPages([(self.curves_page, "Curves", 1), (self.probe, "Probe", 1)])
        self.probe.setAutoFillBackground(True)
        column(self.controls, self.message, (self.body, 1), parent=self, margins=2).setSpacing(3)
        c = self.controls
        c.connect_buttons(self)
        c.settings_button.toggled.connect(lambda _on: self._show_phase())
        c.taskChanged.connect(self._on_task_changed)
        self.probe.probeEdited.connect(self._on_probe_edited)
        self.probe.slider.valueChanged.connect(self.select_snapshot)
        self.probe.live_button.clicked.connect(lambda: self.follow_live())
        self.init_display()
        self.sandbox = Sandbox(self)
        self.controls.show_others.toggled.connect(self.sandbox.on_show_others)
        self._on_task_changed(c.task_name())
        self._show_phase()
        state.bundleChanged.connect(self._on_bundle)
        state.themeChanged.connect(lambda _name: self.curves.restyle_marks())
        self._on_bundle()
        if QApplication.instance() is not None:
            QApplication.instance().aboutToQuit.connect(self.shutdown)

    # -- public controls ------------------------------------------------------------------------
    def request(self, start_paused: bool = False) -> TrainingRequest:
        """The run the controls describe."""
        return self.controls.setup().request(self.state.session.bundle, self.probe.probe_edit.text().strip(),
                                             start_paused, EVAL_SIZE)

    def start(self, request: TrainingRequest | None = None) -> None:
        """Start a new run (the controls' settings unless a request is given)."""
        if self.run is not None:
            return
        request = request or self.request()
        self.total_steps, self.step, self.info = request.train.steps, 0, None
        self.reset_display(request)
        self.sandbox.reset()
        self.run = run = TrainingRun(request)
        self.follow(run)
        self.controls.settings_button.setChecked(False)  # (a short screen: the map and the curves get the room)
        self.phase = "building"
        self.say("Building the model…")
        self._show_phase()
        run.start()

    def pause(self) -> None:
        if self.run is not None:
            self.run.steering.pause()

    def resume(self) -> None:
        if self.run is not None:
            self.run.steering.resume()

    def start_or_resume(self) -> None:
        if self.run is None:
            self.start()
        else:
            self.resume()

    def keep_to_itself(self) -> None:
        """The other panels show the session's model, not this run (a tour's next scene)."""
        if self.run is not None:
            self.controls.show_others.setChecked(False)

    def start_for_scene(self) -> None:
        """A tour scene's start: the first run (seen here only), else the run going on, resumed."""
        if self.run is not None:
            self.resume()
        elif self.total_steps == 0:  # (set by `start`: no run was ever started here)
            self.controls.show_others.setChecked(False)
            self.start()

    def single_step(self) -> None:
        """Exactly one optimisation step (starting a paused run first if none is going)."""
        if self.run is None:
            self.start(self.request(start_paused=True))
        self.run.steering.step_once()

    def stop(self) -> None:
        """End the run: the worker hands its last copy over (for Use / Save), then ends."""
        if self.run is not None:
            self.run.steering.stop(offer=True)

    def save_checkpoint(self, folder: str | Path) -> None:
        """Save the weights: by the worker between two steps during a run, else the last trained model."""
        folder = str(folder)
        if self.run is not None:
            self.run.steering.save(folder)
        elif self.trained is not None:  # a finished run's copy: a pool thread writes it
            in_background(save_checkpoint, self.trained.bundle, folder, on_done=lambda done: self.report(Saved(done)),
                          on_failed=lambda error: self.report(SaveFailed(str(error))))
        else:
            return
        self.say(f"Saving a checkpoint to {folder} …")

    def use_model(self) -> None:
        """The model being trained (a CPU copy of it now), or the last run's, becomes the session's."""
        if self.run is not None:
            self.run.steering.offer("asked")
        elif self.trained is not None:
            self.sandbox.use(self.trained)

    def back_to_session_model(self) -> None:
        """The session's own model in the other panels again; the run goes on, seen only here."""
        self.controls.show_others.setChecked(False)  # else the next copy would be shown at once
        self.sandbox.unshow()

    def train_for(self, seconds: float) -> int:
        """Headless (`--train-seconds`): train `seconds` from the first step (waiting at most
        START_TIMEOUT for it) with the event loop running, stop, deliver the worker's last
        signals. Returns the steps trained."""
        self.start_or_resume()
        loop, started, waiting = QEventLoop(), self.step, QTimer(self, interval=50)
        self.run.worker.finished.connect(loop.quit)  # the run finished (all steps) or could not start

        def first_step() -> None:
            if self.step > started:
                waiting.stop()
                QTimer.singleShot(int(seconds * 1000), loop.quit)

        waiting.timeout.connect(first_step)
        waiting.start()
        QTimer.singleShot(int((START_TIMEOUT + seconds) * 1000), loop.quit)
        loop.exec()
        waiting.stop()
        waiting.deleteLater()
        run = self.run
        if run is not None:
            self.stop()
            run.join()
        for _ in range(5):  # queued rows, the offered model, `finished`
            QApplication.processEvents()
        return self.step

    def shutdown(self) -> Path | None:
        """Stop a run for good (window closing, app quitting), its weights to the last-run folder;
        blocks until the worker has ended. Returns the folder, if saved."""
        run, self.run = self.run, None
        if run is None or run.is_done():  # (a run stopped and joined already handed its model over)
            return None
        folder = last_run_dir()
        run.steering.stop(save_to=str(folder), offer=False)
        run.join()
        self.phase = "idle"
        self._show_phase()
        self.sandbox.close()
        report = run.steering.closing_report(str(folder))
        if report is None:
            return None
        print(f"transformer-explorer: {report[0]}", file=sys.stderr)
        self.tell(*report)
        return folder if report[1] == "info" else None

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        if self.redraw_when_shown:
            self.redraw()

    # -- controls -----------------------------------------------------------------------------
    def choose_save_folder(self) -> None:
        """Save… : a folder of the user's (a new one inside it where it holds other files)."""
        folder = QFileDialog.getExistingDirectory(self, "Save the checkpoint into a folder")
        if folder:
            path = Path(folder)
            if any(path.iterdir()) and not (path / "config.json").is_file():  # never clobber a folder
                path = path / f"{self.info.task if self.info else 'model'}-step{self.step}"
            self.save_checkpoint(path)

    def _on_task_changed(self, name: str) -> None:
        """The next run's task and its default probe; a finished run's map of another task gives way."""
        if self.run is None and self.info is not None and name != self.info.task:
            self.clear_probe()
        if self.probe.shown_probe() is None:
            self.probe.set_task(name, self.controls.kind())

    def _on_probe_edited(self, text: str) -> None:
        """During a run the worker probes the new text; after it, the run's last model does (off the
        GUI thread), its snapshot ending the timeline."""
        text = text.strip()
        if self.run is not None:
            self.run.steering.set_probe(text)
        elif self.trained is not None and self.probe.shown_probe() is not None and text:
            offer = self.trained
            in_background(offer.bundle.run, text, on_failed=lambda error: self.report(ProbeFailed(str(error))),
                          on_done=lambda result: self._on_probed(offer, Snapshot(offer.step, result, text)))

    def _on_probed(self, offer: Offer, snap: Snapshot) -> None:
        if self.run is None and self.trained is offer:  # (not once a new run has begun)
            self.add_snapshot(snap, follow=True)

    def _on_bundle(self, *_args) -> None:
        """The session's own model changed: a run may continue it, and learns its task with its kind
        by default (once the current run ends)."""
        own = self.state.session.bundle
        self.sandbox.show_back()
        if own is not self._own:
            self._own = own
            self.controls.set_continue_available(own)
            if self.run is None:
                self._apply_model_defaults()
            else:
                self._defaults_pending = True

    def _apply_model_defaults(self) -> None:
        self._defaults_pending = False
        own = self.state.session.bundle
        if own is not None and self.controls.set_model_defaults(own):
            self._on_task_changed(self.controls.task_name())

    # -- display ------------------------------------------------------------------------------
    def _show_phase(self) -> None:
        self.controls.set_phase(self.phase, has_model=self.trained is not None)
        self.controls.show_others.setEnabled(self.run is not None)  # after a run there is nothing to show
        short = self.screen_class is not ScreenClass.WIDE  # the settings foldable
        self.controls.settings_button.setVisible(short)
        folded = short and not self.controls.settings_button.isChecked()
        self.controls.settings.setVisible(not folded)
        self._place_texts(folded and self.screen_class is ScreenClass.PROJECTOR)

    def say(self, text: str, level: str = "info") -> None:
        """What the run did: plain text; a warning or an error tinted by its level (`texts.say`)."""
        say(self.message, text, "plain" if level == "info" else level)
        self.message.setVisible(bool(text.strip()))

    def tell(self, text: str, level: str = "info") -> None:
        """Say it here and in the window's status line."""
        self.say(text, level)
        self.state.inform(text, level)

    def apply_screen_class(self, cls: ScreenClass) -> None:
        """WIDE: curves beside the probe. PROJECTOR: side by side but compact (`_show_phase`). NARROW:
        compact, the curves and the probe a tab each."""
        self.screen_class = cls
        self.body.set_apart(cls is ScreenClass.NARROW)
        self.curves.apply_screen_class(cls)
        self._show_phase()

    def _place_texts(self, left: bool) -> None:
        """A projector with the settings folded (a run): the run's message and the probe's lines over
        the curves, which have height to spare, so that the map has its column's height for one
        readable label a row."""
        if (self.message.parentWidget() is self.curves_page) == left:
            return
        if left:
            self.left.insertWidget(0, self.message)
            self.left.insertWidget(1, self.probe.texts)
        else:
            self.layout().insertWidget(1, self.message)
            self.probe.layout().insertWidget(0, self.probe.texts)
        self.message.setVisible(bool(self.message.text().strip()))
        self.probe.texts.setVisible(True)  # (now, not once the moved widget's deferred show comes)
