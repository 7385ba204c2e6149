"""`JobBar`: a progress bar that follows a `LatestJob` — shown while it runs, filled by the
(done, total, what) reports its work sends, each `what` handed to the panel's `say`; the
button that starts the work, if given, is disabled meanwhile."""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QProgressBar, QWidget

from explorer.latest_job import LatestJob


class JobBar(QProgressBar):
    def __init__(self, job: LatestJob, say: Callable[[str], None] | None = None, button: QWidget | None = None):
        super().__init__(textVisible=False, maximum=1, visible=False)
        self.say, self.button = say, button
        job.busy.connect(self.on_busy)
        job.progress.connect(self.on_report)  # (bound methods: queued from a worker thread, dropped with the bar)

    def on_busy(self, busy: bool) -> None:
        if busy:
            self.setValue(0)
        self.setVisible(busy)
        if self.button is not None:
            self.button.setEnabled(not busy)

    def on_report(self, report: tuple[int, int, str]) -> None:
        done, total, what = report
        self.setRange(0, max(total, 1))
        self.setValue(done)
        if self.say is not None:
            self.say(what)
