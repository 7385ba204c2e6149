"""A runner whose jobs run on a worker thread shortens the interpreter's switch interval, so the GUI
thread gets the interpreter lock back soon after each Qt call while the worker runs Python."""
import sys

import pytest

from explorer.runner import GUI_SWITCH_INTERVAL_S, Runner
from explorer.state import SessionState


@pytest.fixture
def python_default_interval():
    before = sys.getswitchinterval()
    sys.setswitchinterval(0.005)  # Python's own default
    yield
    sys.setswitchinterval(before)


def test_a_threaded_runner_shortens_the_switch_interval(qapp, python_default_interval):
    Runner(SessionState())
    assert sys.getswitchinterval() <= GUI_SWITCH_INTERVAL_S < 0.005


def test_a_synchronous_runner_leaves_it_alone(qapp, python_default_interval):
    Runner(SessionState(), synchronous=True)  # (no worker: nothing to share the lock with)
    assert sys.getswitchinterval() == pytest.approx(0.005)


def test_a_shorter_interval_set_elsewhere_is_kept(qapp, python_default_interval):
    sys.setswitchinterval(0.0005)
    Runner(SessionState())
    assert sys.getswitchinterval() == pytest.approx(0.0005)
