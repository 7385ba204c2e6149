"""`StopsWithWindow`: a panel with a worker of its own calls its `shutdown()` when its window
closes too (a dock's panel gets no closeEvent then). Put it first in the bases:
`class TrainingPanel(StopsWithWindow, QWidget)`."""
from __future__ import annotations

from PySide6.QtCore import QEvent


class StopsWithWindow:
    _watched = None  # the top-level window whose Close stops the worker

    def showEvent(self, event) -> None:  # noqa: N802
        super().showEvent(event)
        top = self.window()
        if top is not self and top is not self._watched:
            top.installEventFilter(self)  # the main window closing must stop the worker too
            self._watched = top

    def eventFilter(self, obj, event) -> bool:  # noqa: N802
        if obj is self._watched and event.type() == QEvent.Type.Close:
            self.shutdown()
        return False

    def closeEvent(self, event) -> None:  # noqa: N802
        self.shutdown()
        super().closeEvent(event)
