"""Live training panel: train a Transformer with the paper's recipe (Section 5) and watch it learn.

Choose a task, a model size and a device; start, pause, single-step or stop. The curves show
the loss falling, accuracy rising and the learning rate of Eq. 3 warming up then decaying; a
fixed probe input shows the model's output and attention map changing as it trains (the
reverse task's anti-diagonal appears). Training runs in `explorer.panels.training.worker` on
its own thread; this panel only draws what the worker sends and forwards clicks. A run is a
sandbox: it never replaces the session's model unless asked (`explorer.panels.training.sandbox`).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from PySide6.QtCore import QEvent, QEventLoop, Qt, QTimer
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication, QFileDialog, QLabel, QSplitter, QVBoxLayout, QWidget

from explorer import style
from explorer.state import SessionState
from explorer.panels.training.controls import CONTINUE, TSV, TrainingControls, format_duration
from explorer.panels.training.curves import TrainingCurves
from explorer.panels.training.probe import ProbeView
from explorer.panels.training.setup import TrainingRequest, last_run_dir
from explorer.panels.training.messages import Offer, RunInfo, Snapshot
from explorer.panels.training.sandbox import PUBLISH_INTERVAL, RUN_LABEL, Sandbox  # noqa: F401 - tests read it
from explorer.panels.training.snapshots import SnapshotTimeline
from explorer.panels.training.worker import TrainingRun, save_in_background

# Every ms the GUI thread spends drawing holds Python's GIL, which the training thread needs
# between its torch ops: so redraws are spaced by what they cost, not only by the clock.
FRAME_MIN = 0.25  # s between redraws of the curves and the probe (at most 4 a second) …
GUI_BUDGET = 0.025  # … and their measured cost stays under this share of the time
ETA_WINDOW = 10.0  # s of recent running time used for the steps/s behind "time left"
EVAL_SIZE = 50  # held-out pairs per live evaluation (a full evaluation is the CLI's job)


class TrainingPanel(QWidget):
    panel_name = "training"
    title = "Training"

    def __init__(self, state: SessionState, parent=None):
        super().__init__(parent)
        self.state = state
        self.run: TrainingRun | None = None
        self.phase = "idle"
        self.step = 0
        self.total_steps = 0
        self.info: RunInfo | None = None
        self.trained: Offer | None = None  # the last model a run handed over
        self._own = None  # the session's own model the controls were last set up for
        self._defaults_pending = False  # it changed during a run: its task and kind once the run ends
        self.timeline: SnapshotTimeline[Snapshot] = SnapshotTimeline()
        self.live = True
        self.viewed = -1  # timeline index on show
        self._walls = np.empty(0)
        self._wall_steps = np.empty(0)
        self._watched = None
        self._train_loop: QEventLoop | None = None
        self._redraw_timer = QTimer(self, singleShot=True)
        self._redraw_timer.timeout.connect(self.redraw)
        self._last_redraw = 0.0
        self._frame_cost = 0.0
        self._show_newest = False
        self._build()
        self.sandbox = Sandbox(self)
        state.bundleChanged.connect(self._on_bundle)
        state.shownModelChanged.connect(self._on_shown_model)
        self._on_bundle()
        app = QApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)

    # -- construction -------------------------------------------------------------------------
    def _build(self) -> None:
        self.controls = TrainingControls()
        self.curves = TrainingCurves()
        self.curves.setMinimumSize(330, 260)  # below this the 2 × 2 plots would be clipped
        self.probe = ProbeView()
        self.message = QLabel(" ")
        self.message.setWordWrap(True)
        self.message.setFont(style.font(style.BASE_POINT_SIZE))
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.splitter = QSplitter(Qt.Horizontal)
        self.splitter.addWidget(self.curves)
        self.splitter.addWidget(self.probe)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setChildrenCollapsible(False)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 6, 8, 6)
        lay.setSpacing(6)
        lay.addWidget(self.controls)
        lay.addWidget(self.message)
        lay.addWidget(self.splitter, 1)

        c = self.controls
        c.startClicked.connect(self._on_start_clicked)
        c.pauseClicked.connect(self.pause)
        c.stepClicked.connect(self.single_step)
        c.stopClicked.connect(self.stop)
        c.saveClicked.connect(self._on_save_clicked)
        c.useClicked.connect(self.use_model)
        c.backClicked.connect(self.back_to_session_model)
        c.taskChanged.connect(self._on_task_changed)
        self.probe.probeEdited.connect(self._on_probe_edited)
        self.probe.timelineMoved.connect(self.select_snapshot)
        self.probe.liveRequested.connect(self.follow_live)
        self.probe.showInOthersChanged.connect(self._on_show_others)
        self._on_task_changed(c.task_name())
        self._show_phase()

    # -- public controls ------------------------------------------------------------------------
    def request(self, start_paused: bool = False) -> TrainingRequest:
        """The run the controls describe."""
        from model.training import TrainConfig

        c = self.controls
        train = TrainConfig(steps=c.steps_spin.value(), batch_size=c.batch_spin.value(),
                            warmup=c.warmup_spin.value(), device=c.device_box.currentData(), eval_size=EVAL_SIZE)
        tsv = c.tsv_path if c.task_box.currentData() == TSV else None
        preset = c.model_box.currentData()
        return TrainingRequest(task=c.task_name(), tsv_path=tsv, tsv_tokenizer=c.tokenizer_box.currentText(),
                               preset=preset if preset != CONTINUE else "tiny", kind=c.kind(),
                               continue_from=self.state.session.bundle if preset == CONTINUE else None,
                               train=train,
                               probe=self.probe.probe_edit.text().strip(), snapshots=True, start_paused=start_paused)

    def start(self, request: TrainingRequest | None = None) -> None:
        """Start a new run (the controls' settings unless a request is given)."""
        if self.run is not None:
            return
        request = request or self.request()
        self.total_steps = request.train.steps
        self.step = 0
        self.info = None
        self.timeline.clear()
        self.probe.clear()
        self.curves.reset(request.train.warmup)
        from model.kinds import model_kind

        kind = (request.continue_from.model_kind if request.continue_from is not None
                else model_kind(request.kind))
        self.curves.set_metric(kind.metric)
        self._walls, self._wall_steps = np.empty(0), np.empty(0)
        self.sandbox.reset()
        self.live = True
        self.run = run = TrainingRun(request)
        w = run.worker
        w.info.connect(self._on_info)
        w.rows.connect(self._on_rows)
        w.evaluated.connect(self._on_eval)
        w.snapshot.connect(self._on_snapshot)
        w.probe_failed.connect(self._on_probe_failed)
        w.offered.connect(self._on_offered)
        w.saved.connect(self._on_saved)
        w.save_failed.connect(self._on_save_failed)
        w.failed.connect(self._on_failed)
        w.phase.connect(self._on_phase)
        w.finished.connect(self._on_finished)  # after the last message (and `errored`, if a bug)
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

    def single_step(self) -> None:
        """Exactly one optimisation step (starting a paused run first if none is going)."""
        if self.run is None:
            self.start(self.request(start_paused=True))
        self.run.steering.step_once()

    def stop(self) -> None:
        """End the run; the worker hands its last copy over (for Use / Save), then its thread
        ends, and the panels show the session's own model again."""
        if self.run is not None:
            self.run.steering.stop(offer=True)

    def save_checkpoint(self, folder: str | Path) -> None:
        """Save the weights: by the worker between two steps during a run, else the last trained model."""
        folder = str(folder)
        if self.run is not None:
            self.run.steering.save(folder)
            self.say(f"Saving a checkpoint to {folder} …")
        elif self.trained is not None:  # a finished run's copy: nobody trains it, a pool thread writes it
            save_in_background(self.trained.bundle, folder, self._on_saved, self._on_save_error)
            self.say(f"Saving a checkpoint to {folder} …")

    def use_model(self) -> None:
        """Make the model being trained (a CPU copy of it now), or the last run's, the session's
        model in place of the loaded one."""
        if self.run is not None:
            self.run.steering.offer("asked")
        elif self.trained is not None:
            self.sandbox.use(self.trained)

    def back_to_session_model(self) -> None:
        """Show the session's own model (the loaded checkpoint) again; the run goes on, seen
        only here, until "Show in other panels" is ticked again."""
        self.probe.show_others.setChecked(False)  # else the next copy would be shown at once
        self.sandbox.unshow()

    def select_snapshot(self, index: int) -> None:
        """Show an earlier snapshot in the probe; the newest one means 'follow live'. While the
        probe looks back, the other panels hold the model they show (snapshots keep no weights)."""
        if not len(self.timeline):
            return
        index = max(0, min(int(index), len(self.timeline) - 1))
        self.live = index == len(self.timeline) - 1
        self._show(index)
        if self.live:
            self.sandbox.publish_later()

    def follow_live(self) -> None:
        self.select_snapshot(len(self.timeline) - 1)

    def train_for(self, seconds: float) -> int:
        """Headless use (`--train-seconds`): train for `seconds` with the event loop running, then
        stop, wait for the worker and deliver its last signals. Returns the steps trained."""
        if self.run is None:
            self.start()
        elif self.phase == "paused":
            self.resume()
        self._train_loop = loop = QEventLoop()
        QTimer.singleShot(int(seconds * 1000), loop.quit)
        loop.exec()  # ends early if the run finishes (all steps) or cannot start
        self._train_loop = None
        run = self.run
        if run is not None:
            self.stop()
            run.join()
        for _ in range(5):  # queued rows, the offered model, `finished`
            QApplication.processEvents()
        return self.step

    def shutdown(self) -> Path | None:
        """Stop a run for good (window closing, app quitting): the weights go to the last-run
        folder. Blocks until the worker's thread has ended. Returns the folder, if saved."""
        run, self.run = self.run, None
        if run is None:
            return None
        folder = last_run_dir()
        run.steering.stop(save_to=str(folder), offer=False)
        run.join()
        self.phase = "idle"
        self._show_phase()
        self.sandbox.close()
        w = run.steering
        if w.steps_done == 0:
            return None
        if w.last_saved == str(folder):
            text, level = f"Training stopped at step {w.steps_done:,}; the last run was saved to {folder}", "info"
        else:
            text = f"Training stopped at step {w.steps_done:,}; saving the last run failed: {w.last_error}"
            level = "error"
        print(f"transformer-explorer: {text}", file=sys.stderr)
        self.say(text, level)
        self.state.inform(text, level)
        return folder if level == "info" else None

    # -- worker signals (GUI thread; anything from a run that is no longer current is dropped) --
    def _mine(self) -> bool:
        return self.run is not None and self.sender() is self.run.worker.signals

    def _on_info(self, info: RunInfo) -> None:
        if not self._mine():
            return
        self.info = info
        self.total_steps = info.steps
        self.probe.set_probe_text(info.probe)
        self.sandbox.publish_later()  # the untrained model, at once
        own = self.state.session.bundle
        shown = (f" The other panels show this run's model (“{RUN_LABEL}, step N”) in place of “{own.name}” "
                 f"until it ends or you go back." if self.probe.show_others.isChecked() and own is not None else "")
        self.say(f"Training <b>{info.task}</b>: {info.model} on <b>{info.device}</b> "
                  f"({info.threads} thread{'s' if info.threads != 1 else ''}), warm-up {info.warmup:,} steps.{shown}")

    def _on_rows(self, rows) -> None:
        if not self._mine() or not len(rows):
            return
        self.curves.add_rows(rows)
        self.step = int(rows.step[-1])
        self._walls = np.concatenate([self._walls, rows.wall])[-4096:]
        self._wall_steps = np.concatenate([self._wall_steps, rows.step.astype(float)])[-4096:]
        self._schedule_redraw()

    def _on_eval(self, event) -> None:
        if self._mine():
            self.curves.add_eval(event)
            self._schedule_redraw()

    def _on_snapshot(self, snap: Snapshot) -> None:
        if not self._mine():
            return
        viewing_past = not self.live and 0 <= self.viewed < len(self.timeline)
        viewed_step = self.timeline[self.viewed][0] if viewing_past else None
        self.timeline.add(snap.step, snap)
        if self.live:
            self._show_newest = True
            self.sandbox.publish_later()
        else:
            self.viewed = self.timeline.index_of_step(viewed_step)
        self._schedule_redraw()

    def _on_probe_failed(self, text: str) -> None:
        if self._mine():
            self.say(f"Probe input: {text}", "warning")

    def _on_offered(self, offer: Offer) -> None:
        if not self._mine():
            return
        self.trained = offer
        if offer.reason == "show":
            self.sandbox.on_offered(offer)
        elif offer.reason == "asked":
            self.sandbox.use(offer)

    def _on_saved(self, folder: str) -> None:
        text = f"Checkpoint saved to {folder}"
        self.say(text)
        self.state.inform(text, "info")

    def _on_save_failed(self, text: str) -> None:
        self.say(f"Could not save the checkpoint: {text}", "error")
        self.state.inform(f"Could not save the checkpoint: {text}", "error")

    def _on_save_error(self, exc: BaseException) -> None:
        self._on_save_failed(str(exc))

    def _on_failed(self, text: str) -> None:
        if not self._mine():
            return
        self.say(text, "error")
        self.state.inform(text, "error")

    def _on_phase(self, phase: str) -> None:
        if self._mine():
            self.phase = phase
            self._show_phase()
            self._show_progress()

    def _on_finished(self) -> None:
        if not self._mine():
            return
        run, self.run = self.run, None
        run.join()
        outcome = run.outcome
        self.phase = "idle"
        self._show_phase()
        self.redraw()
        if self._train_loop is not None:
            self._train_loop.quit()
        was_shown = self.sandbox.shown is not None
        self.sandbox.close()  # the panels show the session's own model again
        if self._defaults_pending:
            self._apply_model_defaults()
        if outcome == "failed":
            return
        what = "finished" if outcome == "finished" else "stopped"
        text = f"Training {what} after {self.step:,} steps."
        own = self.state.session.bundle
        if self.trained is not None and self.trained.reason == outcome and own is not None:
            back = f" The panels show “{own.name}” again." if was_shown else ""
            text += f"{back} “Use this model” makes the trained model (step {self.trained.step:,}) the session's model."
        self.say(text)
        self._show_progress(done=True)

    # -- drawing, paced by its cost ----------------------------------------------------------------
    def _schedule_redraw(self) -> None:
        if self._redraw_timer.isActive():
            return
        gap = max(FRAME_MIN, self._frame_cost / GUI_BUDGET)
        wait = gap - (time.monotonic() - self._last_redraw)
        self._redraw_timer.start(max(0, int(wait * 1000)))

    def redraw(self) -> None:
        """Hand everything received since the last redraw to the plots (one batch of work)."""
        self._redraw_timer.stop()
        start = time.perf_counter()
        self.curves.refresh()
        if self._show_newest and self.live and len(self.timeline):
            self._show(len(self.timeline) - 1)
        else:
            self._update_timeline()
        self._show_newest = False
        self._show_progress(done=self.run is None)
        # This frame's Python work + what painting took since the last frame (about the same next time).
        self._frame_cost = (time.perf_counter() - start + self.curves.take_paint_time()
                            + self.probe.canvas.take_paint_time())
        self._last_redraw = time.monotonic()

    # -- snapshots ------------------------------------------------------------------------------
    def _show(self, index: int) -> None:
        self.viewed = index
        step, snap = self.timeline[index]
        self.probe.show_snapshot(step, snap.result, snap.probe)
        self._update_timeline()

    def _update_timeline(self) -> None:
        n = len(self.timeline)
        step = self.timeline[self.viewed][0] if 0 <= self.viewed < n else 0
        self.probe.set_timeline(n, self.viewed, step, self.live)

    def _on_shown_model(self, shown) -> None:
        self.sandbox.on_shown_model(shown)

    def _on_show_others(self, on: bool) -> None:
        self.sandbox.on_show_others(on)

    # -- controls -----------------------------------------------------------------------------
    def _on_start_clicked(self) -> None:
        if self.run is None:
            self.start()
        else:
            self.resume()

    def _on_save_clicked(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Save the checkpoint into a folder")
        if not folder:
            return
        path = Path(folder)
        if any(path.iterdir()) and not (path / "config.json").is_file():
            path = path / f"{self.info.task if self.info else 'model'}-step{self.step}"  # never clobber a folder
        self.save_checkpoint(path)

    def _on_task_changed(self, name: str) -> None:
        if name in ("tsv", ""):
            self.probe.set_probe_text("")
            return
        from model.tasks import get_task
        from explorer.panels.training.setup import default_probe

        self.probe.set_probe_text(default_probe(get_task(name), self.controls.kind()))
        self.probe.expect_kind(self.controls.kind())

    def _on_probe_edited(self, text: str) -> None:
        if self.run is not None:
            self.run.steering.set_probe(text.strip())

    def _on_bundle(self, *_args) -> None:
        """The session's own model changed (not a model merely shown): continue it, and learn
        its task with its kind by default."""
        own = self.state.session.bundle
        self.sandbox.show_back()
        if own is self._own:
            return
        self._own = own
        self.controls.set_continue_available(own)
        if self.run is None:
            self._apply_model_defaults()
        else:  # a run's settings are fixed while it runs: once it ends
            self._defaults_pending = True

    def _apply_model_defaults(self) -> None:
        self._defaults_pending = False
        own = self.state.session.bundle
        if own is not None and self.controls.set_model_defaults(own):
            self._on_task_changed(self.controls.task_name())

    # -- display ------------------------------------------------------------------------------
    def _show_phase(self) -> None:
        self.controls.set_phase(self.phase, has_model=self.trained is not None)

    def _show_progress(self, done: bool = False) -> None:
        total = max(1, self.total_steps)
        pct = 100.0 * self.step / total
        text = f"step {self.step:,} / {total:,} · {pct:.0f} %"
        if self.phase == "paused":
            text += " · paused"
        elif not done and len(self._walls) >= 2:
            recent = self._walls >= self._walls[-1] - ETA_WINDOW
            w, s = self._walls[recent], self._wall_steps[recent]
            if len(w) >= 2 and w[-1] > w[0]:
                rate = (s[-1] - s[0]) / (w[-1] - w[0])
                text += f" · {rate:.1f} steps/s · {format_duration((total - self.step) / max(rate, 1e-9))} left"
        elif done:
            text += " · done" if self.step >= total else " · stopped"
        self.controls.set_progress(self.step, total, text)

    def say(self, text: str, level: str = "info") -> None:
        colour = {"error": style.ERROR, "warning": style.WARNING}.get(level, style.TEXT)
        self.message.setStyleSheet(f"color: {colour.name()};")
        self.message.setText(text)

    # -- lifetime -------------------------------------------------------------------------------
    def showEvent(self, event) -> None:  # noqa: N802
        super().showEvent(event)
        top = self.window()
        if top is not self and top is not self._watched:
            top.installEventFilter(self)  # the main window closing must stop the run too
            self._watched = top

    def eventFilter(self, obj, event) -> bool:  # noqa: N802
        if obj is self._watched and event.type() == QEvent.Type.Close:
            self.shutdown()
        return False

    def closeEvent(self, event) -> None:  # noqa: N802
        self.shutdown()
        super().closeEvent(event)

    def resizeEvent(self, event) -> None:  # noqa: N802
        """Curves beside the probe, unless the panel is tall and narrow (a portrait dock)."""
        super().resizeEvent(event)
        orientation = Qt.Vertical if self.height() > 1.2 * self.width() else Qt.Horizontal
        if self.splitter.orientation() != orientation:
            self.splitter.setOrientation(orientation)
