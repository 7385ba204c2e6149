"""`LatestJob`: model work off the GUI thread (the runner's, a panel's own), one job at a time on
superqt's worker thread; a queued job is replaced by a newer one and only the newest result
reaches `done`. Expected failures arrive as `failed(message)`; anything else also prints its
traceback. A generator function's yields arrive as `progress`, its return value as `done`."""
from __future__ import annotations

import inspect
import traceback
from collections.abc import Callable

import shiboken6
from PySide6.QtCore import QCoreApplication, QElapsedTimer, QObject, QThreadPool, Signal
from superqt.utils import create_worker

EXPECTED = (ValueError, RuntimeError, OSError, KeyError)


class LatestJob(QObject):
    """Signals: done(result), failed(message), busy(bool), progress(what a generator yielded)."""

    done = Signal(object)
    progress = Signal(object)
    failed = Signal(str)
    busy = Signal(bool)
    expected_errors = EXPECTED  # failures told in a sentence; anything else also prints its traceback

    def __init__(self, parent: QObject | None = None, synchronous: bool = False):
        super().__init__(parent)
        self.synchronous = synchronous  # tests and figures: run on the calling thread, done when `submit` returns
        self._latest = 0
        self._queued: tuple[int, Callable[[], object]] | None = None
        self._worker = None
        self._closing = False  # (close) nothing new starts

    def submit(self, fn: Callable[[], object]) -> int:
        """Run `fn` off the GUI thread; a queued, not yet started job is replaced (it is stale)."""
        self._latest += 1
        self._queued = (self._latest, fn)
        if self._worker is None:
            self._start_next()
        return self._latest

    def report(self, done: int, total: int, what: str) -> None:
        """A progress callback for work that takes one (any thread): arrives as `progress`."""
        self.progress.emit((done, total, what))

    def stop(self) -> None:
        """Forget what is queued and drop what runs (a generator ends at its next report): the
        panel is closing, or its input is gone."""
        self._latest += 1
        self._queued = None
        if self._worker is not None:
            self._worker.quit()

    def close(self, msecs: int) -> bool:
        """The window closes: drop what is queued, deliver the running job's result if it ends
        within `msecs` (starting nothing after it), else drop it and forget it (later jobs start at
        once). True when none was left running."""
        self._queued = None
        self._closing = True
        try:
            done = self.wait(msecs)
        finally:
            self._closing = False
        if not done:
            self.stop()
            self._worker.finished.disconnect(self._on_finished)
            self._worker = None
            self.busy.emit(False)
        return done

    @property
    def running(self) -> bool:
        return self._worker is not None or self._queued is not None

    def wait(self, msecs: int = 60000) -> bool:
        """Block (processing events) until every job is done and delivered: figures and tests."""
        clock = QElapsedTimer()
        clock.start()
        while self.running and clock.elapsed() < msecs:
            QThreadPool.globalInstance().waitForDone(20)
            QCoreApplication.sendPostedEvents()
            QCoreApplication.processEvents()
        return not self.running

    def _start_next(self) -> None:
        job, self._queued = self._queued, None
        if job is None or self._closing:
            self.busy.emit(False)
            return
        request, fn = job
        self.busy.emit(True)
        worker = create_worker(_released(fn), _start_thread=False, _ignore_errors=True)
        worker.returned.connect(lambda result: self._on_done(request, result))
        if hasattr(worker, "yielded"):  # a generator function: its reports, while it is the newest
            worker.yielded.connect(lambda report: self._on_progress(request, report))
        worker.errored.connect(lambda exc: self._on_failed(request, exc))
        worker.finished.connect(self._on_finished)
        self._worker = worker
        worker.run() if self.synchronous else worker.start()  # (run: on this thread, signals delivered at once)

    def _on_finished(self) -> None:
        if not shiboken6.isValid(self):  # the panel closed while its job ran: nobody to tell
            return
        self._worker = None
        self._start_next()

    def _on_progress(self, request: int, report) -> None:
        if request == self._latest and shiboken6.isValid(self):
            self.progress.emit(report)

    def _on_done(self, request: int, result) -> None:
        if request == self._latest and shiboken6.isValid(self):
            self.done.emit(result)

    def _on_failed(self, request: int, exc: BaseException) -> None:
        exc = exc.args[0] if isinstance(exc, _Raised) else exc
        expected = isinstance(exc, self.expected_errors)
        if not expected:
            traceback.print_exception(exc)
        if request == self._latest and shiboken6.isValid(self):
            self.failed.emit(str(exc) if expected else f"{type(exc).__name__}: {exc}")


class _Raised(Exception):
    """A generator job's RuntimeError (torch's errors are), carried past superqt to `failed`."""


def _released(fn: Callable[[], object]) -> Callable[[], object]:
    """`fn`, let go of as it starts: a finished worker that superqt still holds (until its signals'
    cycle is collected) keeps nothing `fn` closed over alive, such as a replaced model."""
    held = [fn]
    if inspect.isgeneratorfunction(fn):
        def generator():
            try:
                return (yield from held.pop()())
            except RuntimeError as exc:  # superqt ends a generator on its RuntimeError without a signal
                raise _Raised(exc) from exc
        return generator

    def call():
        return held.pop()()
    return call


__all__ = ["LatestJob"]
