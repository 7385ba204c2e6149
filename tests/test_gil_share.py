"""While a training thread runs, the GIL changes hands often (the GUI thread's waits for it stay
short); the interval Python had comes back when the last run ends. (Python keeps the interval
in whole microseconds: the comparisons allow one.)"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import pytest

from explorer.gil_share import SWITCH_INTERVAL, TRAINING_THREADS, TrainingThreads
from explorer.panels.live_lab.run import LabRun


@pytest.fixture
def default_interval():
    before = sys.getswitchinterval()
    sys.setswitchinterval(0.005)
    yield 0.005
    sys.setswitchinterval(before)


def test_overlapping_runs_keep_the_short_interval_until_the_last_ends(default_interval):
    threads = TrainingThreads(0.0005)
    threads.started()
    assert sys.getswitchinterval() == pytest.approx(0.0005, abs=2e-6)
    threads.started()
    threads.ended()
    assert sys.getswitchinterval() == pytest.approx(0.0005, abs=2e-6)  # one run still going
    threads.ended()
    assert sys.getswitchinterval() == pytest.approx(default_interval, abs=2e-6)
    threads.ended()  # an extra end changes nothing
    assert threads.running == 0 and sys.getswitchinterval() == pytest.approx(default_interval, abs=2e-6)


def test_a_shorter_interval_set_by_the_app_is_never_lengthened(default_interval):
    sys.setswitchinterval(0.0002)
    threads = TrainingThreads(0.001)
    threads.started()
    assert sys.getswitchinterval() == pytest.approx(0.0002, abs=2e-6)
    threads.ended()
    assert sys.getswitchinterval() == pytest.approx(0.0002, abs=2e-6)


@dataclass
class Step:
    step: int
    loss: float
    elapsed: float


class BusyLab:
    """A lab whose steps are Python work (holding the GIL in turns), noting the interval it ran with."""

    def __init__(self, seen: list):
        self.seen = seen
        self.stopped = False

    def events(self):
        for step in range(1, 40):
            if self.stopped:
                return
            self.seen.append(sys.getswitchinterval())
            end = time.perf_counter() + 0.01
            while time.perf_counter() < end:
                pass
            yield Step(step, 1.0 / step, 0.01 * step)

    def stop(self, *_args):
        self.stopped = True


def test_a_lab_trains_with_the_short_interval_and_gives_the_old_one_back(qtbot, default_interval):
    seen: list[float] = []
    ticks: list[float] = []
    from PySide6.QtCore import QTimer
    timer = QTimer(interval=10)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    run = LabRun(lambda: BusyLab(seen), Step)
    timer.start()
    run.start()
    assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL, abs=2e-6)
    qtbot.waitUntil(run.is_done, timeout=20000)
    timer.stop()
    assert seen and all(s == pytest.approx(SWITCH_INTERVAL, abs=2e-6) for s in seen)
    assert TRAINING_THREADS.running == 0
    assert sys.getswitchinterval() == pytest.approx(default_interval, abs=2e-6)
    assert len(ticks) >= 3  # the GUI thread's timer ran while the lab held the GIL in turns
