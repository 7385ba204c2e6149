"""`TrainingThreads`: a shorter GIL switch interval while a training thread runs.

A training thread runs Python between its torch ops, holding the GIL. Each time the GUI thread
comes back into Python (a slot, an item's `paint`, a timer) while the trainer holds the GIL, it
waits until the trainer is made to drop it: up to the switch interval (5 ms by default). A frame
that calls into Python a hundred times could wait that long a hundred times. While any training
thread runs, the interval is SWITCH_INTERVAL instead, so such a wait is short; the trainer loses
little (its ops release the GIL anyway). The old interval comes back when the last run ends.
"""
from __future__ import annotations

import sys
import threading

SWITCH_INTERVAL = 0.001  # s: the longest the GUI thread waits for the GIL while a trainer runs


class TrainingThreads:
    """Counts the training threads that run; `started()` on a run's start, `ended()` at its end
    (from any thread: the worker's own last act is fine)."""

    def __init__(self, interval: float = SWITCH_INTERVAL):
        self.interval = interval
        self.running = 0
        self._lock = threading.Lock()
        self._saved: float | None = None

    def started(self) -> None:
        with self._lock:
            self.running += 1
            if self.running == 1:
                self._saved = sys.getswitchinterval()
                sys.setswitchinterval(min(self._saved, self.interval))

    def ended(self) -> None:
        with self._lock:
            if self.running == 0:
                return
            self.running -= 1
            if self.running == 0 and self._saved is not None:
                sys.setswitchinterval(self._saved)
                self._saved = None


TRAINING_THREADS = TrainingThreads()  # the app's: every training panel's and lab's runs


__all__ = ["SWITCH_INTERVAL", "TRAINING_THREADS", "TrainingThreads"]
