"""`StopsWithWindow`: a panel with a worker of its own calls its `shutdown()` when it is closed as
a window of its own (the main window shuts down its docked panels when it closes). Put it first
in the bases: `class TrainingPanel(StopsWithWindow, QWidget)`."""
from __future__ import annotations


class StopsWithWindow:
    def closeEvent(self, event) -> None:  # noqa: N802
        self.shutdown()
        super().closeEvent(event)
