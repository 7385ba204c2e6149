"""The training panel's run buttons: Start / Resume, Pause, Step, Stop, the run's progress bar,
and what to do with the trained model (Save…, Use this model, Back to the loaded model).

Pure widgets: `TrainingControls` connects the buttons to its signals and says which phase the
run is in; the buttons enable what makes sense in it.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGridLayout, QProgressBar, QPushButton, QStyle, QWidget

from explorer import style

DEFAULT_STEPS = {"tiny": 3000, "small": 4000, "paper-base": 2000}


class RunButtons(QWidget):
    """The run's buttons, its progress, then the model's buttons: one row on a wide screen, two
    on a projector or a narrow one (`arrange`)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.start_button = self._button("Start", QStyle.SP_MediaPlay, "Start training (or resume)")
        self.pause_button = self._button("Pause", QStyle.SP_MediaPause, "Pause after this step")
        self.step_button = self._button("Step", QStyle.SP_MediaSkipForward, "Exactly one optimisation step, then pause")
        self.stop_button = self._button("Stop", QStyle.SP_MediaStop,
                                        "End the run; the other panels show the loaded model again "
                                        "(“Use this model” keeps the trained one)")
        self.save_button = self._button("Save…", None, "Save a checkpoint: the current weights, written to a folder")
        self.use_button = self._button("Use this model", None,
                                       "Make the trained model (a copy of it now) the session's model, in place "
                                       "of the loaded one")
        self.back_button = self._button("Back to the loaded model", None,
                                        "Show the session's own model in the other panels again (the run goes on)")
        self.back_button.setEnabled(False)
        self.button_grid = QGridLayout()
        self.button_grid.setHorizontalSpacing(6)
        self.button_grid.setVerticalSpacing(3)
        self.one_row: bool | None = None

        self.progress = QProgressBar()  # its text is the run's line; Qt elides what does not fit
        self.progress.setRange(0, DEFAULT_STEPS["tiny"])
        self.progress.setValue(0)
        self.progress.setTextVisible(True)
        self.progress.setFormat("not started")
        self.progress.setFont(style.font(style.BASE_POINT_SIZE, bold=True))
        self.progress.setMinimumHeight(28)
        self.progress.setAlignment(Qt.AlignCenter)

        self.setLayout(self.button_grid)
        self.button_grid.setContentsMargins(0, 0, 0, 0)

    def _button(self, text: str, icon, tip: str) -> QPushButton:
        b = QPushButton(text) if icon is None else QPushButton(self.style().standardIcon(icon), text)
        b.setFont(style.font(style.BASE_POINT_SIZE, bold=text in ("Start", "Pause")))
        b.setToolTip(tip)
        b.setMinimumHeight(32)
        return b

    def arrange(self, one_row: bool) -> None:
        """One row (a wide screen), or two: Start over Save…, Pause over Use this model, …"""
        if one_row == self.one_row:
            return
        self.one_row = one_row
        g = self.button_grid
        run = (self.start_button, self.pause_button, self.step_button, self.stop_button)
        model = (self.save_button, self.use_button, self.back_button)
        for w in run + model + (self.progress,):
            g.removeWidget(w)
        for c in range(10):
            g.setColumnStretch(c, 0)
        for c, w in enumerate(run):
            g.addWidget(w, 0, c)
        if one_row:
            g.addWidget(self.progress, 0, 4)
            for c, w in enumerate(model):
                g.addWidget(w, 0, 5 + c)
            g.setColumnStretch(4, 1)
        else:
            g.addWidget(self.progress, 0, 4, 1, 4)
            for c, w in enumerate(model):
                g.addWidget(w, 1, c)
            g.setColumnStretch(7, 1)

    def set_phase(self, phase: str, has_model: bool) -> None:
        """Enable what makes sense: idle / building / running / paused / finishing."""
        self.start_button.setText("Resume" if phase == "paused" else "Start")
        self.start_button.setEnabled(phase in ("idle", "paused"))
        self.pause_button.setEnabled(phase == "running")
        self.step_button.setEnabled(phase in ("idle", "paused"))
        self.stop_button.setEnabled(phase in ("running", "paused", "building"))
        self.save_button.setEnabled(phase in ("running", "paused") or (phase == "idle" and has_model))
        self.use_button.setEnabled(phase in ("running", "paused") or (phase == "idle" and has_model))

    def set_back(self, name: str, enabled: bool) -> None:
        """“Back to <the session's model>”, enabled while a run's model is shown in its place."""
        self.back_button.setText(f"Back to {name}" if name else "Back to the loaded model")
        self.back_button.setEnabled(enabled)

    def set_progress(self, step: int, total: int, text: str) -> None:
        self.progress.setRange(0, max(1, total))
        self.progress.setValue(min(step, total))
        self.progress.setFormat(text)
        self.progress.setToolTip(text)
