"""`Panel`: the QWidget a panel builds on: the session it observes (`follow`, drawn when the panel
can be seen: `explorer.when_seen`) and its one job off the GUI thread (`add_job`), which figures
and tests wait for and a closing window stops."""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QWidget

from explorer.latest_job import LatestJob
from explorer.panels.job_bar import JobBar
from explorer.when_seen import WhenSeen


class Panel(QWidget):
    job: LatestJob | None = None
    bar: JobBar | None = None
    seen: WhenSeen | None = None

    def __init__(self, state, parent=None):
        super().__init__(parent)
        self.state = state

    def follow(self, bundle: Callable | None = None, frame: Callable | None = None,
               result: Callable | None = None) -> None:
        """Call each handler on its session change, and now with what the session has. A change
        while the panel is hidden in a shown window is drawn when the panel is shown."""
        state = self.state
        if self.seen is None:
            self.seen = WhenSeen(self)
        for signal, slot, name in ((state.bundleChanged, bundle, "bundle"), (state.frameChanged, frame, "frame"),
                                   (state.resultChanged, result, "result")):
            if slot is not None:
                self.seen.follow(signal, slot, current=lambda name=name: getattr(self.state, name))
                if getattr(state, name) is not None:
                    slot(getattr(state, name))

    def draw_now(self) -> None:
        """Draw the session's changes held back while the panel was hidden (figures, tests)."""
        if self.seen is not None:
            self.seen.draw_now()

    def add_job(self, done: Callable, failed: Callable | None = None, synchronous: bool = False,
                job: LatestJob | None = None, progress_to: Callable[[str], None] | None = None,
                button: QWidget | None = None) -> LatestJob:
        """The panel's `LatestJob` (or `job`), its results to `done` and failures to `failed`; with
        `progress_to`, `self.bar` shows its progress while it runs, each report's text handed to
        `progress_to` (`button`, which starts it, disabled meanwhile)."""
        self.job = job if job is not None else LatestJob(self, synchronous)
        if progress_to is not None:
            self.bar = JobBar(self.job, progress_to, button)
        self.job.done.connect(done)
        if failed is not None:
            self.job.failed.connect(failed)
        return self.job

    def tell_failure(self, message: str) -> None:
        """A failed job's message in the panel's `status` line and the window's message bar."""
        self.status.setText(message)
        self.state.inform(message, "warning")

    def wait_until_drawn(self, msecs: int = 60000) -> bool:
        """Block until the panel's work is done and drawn (headless figures, tests)."""
        self.draw_now()
        return self.job.wait(msecs) if self.job is not None else True

    def shutdown(self) -> None:
        if self.job is not None:
            self.job.stop()

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        self.shutdown()
        super().closeEvent(event)
