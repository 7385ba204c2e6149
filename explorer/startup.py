"""The window shown while the explorer starts (PySide6 alone: it responds within a second and
keeps painting while torch is imported on a worker thread), until the main window takes its place."""
from __future__ import annotations

import importlib
import threading

from PySide6.QtCore import QEventLoop, Qt, QTimer
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QLabel, QProgressBar, QVBoxLayout, QWidget

STAGES = ("Loading PyTorch…", "Building the panels…", "Loading the model…")


class StartupWindow(QWidget):
    """Title, a line saying what is loading, and a progress bar over STAGES."""

    def __init__(self, width: int = 1280, height: int = 800):
        super().__init__()
        self.setWindowTitle("Transformer Explorer — Attention Is All You Need")
        title = QLabel("Transformer Explorer")
        font = QFont(title.font())
        font.setPointSizeF(font.pointSizeF() * 2)
        title.setFont(font)
        subtitle = QLabel("Attention Is All You Need (Vaswani et al., 2017)")
        self.status = QLabel(STAGES[0])
        self.progress = QProgressBar()
        self.progress.setRange(0, len(STAGES))
        self.progress.setTextVisible(False)
        self.progress.setFixedWidth(320)
        column = QVBoxLayout(self)
        column.addStretch(1)
        for widget in (title, subtitle, self.status, self.progress):
            column.addWidget(widget, 0, Qt.AlignHCenter)
        column.addStretch(1)
        self.resize(width, height)

    def stage(self, index: int) -> None:
        """Show STAGES[index] as what is loading now, and paint it at once."""
        self.status.setText(STAGES[index])
        self.progress.setValue(index)
        self.repaint()


def import_in_background(*modules: str) -> None:
    """Import `modules` on a worker thread while the Qt event loop runs; raise what it raised."""
    done, errors = threading.Event(), []

    def work() -> None:
        try:
            for name in modules:
                importlib.import_module(name)
        except BaseException as exc:  # noqa: BLE001 - handed to the GUI thread below
            errors.append(exc)
        finally:
            done.set()

    threading.Thread(target=work, name="startup-imports", daemon=True).start()
    loop = QEventLoop()
    poll = QTimer(interval=20)
    poll.timeout.connect(lambda: done.is_set() and loop.quit())
    poll.start()
    if not done.is_set():
        loop.exec()
    poll.stop()
    if errors:
        raise errors[0]
