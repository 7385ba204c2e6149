"""The window shown while the explorer starts (PySide6 alone: it responds within a second and
keeps painting while torch is imported on a worker thread), until the main window takes its place."""
from __future__ import annotations

import importlib
from concurrent.futures import ThreadPoolExecutor

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
        self.progress = QProgressBar(maximum=len(STAGES), textVisible=False, fixedWidth=320)
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
    with ThreadPoolExecutor(1, thread_name_prefix="startup-imports") as pool:
        done = pool.submit(lambda: [importlib.import_module(name) for name in modules])
        loop = QEventLoop()
        poll = QTimer(interval=20)
        poll.timeout.connect(lambda: done.done() and loop.quit())
        poll.start()
        if not done.done():
            loop.exec()
        poll.stop()
        done.result()
