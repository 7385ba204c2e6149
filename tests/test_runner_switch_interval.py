"""A Runner that works off the GUI thread shortens the interpreter's thread switch interval, so the
GUI thread, which gives the interpreter up in most Qt calls, gets it back soon while a worker runs
Python code; a synchronous Runner (figures, tests) leaves it, and a shorter one is never lengthened."""
from __future__ import annotations

import sys

import pytest

from explorer.runner import GUI_SWITCH_INTERVAL_S, Runner
from explorer.state import SessionState


@pytest.fixture
def switch_interval():
    before = sys.getswitchinterval()
    yield
    sys.setswitchinterval(before)


def test_a_threaded_runner_shortens_the_switch_interval(qapp, switch_interval):
    sys.setswitchinterval(0.005)  # Python's default
    Runner(SessionState())
    assert sys.getswitchinterval() <= GUI_SWITCH_INTERVAL_S < 0.005


def test_a_synchronous_runner_leaves_it(qapp, switch_interval):
    sys.setswitchinterval(0.005)
    Runner(SessionState(), synchronous=True)
    assert sys.getswitchinterval() == pytest.approx(0.005)


def test_a_shorter_interval_is_kept(qapp, switch_interval):
    shorter = GUI_SWITCH_INTERVAL_S / 2
    sys.setswitchinterval(shorter)
    Runner(SessionState())
    assert sys.getswitchinterval() == pytest.approx(shorter)
