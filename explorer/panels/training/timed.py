"""`--train-seconds N`: train in the Training panel for N seconds before a headless figure is
taken, with the event loop running (the run is the panel's own, steered as a user would)."""
from __future__ import annotations

from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication

START_TIMEOUT = 60.0  # s: --train-seconds waits at most this long for the first step


def train_for(panel, seconds: float) -> int:
    """Headless use (`--train-seconds`): train for `seconds` with the event loop running, then
    stop, wait for the worker and deliver its last signals. Returns the steps trained.

    The seconds count from the first trained step (building the model and its first batch
    can take seconds on a busy machine; the figure must show a run that really trained),
    waiting at most START_TIMEOUT for it."""
    if panel.run is None:
        panel.start()
    elif panel.phase == "paused":
        panel.resume()
    panel._train_loop = loop = QEventLoop()
    started = panel.step
    waiting = QTimer(panel, interval=50)

    def first_step() -> None:
        if panel.step > started:
            waiting.stop()
            QTimer.singleShot(int(seconds * 1000), loop.quit)

    waiting.timeout.connect(first_step)
    waiting.start()
    QTimer.singleShot(int((START_TIMEOUT + seconds) * 1000), loop.quit)
    loop.exec()  # ends early if the run finishes (all steps) or cannot start
    waiting.stop()
    waiting.deleteLater()
    panel._train_loop = None
    run = panel.run
    if run is not None:
        panel.stop()
        run.join()
    for _ in range(5):  # queued rows, the offered model, `finished`
        QApplication.processEvents()
    return panel.step
