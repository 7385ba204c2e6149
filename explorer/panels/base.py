"""`Panel`: the QWidget a panel builds on: the session it observes (`follow`) and its one job off
the GUI thread (`add_job`), which figures and tests wait for and a closing window stops."""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QWidget

from explorer.latest_job import LatestJob


class Panel(QWidget):
    job: LatestJob | None = None

    def __init__(self, state, parent=None):
        super().__init__(parent)
        self.state = state

    def follow(self, bundle: Callable | None = None, frame: Callable | None = None,
               result: Callable | None = None) -> None:
        """Call each handler on its session change, and now with what the session has."""
        state = self.state
        for signal, slot, now in ((state.bundleChanged, bundle, state.bundle), (state.frameChanged, frame, state.frame),
                                  (state.resultChanged, result, state.result)):
            if slot is not None:
                signal.connect(slot)
                if now is not None:
                    slot(now)

    def add_job(self, done: Callable, failed: Callable | None = None, synchronous: bool = False,
                job: LatestJob | None = None) -> LatestJob:
        """The panel's `LatestJob` (or `job`), its results to `done` and failures to `failed`."""
        self.job = job if job is not None else LatestJob(self, synchronous)
        self.job.done.connect(done)
        if failed is not None:
            self.job.failed.connect(failed)
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)
        return self.job

    def tell_failure(self, message: str) -> None:
        """A failed job's message in the panel's `status` line and the window's message bar."""
        self.status.setText(message)
        self.state.inform(message, "warning")

    def wait_until_drawn(self, msecs: int = 60000) -> bool:
        """Block until the panel's work is done and drawn (headless figures, tests)."""
        return self.job.wait(msecs) if self.job is not None else True

    def shutdown(self) -> None:
        if self.job is not None:
            self.job.stop()

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        self.shutdown()
        super().closeEvent(event)
