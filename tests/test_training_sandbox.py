"""A training run is a sandbox: it never replaces the loaded model behind the user's back.

With "Show in other panels" the pipeline computes every frame from a copy of the model being
trained, on the session's own text, and the header names it ("training run"); the
header's model and the output always agree. Stopping, "Back to <checkpoint>" or the header's
Back bring the checkpoint's output back; only "Use this model" makes the trained copy the
session's model. A new run learns the loaded model's own task with its kind.
"""
from __future__ import annotations

import pytest
import torch

pytest.importorskip("pytestqt")

from explorer.input_bar import InputBar  # noqa: E402
from explorer.panels.training import worker as training_worker  # noqa: E402
from explorer.panels.training.controls import choose  # noqa: E402
from explorer.panels.training.panel import TrainingPanel  # noqa: E402
from explorer.runner import Runner  # noqa: E402
from explorer.state import SessionState  # noqa: E402
from model.io.checkpoints import random_bundle  # noqa: E402
from model.train import live_loop  # noqa: E402

TIMEOUT = 60_000
TEXT = "abcd"


@pytest.fixture
def setup(qtbot, tmp_path, monkeypatch):
    """A session with its own (untrained, d_model 32) reverse model, the header, the pipeline
    (synchronous) and the training panel set for a short tiny run (d_model 64: another shape)."""
    monkeypatch.setenv("TRANSFORMER_EXPLORER_DATA", str(tmp_path / "appdata"))
    monkeypatch.setattr(training_worker, "worker_threads", lambda: 1)
    monkeypatch.setattr(live_loop, "PROBE_INTERVAL", 0.05)
    state = SessionState()
    runner = Runner(state, synchronous=True)
    bar = InputBar(state, runner)
    qtbot.addWidget(bar)
    bar.resize(1280, 90)  # a window's width: its second row has room for "Back to reverse (untrained)"
    panel = TrainingPanel(state)
    qtbot.addWidget(panel)
    torch.manual_seed(0)
    original = random_bundle("reverse", d_model=32, d_ff=64, dropout=0.0)
    runner.set_bundle(original, then_run=TEXT)
    c = panel.controls
    c.steps_spin.setValue(10_000)
    c.warmup_spin.setValue(10)
    c.batch_spin.setValue(8)
    yield state, runner, bar, panel, original
    panel.shutdown()


def shown_run(state) -> bool:
    return state.frame is not None and state.frame.model_label.startswith("training run")


def assert_header_agrees(state, bar) -> None:
    """What the header names computed the output it shows, on the session's text."""
    frame = state.frame
    assert frame.source == state.source_text == TEXT
    assert frame.output_text == frame.bundle.translate(state.source_text)
    assert state.bundle is frame.bundle
    own = state.session.bundle
    if frame.bundle is own:
        assert bar.shown_label.isHidden()
    else:
        assert not bar.shown_label.isHidden() and frame.model_label in bar.shown_label.text()
    assert bar.model_combo.currentText() == own.name  # the chooser names the session's own model


def wait_idle(qtbot, panel) -> None:
    qtbot.waitUntil(lambda: panel.run is None and panel.phase == "idle", timeout=TIMEOUT)


def test_a_shown_run_is_named_in_the_header_and_stopping_restores_the_checkpoint(qtbot, setup):
    state, runner, bar, panel, original = setup
    checkpoint_output = state.frame.output_text
    assert state.frame.bundle is original and bar.shown_label.isHidden() and bar.back_button.isHidden()
    assert panel.controls.back_button.text() == f"Back to {original.name}"
    assert not panel.controls.back_button.isEnabled()
    panel.start()
    qtbot.waitUntil(lambda: shown_run(state) and panel.step >= 3, timeout=TIMEOUT)
    frame = state.frame
    assert frame.model_label == "training run"  # the step is the progress bar's to name: one number on screen
    assert frame.bundle.config.d_model == 64 and frame.bundle is not original
    assert frame.bundle.model is not panel.run.trainer.model  # a copy nobody trains
    assert_header_agrees(state, bar)
    assert not bar.back_button.isHidden() and bar.back_button.text() == f"Back to {original.name}"
    assert panel.controls.back_button.isEnabled()
    assert state.session.bundle is original  # never replaced
    # The panels keep following the run (a newer copy).
    first = frame.bundle
    qtbot.waitUntil(lambda: shown_run(state) and state.frame.bundle is not first, timeout=TIMEOUT)
    assert_header_agrees(state, bar)

    panel.stop()
    wait_idle(qtbot, panel)
    assert state.session.shown_model is None and state.session.bundle is original
    assert state.frame.bundle is original and state.frame.model_label == original.name
    assert state.frame.output_text == original.translate(TEXT) == checkpoint_output
    assert_header_agrees(state, bar)
    assert bar.back_button.isHidden() and not panel.controls.back_button.isEnabled()
    assert original.name in panel.message.text() and "Use this model" in panel.message.text()

    # "Use this model": the run's last copy becomes the session's model, and says so.
    trained = panel.trained.bundle
    panel.use_model()
    assert state.session.bundle is trained and state.frame.bundle is trained
    assert trained.metrics["steps"] == panel.step
    assert_header_agrees(state, bar)
    assert "now the session's model" in panel.message.text() and original.name in panel.message.text()


def test_back_to_the_checkpoint_during_a_run(qtbot, setup):
    state, runner, bar, panel, original = setup
    panel.start()
    qtbot.waitUntil(lambda: shown_run(state), timeout=TIMEOUT)
    panel.controls.back_button.click()
    assert state.session.shown_model is None and state.frame.bundle is original
    assert state.frame.output_text == original.translate(TEXT)
    assert not panel.controls.show_others.isChecked()
    at = panel.step
    qtbot.waitUntil(lambda: panel.step >= at + 5, timeout=TIMEOUT)  # the run goes on, unseen
    qtbot.wait(300)
    assert state.frame.bundle is original and state.session.shown_model is None
    assert_header_agrees(state, bar)
    panel.controls.show_others.setChecked(True)  # and can be shown again
    qtbot.waitUntil(lambda: shown_run(state), timeout=TIMEOUT)
    assert_header_agrees(state, bar)
    # The header's own Back button does the same.
    bar.back_button.click()
    assert state.frame.bundle is original and not panel.controls.show_others.isChecked()
    assert "Show in other panels" in panel.message.text()
    panel.stop()
    wait_idle(qtbot, panel)
    assert state.session.bundle is original


def test_turning_show_in_other_panels_off_restores_the_checkpoint(qtbot, setup):
    state, runner, bar, panel, original = setup
    panel.start()
    qtbot.waitUntil(lambda: shown_run(state), timeout=TIMEOUT)
    panel.controls.show_others.setChecked(False)
    assert state.frame.bundle is original and state.frame.output_text == original.translate(TEXT)
    assert_header_agrees(state, bar)
    panel.stop()
    wait_idle(qtbot, panel)


def test_use_this_model_during_the_run(qtbot, setup):
    state, runner, bar, panel, original = setup
    panel.start()
    qtbot.waitUntil(lambda: panel.step >= 2, timeout=TIMEOUT)
    panel.pause()
    qtbot.waitUntil(lambda: panel.phase == "paused", timeout=TIMEOUT)
    panel.use_model()
    qtbot.waitUntil(lambda: state.session.bundle is not original, timeout=TIMEOUT)
    used = state.session.bundle
    assert used.metrics["steps"] == panel.step and used.model is not panel.run.trainer.model
    assert bar.model_combo.currentText() == used.name
    assert state.frame.output_text == state.frame.bundle.translate(TEXT)
    panel.stop()
    wait_idle(qtbot, panel)
    assert state.session.bundle is used and state.frame.bundle is used  # the run's end keeps what was chosen


def test_a_run_without_show_in_other_panels_never_touches_them(qtbot, setup):
    state, runner, bar, panel, original = setup
    panel.controls.show_others.setChecked(False)
    frames = []
    state.frameChanged.connect(frames.append)
    panel.start()
    qtbot.waitUntil(lambda: panel.step >= 5 and len(panel.timeline) >= 2, timeout=TIMEOUT)
    panel.stop()
    wait_idle(qtbot, panel)
    assert all(f.bundle is original for f in frames) and state.session.shown_model is None
    assert state.frame.bundle is original


def test_the_training_task_and_kind_follow_the_loaded_model(qtbot, setup):
    state, runner, bar, panel, original = setup
    c = panel.controls
    assert c.task_name() == "reverse" and c.kind() == "encoder_decoder"
    torch.manual_seed(0)
    gpt = random_bundle("facts", kind="decoder_only", n_encoder_layers=0, d_model=32, n_heads=4, d_ff=64,
                        dropout=0.0)
    runner.set_bundle(gpt, then_run="the duck")
    assert c.task_name() == "facts" and c.kind_box.currentData() == "decoder_only"
    assert "[MASK]" not in panel.probe.probe_edit.text() and panel.probe.probe_edit.text()
    assert panel.request().task == "facts" and panel.request().kind == "decoder_only"
    torch.manual_seed(0)
    bert = random_bundle("facts", kind="encoder_only", n_decoder_layers=0, d_model=32, n_heads=4, d_ff=64,
                         dropout=0.0)
    runner.set_bundle(bert, then_run="the [MASK] says moo")
    assert c.task_name() == "facts" and c.kind_box.currentData() == "encoder_only"
    assert "[MASK]" in panel.probe.probe_edit.text()
    runner.set_bundle(random_bundle("addition", dropout=0.0), then_run="1+2")
    assert c.task_name() == "addition" and c.kind_box.currentData() == "encoder_decoder"


def test_a_run_that_cannot_read_the_sessions_text_is_shown_on_its_probe(qtbot, setup):
    """A GPT-like run on the facts corpus while a reverse model reads "abcd": the panels show
    the run on its probe (never garbage), and the session's text comes back with its model."""
    state, runner, bar, panel, original = setup
    choose(panel.controls.kind_box, "decoder_only")
    assert panel.controls.task_name() == "facts"
    panel.controls.steps_spin.setValue(10_000)
    panel.start()
    qtbot.waitUntil(lambda: shown_run(state), timeout=TIMEOUT)
    frame = state.frame
    assert frame.bundle.config.kind == "decoder_only" and state.source_text == panel.probe.probe_edit.text()
    assert frame.source == state.source_text and frame.output_text == frame.bundle.translate(frame.source)
    assert "probe" in panel.message.text()
    panel.stop()
    wait_idle(qtbot, panel)
    assert state.source_text == TEXT and state.frame.bundle is original
    assert state.frame.output_text == original.translate(TEXT)
