"""The training panel's controls: what to learn, how big a model, where, for how long — and the
transport buttons (start / pause / one step / stop), checkpoint saving, and the progress bar.

Pure widgets: they describe a `TrainingRequest` and emit what was clicked; the panel decides.
"""
from __future__ import annotations

import torch
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from explorer import style
from explorer.eliding_combo import ElidingComboBox
from explorer.panels.training.run_buttons import DEFAULT_STEPS, RunButtons
from explorer.screen import ScreenClass
from model.nn.kinds import MODEL_KINDS as KINDS
from model.train.presets import LECTURE_PRESETS
from model.train.request import (
    BUILTIN_TASKS,
    KIND_TASKS,
    LANGUAGE_MODELS,
    LECTURE,
    MODEL_KINDS,
    MODEL_PRESETS,
    PRESET_LABELS,
    lecture_request,
)

CONTINUE = "continue"
# the "kind" combo's entries: "encoder-decoder", "encoder-only · masked LM", "decoder-only · next-token LM"
KIND_SHORT = {k.name: k.dashed_name + (f" · {LANGUAGE_MODELS[k]}" if k in LANGUAGE_MODELS else "") for k in KINDS.values()}
TSV = "tsv"
DEVICES = (("auto", "auto"), ("cpu", "CPU"), ("cuda", "CUDA"))
ACTIVE_PHASES = ("building", "running", "paused", "finishing")  # a run's settings are fixed in these


def _label(text: str, bold: bool = False) -> QLabel:
    label = QLabel(text)
    label.setFont(style.font(style.BASE_POINT_SIZE, bold=bold))
    return label


def continue_refusal(bundle) -> str | None:
    """Why the loaded model cannot be trained further here, or None if it can."""
    if bundle is None:
        return "No model is loaded"
    if bundle.task.get("pretrained"):
        return "A pretrained model's own training task is not one this trainer has"
    if bundle.task.get("at_scale"):
        return "A model trained at scale (BPE, token batches) continues on the command line: train … --resume"
    if not bundle.model_kind.has_decoder and not bundle.fills_masks:
        return "An encoder-only model is trained as a masked LM, which needs a [MASK] token in its vocabulary"
    return None


class TrainingControls(QWidget):
    """Signals: startClicked, pauseClicked, stepClicked, stopClicked, saveClicked, useClicked, backClicked,
    taskChanged(str) (also when a new kind of model changes which task is chosen)."""

    startClicked = Signal()
    pauseClicked = Signal()
    stepClicked = Signal()
    stopClicked = Signal()
    saveClicked = Signal()
    useClicked = Signal()
    backClicked = Signal()
    taskChanged = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.tsv_path: str | None = None
        self._locked = False
        self._continue_kind: str | None = None
        self._build()

    def _build(self) -> None:
        f = style.font(style.BASE_POINT_SIZE)
        self.task_box = QComboBox()
        for name in BUILTIN_TASKS:
            self.task_box.addItem(name, name)
        self.task_box.addItem("TSV file…", TSV)
        self.task_box.setCurrentIndex(max(0, self.task_box.findData("reverse")))
        self.task_box.setToolTip("A built-in task, or your own UTF-8 'source<TAB>target' file")
        self.task_box.activated.connect(self._on_task_activated)
        self.tokenizer_box = QComboBox()
        self.tokenizer_box.addItems(["char", "word"])
        self.tokenizer_box.setToolTip("How the TSV file's text is split into tokens")
        self.tokenizer_box.setVisible(False)

        self.kind_box = QComboBox()
        for key, text in MODEL_KINDS.items():
            self.kind_box.addItem(KIND_SHORT[key], key)
            self.kind_box.setItemData(self.kind_box.count() - 1, text, Qt.ToolTipRole)
        self.kind_box.setToolTip("The kind of new model: the paper's encoder-decoder, or one of its two descendants "
                                 "(an encoder-only masked LM like BERT, a decoder-only next-token LM like GPT), "
                                 "which learn from a text corpus")
        self.kind_box.currentIndexChanged.connect(self._on_kind_changed)

        self.model_box = ElidingComboBox()
        for name in (*MODEL_PRESETS, LECTURE):
            self.model_box.addItem(PRESET_LABELS[name], name)
        self.model_box.addItem("continue training the loaded model", CONTINUE)
        self.model_box.setToolTip("A new model of a preset size, or a copy of the model the other panels show")
        self.model_box.currentIndexChanged.connect(self._on_model_changed)
        self.model_box.currentIndexChanged.connect(self._apply_lecture)
        self.set_continue_available(None)

        self.device_box = QComboBox()
        for key, text in DEVICES:
            self.device_box.addItem(text, key)
        if not torch.cuda.is_available():  # greyed out, with the reason in the tooltip
            item = self.device_box.model().item(self.device_box.findData("cuda"))
            item.setEnabled(False)
            item.setToolTip("PyTorch sees no CUDA GPU on this machine")
        self.steps_spin = QSpinBox()
        self.steps_spin.setRange(1, 1_000_000)
        self.steps_spin.setSingleStep(500)
        self.steps_spin.setValue(DEFAULT_STEPS["tiny"])
        self.steps_spin.setGroupSeparatorShown(True)
        self.warmup_spin = QSpinBox()
        self.warmup_spin.setRange(1, 100_000)
        self.warmup_spin.setValue(400)
        self.warmup_spin.setToolTip("Steps of linearly rising learning rate before the 1/√step decay (Section 5.3)")
        self.batch_spin = QSpinBox()
        self.batch_spin.setRange(1, 2048)
        self.batch_spin.setValue(64)
        self.batch_spin.setToolTip("Sentence pairs per optimisation step")
        for w in (self.task_box, self.tokenizer_box, self.kind_box, self.model_box, self.device_box, self.steps_spin,
                  self.warmup_spin, self.batch_spin):
            w.setFont(f)
        for spin, width in ((self.steps_spin, 105), (self.warmup_spin, 85), (self.batch_spin, 70)):
            spin.setMaximumWidth(width)  # (a hint sized for 1,000,000 would push the panel wider than its dock)
        for box, chars in ((self.task_box, 7), (self.kind_box, 8), (self.model_box, 6), (self.device_box, 4)):
            box.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
            box.setMinimumContentsLength(chars)

        grid = QGridLayout()  # two rows that fit a dock ~600 px wide
        grid.setHorizontalSpacing(6)
        grid.setVerticalSpacing(4)
        task_row = QHBoxLayout()
        task_row.addWidget(self.task_box, 1)
        task_row.addWidget(self.tokenizer_box)
        fields = (("Task", task_row), ("Kind", self.kind_box), ("Device", self.device_box))
        for col, (text, field) in enumerate(fields):
            grid.addWidget(_label(text), 0, 2 * col)
            if isinstance(field, QHBoxLayout):
                grid.addLayout(field, 0, 2 * col + 1)
            else:
                grid.addWidget(field, 0, 2 * col + 1)
        numbers = QHBoxLayout()  # the size (or the loaded model to continue), then the run's numbers
        numbers.setSpacing(6)
        numbers.addWidget(_label("Model"))
        numbers.addWidget(self.model_box, 1)
        numbers.addSpacing(10)
        for i, (text, spin) in enumerate((("Steps", self.steps_spin), ("Warm-up", self.warmup_spin),
                                          ("Batch", self.batch_spin))):
            if i:
                numbers.addSpacing(10)
            numbers.addWidget(_label(text))
            numbers.addWidget(spin)
        grid.addLayout(numbers, 1, 0, 1, 6)
        grid.setColumnStretch(1, 2)
        grid.setColumnStretch(3, 3)
        grid.setColumnStretch(5, 1)

        self.buttons = b = RunButtons()
        for button, signal in ((b.start_button, self.startClicked), (b.pause_button, self.pauseClicked),
                               (b.step_button, self.stepClicked), (b.stop_button, self.stopClicked),
                               (b.save_button, self.saveClicked), (b.use_button, self.useClicked),
                               (b.back_button, self.backClicked)):
            button.clicked.connect(signal)
        self.start_button, self.pause_button, self.step_button, self.stop_button = (
            b.start_button, b.pause_button, b.step_button, b.stop_button)
        self.save_button, self.use_button, self.back_button, self.progress = (
            b.save_button, b.use_button, b.back_button, b.progress)

        self.settings = QWidget()  # what the run learns, and how: folded away during a run on a short screen
        grid.setContentsMargins(0, 0, 0, 0)
        self.settings.setLayout(grid)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(3)
        lay.addWidget(self.settings)
        lay.addWidget(self.buttons)
        self.buttons.arrange(True)
        self.set_phase("idle", has_model=False)

    def apply_screen_class(self, cls: ScreenClass) -> None:
        """The run's buttons, progress and model buttons in one row on a wide screen, in two rows
        (Start over Save…, Pause over Use this model, …) on a projector or a narrow one."""
        self.buttons.arrange(cls is ScreenClass.WIDE)

    # -- state ---------------------------------------------------------------------------------
    def set_phase(self, phase: str, has_model: bool) -> None:
        """Enable what makes sense: idle / building / running / paused / finishing."""
        active = phase in ACTIVE_PHASES
        self.buttons.set_phase(phase, has_model)
        self._locked = active  # a run's settings are fixed while it runs
        for w in (self.model_box, self.device_box, self.steps_spin, self.warmup_spin, self.batch_spin):
            w.setEnabled(not active)
        self._on_model_changed()

    def fold_settings(self, fold: bool) -> None:
        """Hide the task / model / steps rows (a run's settings are fixed while it runs, and the
        run's message names them): on a short screen their two rows go to the plots."""
        self.settings.setVisible(not fold)

    def set_back(self, name: str, enabled: bool) -> None:
        """“Back to <the session's model>”, enabled while a run's model is shown in its place."""
        self.buttons.set_back(name, enabled)

    def set_model_defaults(self, bundle) -> bool:
        """A new run learns the loaded model's own task with its kind (gpt-facts: facts, decoder-only).
        True if the task shown changed (a model of no built-in task changes nothing)."""
        before = self.task_name()
        kind, task = bundle.config.kind, (bundle.task or {}).get("name")
        # an encoder without a masked-LM head (a pretrained one) has no objective to train here
        if kind in MODEL_KINDS and (bundle.model_kind.has_decoder or bundle.fills_masks):
            self.set_kind(kind)
        if task in BUILTIN_TASKS and task in KIND_TASKS.get(self.kind_box.currentData(), BUILTIN_TASKS):
            self.task_box.setCurrentIndex(self.task_box.findData(task))
            self.tokenizer_box.setVisible(False)
        return self.task_name() != before

    def kind(self) -> str:
        """The kind of model the run trains: the loaded model's own when continuing it."""
        if self.continuing() and self._continue_kind:
            return self._continue_kind
        return self.kind_box.currentData()

    def set_kind(self, kind: str) -> None:
        self.kind_box.setCurrentIndex(max(0, self.kind_box.findData(kind)))

    def _on_kind_changed(self, _index: int = 0) -> None:
        """Only the tasks this kind can learn stay selectable (the variants: a text corpus);
        a task it cannot learn gives way to the first one it can."""
        allowed = KIND_TASKS.get(self.kind_box.currentData(), BUILTIN_TASKS)
        model = self.task_box.model()
        for row in range(self.task_box.count()):
            name = self.task_box.itemData(row)
            ok = allowed is BUILTIN_TASKS or name in allowed  # (a TSV file pairs sources with targets)
            item = model.item(row) if isinstance(model, QStandardItemModel) else None
            if item is not None:
                item.setEnabled(ok)
                item.setToolTip("" if ok else f"a {self.kind_box.currentText()} model learns from a text corpus: "
                                              f"{', '.join(allowed)}")
        if self.task_box.currentData() not in allowed and allowed is not BUILTIN_TASKS:
            self.task_box.setCurrentIndex(max(0, self.task_box.findData(allowed[0])))
            self.tokenizer_box.setVisible(False)
        self.taskChanged.emit(self.task_name())

    def set_continue_available(self, bundle) -> None:
        """Offer 'continue training' only for a model the Trainer can train with its own task: any
        of our kinds (an encoder-only one only as a masked LM, with its [MASK] token); never a
        loaded pretrained model (its task is not one the Trainer has)."""
        index = self.model_box.findData(CONTINUE)
        item = self.model_box.model().item(index) if isinstance(self.model_box.model(), QStandardItemModel) else None
        why = continue_refusal(bundle)
        ok = why is None
        self._continue_kind = bundle.config.kind if ok else None
        self.model_box.setItemText(index, f"continue training “{bundle.name}”" if ok else
                                   "continue training the loaded model (none)")
        if item is not None:
            item.setEnabled(ok)
            item.setToolTip(why or "Train a copy of the model the other panels show, on its own task")
        if not ok and self.model_box.currentData() == CONTINUE:
            self.model_box.setCurrentIndex(0)

    def continuing(self) -> bool:
        return self.model_box.currentData() == CONTINUE

    def task_name(self) -> str:
        return self.task_box.currentData() if self.task_box.currentData() != TSV else "tsv"

    def _on_model_changed(self, _index: int = 0) -> None:
        """Continuing a model trains it on its own task and keeps its kind: the task and kind
        boxes then have nothing to say."""
        free = not self._locked and not self.continuing()
        self.task_box.setEnabled(free)
        self.tokenizer_box.setEnabled(free)
        self.kind_box.setEnabled(free and self.model_box.currentData() != LECTURE)

    def _apply_lecture(self, _index: int = 0) -> None:
        """The lecture preset shows its own steps, warm-up, batch and kind for the chosen task."""
        preset = LECTURE_PRESETS.get(self.task_name())
        if self._locked or self.model_box.currentData() != LECTURE or preset is None:
            return
        for spin, value in ((self.steps_spin, preset.steps), (self.warmup_spin, preset.warmup),
                            (self.batch_spin, preset.batch_size)):
            spin.setValue(value)
        if self.kind_box.currentData() != preset.kind:
            self.set_kind(preset.kind)

    def _on_task_activated(self, _index: int) -> None:
        if self.task_box.currentData() == TSV:
            path, _ = QFileDialog.getOpenFileName(self, "Parallel data (source<TAB>target per line)", "",
                                                  "Tab-separated text (*.tsv *.txt);;All files (*)")
            if path:
                self.set_tsv(path)
            elif self.tsv_path is None:
                self.task_box.setCurrentIndex(max(0, self.task_box.findData("reverse")))
        self.tokenizer_box.setVisible(self.task_box.currentData() == TSV)
        self._apply_lecture()
        self.taskChanged.emit(self.task_name())

    def set_tsv(self, path: str) -> None:
        from pathlib import Path

        self.tsv_path = path
        index = self.task_box.findData(TSV)
        self.task_box.setItemText(index, f"file: {Path(path).name}")
        self.task_box.setItemData(index, path, Qt.ToolTipRole)
        self.task_box.setCurrentIndex(index)
        self.tokenizer_box.setVisible(True)

    def request(self, session_bundle, probe: str, start_paused: bool = False, eval_size: int = 50):
        """The run these controls describe (`session_bundle` is continued when "continue" is chosen)."""
        from model.train.request import TrainingRequest
        from model.train.trainer import TrainConfig

        train = TrainConfig(steps=self.steps_spin.value(), batch_size=self.batch_spin.value(),
                            warmup=self.warmup_spin.value(), device=self.device_box.currentData(), eval_size=eval_size)
        preset = self.model_box.currentData()
        request = TrainingRequest(task=self.task_name(), tsv_path=self.tsv_path if self.task_name() == "tsv" else None,
                               tsv_tokenizer=self.tokenizer_box.currentText(),
                               preset=preset if preset != CONTINUE else "tiny", kind=self.kind(),
                               continue_from=session_bundle if preset == CONTINUE else None, train=train,
                               probe=probe, snapshots=True, start_paused=start_paused)
        if preset == LECTURE and request.tsv_path is None and request.task in LECTURE_PRESETS:
            return lecture_request(request)
        return request

    def set_progress(self, step: int, total: int, text: str) -> None:
        self.buttons.set_progress(step, total, text)


__all__ = ["ACTIVE_PHASES", "TrainingControls", "continue_refusal", "CONTINUE", "TSV", "DEFAULT_STEPS"]
