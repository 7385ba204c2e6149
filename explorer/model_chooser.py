"""The model chooser: the bundled checkpoints (each with what it does), the installed pretrained
models, "Open checkpoint folder…"; it names the session's own model (after a failed load too)."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtWidgets import QFileDialog

from explorer.eliding_combo import ElidingComboBox
from explorer.runner import bundled_checkpoints, pretrained_models
from model.interpret.input_texts import model_description

OPEN_ITEM = "Open checkpoint folder…"
PRETRAINED_SUFFIX = " (pretrained)"
LOAD_ROLE = Qt.UserRole + 1  # what `Runner.load` is given for a row, when not its folder


class ModelChooser(ElidingComboBox):
    """Choosing a row loads that model (the session's own again: shown in every panel again)."""

    def __init__(self, state, runner, parent=None):
        super().__init__(parent, minimumWidth=150, minimumContentsLength=12,  # closed: short (the source field needs room)
                         toolTip="The model to explore: a bundled checkpoint, an installed pretrained model, "
                                 "or open a folder (ours, or a Hugging Face folder with config.json)")
        self.state, self.runner = state, runner
        self._listed = None  # the session's model the rows were last filled for
        self.activated.connect(self._model_chosen)
        runner.failed.connect(lambda *_: self.list_models(again=True))  # a failed load: the model still in use
        self._fill_models()

    def list_models(self, again: bool = False) -> None:
        """The rows again, the session's model selected (not for a training run's copies)."""
        if self.state.session.bundle is not None and (again or self.state.session.bundle is not self._listed):
            self._listed = self.state.session.bundle
            self._fill_models()
            self._select_current_model()

    def _fill_models(self) -> None:
        with QSignalBlocker(self):
            self.clear()
            for name, path in sorted(bundled_checkpoints().items()):
                self.addItem(model_description(name, path), str(path))
                self.setItemData(self.count() - 1, name, Qt.ToolTipRole)
            pretrained = sorted(pretrained_models().items())
            if pretrained:
                self.insertSeparator(self.count())
            for name, path in pretrained:  # real models (BERT / Marian) loaded into our Transformer
                self.addItem(name + PRETRAINED_SUFFIX, str(path))
                self.setItemData(self.count() - 1, name, LOAD_ROLE)
                self.setItemData(self.count() - 1, f"Pretrained, from {path}", Qt.ToolTipRole)
            self.insertSeparator(self.count())
            self.addItem(OPEN_ITEM, None)
            metrics = self.fontMetrics()
            widest = max(metrics.horizontalAdvance(self.itemText(i)) for i in range(self.count()))
            self.view().setMinimumWidth(widest + 40)

    def _model_chosen(self, row: int) -> None:
        if self.itemText(row) == OPEN_ITEM:
            self.open_folder()
            return
        path = self.itemData(row)
        own = self.state.session.bundle
        if path and own is not None and str(own.path or "") == path:
            if self.state.session.shown_model is not None:
                self.state.session.show_model(None)  # choosing the session's model again: show it
            return
        key = self.itemData(row, LOAD_ROLE) or path
        if key:
            self.runner.load(key)

    def open_folder(self) -> None:
        """Load a folder the user picks (the runner tells a Hugging Face folder from ours)."""
        folder = QFileDialog.getExistingDirectory(self, "Open a checkpoint folder (ours, or a Hugging Face model)")
        if folder:
            self.runner.load(folder)
        else:
            self._select_current_model()

    def _select_current_model(self) -> None:
        bundle = self.state.session.bundle  # the session's own, never a training run's copy shown
        if bundle is None:
            return
        with QSignalBlocker(self):
            for row in range(self.count()):
                data = self.itemData(row)
                if data and bundle.path and Path(data).resolve() == Path(bundle.path).resolve():
                    self.setCurrentIndex(row)
                    break
            else:  # an opened folder or an untrained model: list it at the top
                self.insertItem(0, bundle.name, str(bundle.path) if bundle.path else None)
                self.setCurrentIndex(0)
