"""File → Export panel…: the dialog that asks which dock, what size, which format, where."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSize
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
)

from explorer import export
from explorer.panel_dock import full_title


class ExportDialog(QDialog):
    """File → Export panel…: which dock, what size, which format, where."""

    def __init__(self, window, parent=None):
        super().__init__(parent or window)
        self.setWindowTitle("Export a panel")
        self.panel = QComboBox()
        for name, dock in window.docks.items():
            self.panel.addItem(full_title(dock), name)
        self.width_box = QSpinBox(minimum=export.MIN_SIDE, maximum=export.MAX_SIDE, value=1920, suffix=" px")
        self.height_box = QSpinBox(minimum=export.MIN_SIDE, maximum=export.MAX_SIDE, value=1080, suffix=" px")
        self.format = QComboBox()
        self.format.addItem("PNG (bitmap)", "png")
        self.format.addItem("SVG (vector)", "svg")
        self.path = QLineEdit(str(Path.home() / "panel.png"))
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        self.format.currentIndexChanged.connect(self._suffix)
        size_row, path_row = QHBoxLayout(), QHBoxLayout()
        size_row.addWidget(self.width_box)
        size_row.addWidget(QLabel("×"))
        size_row.addWidget(self.height_box)
        path_row.addWidget(self.path, 1)
        path_row.addWidget(browse)
        form = QFormLayout(self)
        form.addRow("Panel", self.panel)
        form.addRow("Size", size_row)
        form.addRow("Format", self.format)
        form.addRow("File", path_row)
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def choice(self) -> tuple[str, Path, QSize, str]:
        return (self.panel.currentData(), Path(self.path.text()),
                QSize(self.width_box.value(), self.height_box.value()), self.format.currentData())

    def _suffix(self) -> None:
        self.path.setText(str(Path(self.path.text()).with_suffix("." + self.format.currentData())))

    def _browse(self) -> None:
        fmt = self.format.currentData()
        path, _ = QFileDialog.getSaveFileName(self, "Export to", self.path.text(), f"{fmt.upper()} (*.{fmt})")
        if path:
            self.path.setText(path)
