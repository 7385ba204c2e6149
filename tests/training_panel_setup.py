"""The training panel's tests' shared set-up: a session with the untrained reverse model on
"abc", its synchronous pipeline, and a training panel set for short tiny runs (one torch
thread, its files in the test's folder). Imported by tests/test_training_panel*.py."""
from __future__ import annotations

import pytest

from explorer.panels.training import worker as training_worker
from explorer.panels.training.panel import TrainingPanel
from explorer.runner import Runner
from explorer.state import SessionState
from model.io.checkpoints import random_bundle

TIMEOUT = 60_000  # ms: generous, CI machines are shared


@pytest.fixture
def pipeline():
    """A session with the untrained reverse model on "abc", and its (synchronous) pipeline."""
    s = SessionState()
    runner = Runner(s, synchronous=True)
    runner.set_bundle(random_bundle("reverse"), then_run="abc")
    return s, runner


@pytest.fixture
def state(pipeline):
    return pipeline[0]


@pytest.fixture
def panel(qtbot, state, tmp_path, monkeypatch):
    monkeypatch.setenv("TRANSFORMER_EXPLORER_DATA", str(tmp_path / "appdata"))
    monkeypatch.setattr(training_worker, "worker_threads", lambda: 1)
    p = TrainingPanel(state)
    qtbot.addWidget(p)
    configure(p)
    yield p
    p.shutdown()


def configure(p: TrainingPanel, steps: int = 10_000, warmup: int = 10, batch: int = 8) -> None:
    p.controls.steps_spin.setValue(steps)
    p.controls.warmup_spin.setValue(warmup)
    p.controls.batch_spin.setValue(batch)


def wait_steps(qtbot, p: TrainingPanel, n: int) -> None:
    qtbot.waitUntil(lambda: p.step >= n, timeout=TIMEOUT)


def wait_idle(qtbot, p: TrainingPanel) -> None:
    qtbot.waitUntil(lambda: p.run is None and p.phase == "idle", timeout=TIMEOUT)
