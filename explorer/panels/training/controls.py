"""The training panel's controls: what to learn, how big a model, where, for how long
(`model.train.run_setup.RunSetup`), the run's buttons and progress, and what to do with the
trained model. Pure widgets: they enable what the run's phase allows; the panel decides."""
from __future__ import annotations

from pathlib import Path

import torch
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QLabel,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QStyle,
    QWidget,
)
from superqt import QElidingLabel

from explorer import style
from explorer.eliding_combo import ElidingComboBox
from explorer.panels.layouts import column, row
from model.train import run_setup
from model.train.presets import LECTURE_PRESETS
from model.train.request import BUILTIN_TASKS, LECTURE, MODEL_KINDS, MODEL_PRESETS, PRESET_LABELS
from model.train.steering import ACTIVE_PHASES, phase_actions

BUTTONS = (  # attribute, text, icon, tooltip, the `phase_actions` entry that enables it, the panel's slot
    ("start_button", "Start", QStyle.SP_MediaPlay, "Start training (or resume)", "start", "start_or_resume"),
    ("pause_button", "Pause", QStyle.SP_MediaPause, "Pause after this step", "pause", "pause"),
    ("step_button", "Step", QStyle.SP_MediaSkipForward, "Exactly one optimisation step, then pause", "step",
     "single_step"),
    ("stop_button", "Stop", QStyle.SP_MediaStop,
     "End the run; the other panels show the loaded model again (“Use this model” keeps the trained one)", "stop",
     "stop"),
    ("save_button", "Save…", None, "Save a checkpoint: the current weights, written to a folder", "keep",
     "choose_save_folder"),
    ("use_button", "Use this model", None,
     "Make the trained model (a copy of it now) the session's model, in place of the loaded one", "keep", "use_model"),
    ("back_button", "Back to the loaded model", None,
     "Show the session's own model in the other panels again (the run goes on)", None, "back_to_session_model"),
)
KIND_TIP = ("The kind of new model: the paper's encoder-decoder, or one of its two descendants (an encoder-only "
            "masked LM like BERT, a decoder-only next-token LM like GPT), which learn from a text corpus")
COMBOS = {  # attribute: items (text, data, item tooltip), tooltip, least characters shown
    "task_box": ([(n, n, None) for n in BUILTIN_TASKS] + [("TSV file…", run_setup.TSV, None)],
                 "A built-in task, or your own UTF-8 'source<TAB>target' file", 7),
    "tokenizer_box": ([("char", "char", None), ("word", "word", None)], "How the TSV file's text is split into tokens",
                      4),
    "kind_box": ([(run_setup.KIND_SHORT[k], k, text) for k, text in MODEL_KINDS.items()], KIND_TIP, 8),
    "model_box": ([(PRESET_LABELS.get(n, ""), n, None) for n in (*MODEL_PRESETS, LECTURE, run_setup.CONTINUE)],
                  "A new model of a preset size, or a copy of the model the other panels show", 6),
    "device_box": ([(text, key, None) for key, text in run_setup.DEVICES],
                   "Where the run trains (auto: a CUDA GPU if PyTorch sees one, else the CPU)", 4),
}
SPINS = {  # attribute: top, single step, most width, tooltip
    "steps_spin": (1_000_000, 500, 105, "Optimisation steps of the run"),
    "warmup_spin": (100_000, 1, 85, "Steps of linearly rising learning rate before the 1/√step decay (Section 5.3)"),
    "batch_spin": (2048, 1, 70, "Sentence pairs per optimisation step"),
}
KNOBS = (  # the settings' two rows: row, label (none: the one before's), attribute, its `RunSetup` field, stretch
    (0, "Task", "task_box", "task", 2), (0, None, "tokenizer_box", "tsv_tokenizer", 0),
    (0, "Kind", "kind_box", "kind", 3), (0, "Device", "device_box", "device", 1),
    (1, "Model", "model_box", "preset", 1), (1, "Steps", "steps_spin", "steps", 0),
    (1, "Warm-up", "warmup_spin", "warmup", 0), (1, "Batch", "batch_spin", "batch_size", 0),
)
SHOW_OTHERS_TIP = ("Show a copy of the model being trained (about once a second) in every other panel, on the "
                   "session's text, in place of the loaded model; it comes back when the run ends, on “Back to …”, "
                   "or when this is turned off")
def _combo(value, items, tip: str, chars: int) -> QComboBox:
    """A box of (text, data, item tooltip) showing `value`'s at the body size, `chars` characters
    wide at least; a long entry shows its name alone, then ends in "…"."""
    box = ElidingComboBox()
    for text, data, item_tip in items:
        box.addItem(text, data)
        box.setItemData(box.count() - 1, item_tip, Qt.ToolTipRole)
    box.setCurrentIndex(box.findData(value))
    box.setToolTip(tip)
    box.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
    box.setMinimumContentsLength(chars)
    return style.set_font_role(box, "body")


def choose(box: QComboBox, data) -> None:
    """The item holding `data` (else the first)."""
    box.setCurrentIndex(max(0, box.findData(data)))


def _spin(value: int, top: int, step: int, most: int, tip: str) -> QSpinBox:
    spin = QSpinBox(minimum=1, maximum=top, value=value, singleStep=step, toolTip=tip)
    spin.setGroupSeparatorShown(True)
    spin.setMaximumWidth(most)  # (a hint sized for its top value would widen the panel past its dock)
    return style.set_font_role(spin, "body")


class TrainingControls(QWidget):
    """Signal: taskChanged(name) (also when a new kind of model changes which task is chosen)."""

    taskChanged = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.tsv_path: str | None = None
        self._locked = False  # a run's settings are fixed while it runs
        self._continue_kind: str | None = None
        rows, defaults = ([], []), run_setup.RunSetup()
        self.knobs: dict[str, QComboBox | QSpinBox] = {}  # `RunSetup` field → its knob
        for at, text, name, field, stretch in KNOBS:  # the knobs, declared once, at a new run's settings
            value = getattr(defaults, field)
            widget = _combo(value, *COMBOS[name]) if name in COMBOS else _spin(value, *SPINS[name])
            setattr(self, name, widget)
            self.knobs[field] = widget
            if text is not None:
                rows[at].append(style.set_font_role(QLabel(text), "body"))
            rows[at].append((widget, stretch))
        self.settings = QWidget()  # folded away during a run on a short screen
        layouts = [row(*items) for items in rows]
        for layout in layouts:
            layout.setSpacing(8)  # room between one knob and the next label
        column(*layouts, parent=self.settings, margins=0).setSpacing(4)
        self.task_box.activated.connect(self._on_task_activated)
        self.task_box.currentIndexChanged.connect(
            lambda _i: self.tokenizer_box.setVisible(self.task_box.currentData() == run_setup.TSV))
        self.tokenizer_box.setVisible(False)
        self.kind_box.currentIndexChanged.connect(self._on_kind_changed)
        self.model_box.currentIndexChanged.connect(self._on_model_changed)
        self.model_box.currentIndexChanged.connect(self._apply_lecture)
        self.set_continue_available(None)
        if not torch.cuda.is_available():  # greyed out, with the reason in the tooltip
            item = self.device_box.model().item(self.device_box.findData("cuda"))
            item.setEnabled(False)
            item.setToolTip("PyTorch sees no CUDA GPU on this machine")

        for name, text, icon, tip, _action, _slot in BUTTONS:
            button = QPushButton(text, toolTip=tip, minimumHeight=32)
            if icon is not None:
                button.setIcon(self.style().standardIcon(icon))
            setattr(self, name, style.set_font_role(button, "heading" if text in ("Start", "Pause") else "body"))
        self.back_button.setEnabled(False)
        self.show_others = style.set_font_role(QCheckBox("Show in other panels", checked=True, toolTip=SHOW_OTHERS_TIP),
                                               "body")
        self.settings_button = style.set_font_role(QPushButton(
            "Settings", checkable=True, checked=True, toolTip="Show or fold away the next run's settings (a short "
                                                              "screen folds them when a run begins)"), "body")
        # the run's line beside the bar, elided (a bar's own text would wrap and be clipped); whole in the tooltips
        self.progress = QProgressBar(textVisible=False, maximumHeight=8)
        self.progress_line = style.set_font_role(QElidingLabel(), "heading")
        self.run_state = QWidget()  # the run's line over a thin bar: one row's height
        column(self.progress_line, self.progress, parent=self.run_state, margins=0).setSpacing(1)
        self.set_progress(0, run_setup.DEFAULT_STEPS, "not started")
        # the run's buttons over the model's, the run's line beside them
        column(self.settings, row(self.start_button, self.pause_button, self.step_button, self.stop_button,
                                  self.show_others, None, self.settings_button),
               row(self.save_button, self.use_button, self.back_button, (self.run_state, 1)),
               parent=self, margins=0).setSpacing(3)
        self.set_phase("idle", has_model=False)

    def connect_buttons(self, panel) -> None:
        """Each button to its slot on the panel (`BUTTONS`)."""
        for name, _text, _icon, _tip, _action, slot in BUTTONS:
            getattr(self, name).clicked.connect(getattr(panel, slot))

    def set_phase(self, phase: str, has_model: bool) -> None:
        """Enable what makes sense in the run's phase (`phase_actions`)."""
        self._locked = phase in ACTIVE_PHASES
        for w in (self.model_box, self.device_box, self.steps_spin, self.warmup_spin, self.batch_spin):
            w.setEnabled(not self._locked)
        self._on_model_changed()
        self.start_button.setText("Resume" if phase == "paused" else "Start")
        actions = phase_actions(phase, has_model)
        for name, _text, _icon, _tip, action, _slot in BUTTONS:
            if action is not None:
                getattr(self, name).setEnabled(actions[action])

    def set_back(self, name: str, enabled: bool) -> None:
        """“Back to <the session's model>”, enabled while a run's model is shown in its place."""
        self.back_button.setText(f"Back to {name}" if name else "Back to the loaded model")
        self.back_button.setEnabled(enabled)

    def set_progress(self, step: int, total: int, text: str) -> None:
        """The bar at `step` of `total`; the run's line beside it, in its format and both tooltips."""
        self.progress.setRange(0, max(1, total))
        self.progress.setValue(min(step, total))
        self.progress.setFormat(text)
        self.progress_line.setText(text)
        for w in (self.progress, self.progress_line):
            w.setToolTip(text)

    def set_model_defaults(self, bundle) -> bool:
        """A new run learns the loaded model's own task with its kind (`model_defaults`). True if
        the task shown changed."""
        before = self.task_name()
        kind, task = run_setup.model_defaults(bundle, self.kind_box.currentData())
        if kind is not None:
            choose(self.kind_box, kind)
        if task is not None:
            choose(self.task_box, task)
        return self.task_name() != before

    def kind(self) -> str:
        """The kind of model the run trains: the loaded model's own when continuing it."""
        return self._continue_kind if self.continuing() and self._continue_kind else self.kind_box.currentData()

    def _on_kind_changed(self, _index: int = 0) -> None:
        """Only the tasks this kind can learn stay selectable; a task it cannot learn gives way."""
        kind = self.kind_box.currentData()
        for index in range(self.task_box.count()):
            why = run_setup.task_refusal(kind, self.task_box.itemData(index))
            item = self.task_box.model().item(index)
            item.setEnabled(why is None)
            item.setToolTip(why or "")
        task = run_setup.fitting_task(kind, self.task_box.currentData())
        if task != self.task_box.currentData():
            choose(self.task_box, task)
        self.taskChanged.emit(self.task_name())

    def set_continue_available(self, bundle) -> None:
        """Offer 'continue training' only for a model the Trainer can train (`continue_choice`)."""
        index = self.model_box.findData(run_setup.CONTINUE)
        text, tip, self._continue_kind = run_setup.continue_choice(bundle)
        self.model_box.setItemText(index, text)
        item = self.model_box.model().item(index)
        item.setEnabled(self._continue_kind is not None)
        item.setToolTip(tip)
        if self._continue_kind is None and self.continuing():
            self.model_box.setCurrentIndex(0)

    def continuing(self) -> bool:
        return self.model_box.currentData() == run_setup.CONTINUE

    def task_name(self) -> str:
        """A built-in task's name, or "tsv" (`run_setup.TSV`) for a file of pairs."""
        return self.task_box.currentData()

    def _on_model_changed(self, _index: int = 0) -> None:
        """Continuing a model trains it on its own task with its kind: those boxes have nothing to say."""
        free = not self._locked and not self.continuing()
        self.task_box.setEnabled(free)
        self.tokenizer_box.setEnabled(free)
        self.kind_box.setEnabled(free and self.model_box.currentData() != LECTURE)

    def _apply_lecture(self, _index: int = 0) -> None:
        """The lecture preset shows its own steps, warm-up, batch and kind for the chosen task."""
        preset = LECTURE_PRESETS.get(self.task_name())
        if self._locked or self.model_box.currentData() != LECTURE or preset is None:
            return
        self.steps_spin.setValue(preset.steps)
        self.warmup_spin.setValue(preset.warmup)
        self.batch_spin.setValue(preset.batch_size)
        choose(self.kind_box, preset.kind)

    def _on_task_activated(self, _index: int) -> None:
        if self.task_box.currentData() == run_setup.TSV:
            path, _ = QFileDialog.getOpenFileName(self, "Parallel data (source<TAB>target per line)", "",
                                                  "Tab-separated text (*.tsv *.txt);;All files (*)")
            if path:
                self.set_tsv(path)
            elif self.tsv_path is None:
                choose(self.task_box, "reverse")
        self._apply_lecture()
        self.taskChanged.emit(self.task_name())

    def set_tsv(self, path: str) -> None:
        self.tsv_path = path
        index = self.task_box.findData(run_setup.TSV)
        self.task_box.setItemText(index, f"file: {Path(path).name}")
        self.task_box.setItemData(index, path, Qt.ToolTipRole)
        self.task_box.setCurrentIndex(index)

    def setup(self) -> run_setup.RunSetup:
        """The settings shown (the kind: the loaded model's own when continuing it)."""
        shown = {field: knob.currentData() if isinstance(knob, QComboBox) else knob.value()
                 for field, knob in self.knobs.items()}
        return run_setup.RunSetup(**{**shown, "kind": self.kind()}, tsv_path=self.tsv_path)


__all__ = ["TrainingControls"]
