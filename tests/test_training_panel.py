"""Live training panel: a real tiny training in a worker thread, driven like a user would.

Every test trains a tiny reverse model for a few dozen steps (batch 8, one torch thread), so
each takes seconds; what is checked is what a student sees: curves that move the right way,
controls that really stop the step counter, errors that appear as messages, the run's model
shown in the other panels without replacing the session's, and a window that can close
mid-run without losing the run. (tests/test_training_panel_drawing.py: what the curves, the
message and the probe draw; tests/test_training_sandbox.py: the header and the sandbox.)
"""
from __future__ import annotations

import math
import time

import numpy as np
import pytest
import torch

pytest.importorskip("pytestqt")

from PySide6.QtCore import QTimer  # noqa: E402
from PySide6.QtWidgets import QMainWindow  # noqa: E402

import training_panel_setup as setup  # noqa: E402
from explorer.panels.training import panel as panel_module  # noqa: E402
from explorer.panels.training.controls import choose  # noqa: E402
from explorer.panels.training.panel import TrainingPanel  # noqa: E402
from model.io.checkpoints import load_checkpoint  # noqa: E402
from model.train import live_loop  # noqa: E402
from model.train.live_messages import MetricRows, Saved  # noqa: E402
from model.train.run_setup import CONTINUE  # noqa: E402
from model.train.timeline import SnapshotTimeline  # noqa: E402
from model.train.trainer import Trainer  # noqa: E402
from training_panel_setup import TIMEOUT, configure, wait_idle, wait_steps  # noqa: E402

pipeline, state, panel = setup.pipeline, setup.state, setup.panel  # the shared fixtures: pytest finds them by name


def test_training_emits_batched_events_and_the_loss_falls(qtbot, panel, state):
    configure(panel, steps=60, warmup=10, batch=16)
    emits = []
    panel.start()
    panel.run.worker.yielded.connect(lambda m: isinstance(m, MetricRows) and emits.append(len(m)))
    start = time.monotonic()
    wait_idle(qtbot, panel)
    wall = time.monotonic() - start
    loss = panel.curves.series["loss"]
    assert loss.n == 60 and list(loss.x) == list(range(1, 61))
    assert loss.smoothed[-1] < loss.smoothed[0] - 0.2, (loss.smoothed[0], loss.smoothed[-1])
    assert np.isfinite(panel.curves.series["tokens_per_s"].y).all() and panel.curves.series["tokens_per_s"].y.min() > 0
    # Throttled by time, not one signal per step.
    assert sum(emits) == 60 and len(emits) <= wall / live_loop.EMIT_INTERVAL + 4
    assert panel.controls.progress.value() == 60
    # The run ended: the session keeps its model; the trained one (a copy) is handed over for
    # "Use this model", which makes it the session's model, with a forward on the session's text.
    original = state.session.bundle
    trained = panel.trained.bundle
    assert trained.metrics["steps"] == 60 and "60 steps" in trained.name and state.bundle is original
    panel.use_model()
    assert state.session.bundle is trained and state.frame.bundle is trained
    assert state.result is not None and state.result.trace.attention_kinds()
    assert state.frame.output_text == trained.translate(state.source_text)


def test_pause_stops_the_step_counter_and_resume_goes_on(qtbot, panel):
    panel.start()
    wait_steps(qtbot, panel, 3)
    panel.pause()
    qtbot.waitUntil(lambda: panel.phase == "paused", timeout=TIMEOUT)
    paused_at = panel.run.trainer.step_count
    assert panel.step == paused_at
    qtbot.wait(600)
    assert panel.run.trainer.step_count == paused_at and panel.step == paused_at
    assert panel.controls.start_button.text() == "Resume" and not panel.controls.pause_button.isEnabled()
    panel.resume()
    wait_steps(qtbot, panel, paused_at + 2)
    panel.stop()
    wait_idle(qtbot, panel)


def test_single_step_advances_by_exactly_one(qtbot, panel):
    panel.single_step()  # from idle: starts a paused run and takes one step
    qtbot.waitUntil(lambda: panel.step == 1 and panel.phase == "paused", timeout=TIMEOUT)
    panel.single_step()
    qtbot.waitUntil(lambda: panel.step == 2, timeout=TIMEOUT)
    qtbot.wait(400)
    assert panel.step == 2 and panel.run.trainer.step_count == 2
    assert panel.curves.series["loss"].n == 2
    panel.stop()
    wait_idle(qtbot, panel)


def test_stop_joins_the_thread_and_hands_over_a_copy(qtbot, panel, state):
    panel.start()
    wait_steps(qtbot, panel, 2)
    run = panel.run
    panel.stop()
    wait_idle(qtbot, panel)
    assert not run.is_running() and run.is_done()
    trained = run.trainer.model
    handed = panel.trained.bundle
    assert handed.model is not trained  # the panel gets a copy, never the trained object
    for (name, a), b in zip(handed.model.state_dict().items(), trained.state_dict().values()):
        assert torch.equal(a, b.cpu()), name
    assert handed.metrics["steps"] == run.trainer.step_count
    assert state.bundle is not handed and state.session.shown_model is None  # the session's own model stays


def test_continuing_the_loaded_model_never_trains_the_sessions_object(qtbot, panel, state):
    original = state.bundle
    before = {k: v.clone() for k, v in original.model.state_dict().items()}
    panel.controls.model_box.setCurrentIndex(panel.controls.model_box.findData(CONTINUE))
    assert not panel.controls.task_box.isEnabled()  # the model's own task
    panel.start()
    wait_steps(qtbot, panel, 3)
    assert panel.run.trainer.model is not original.model
    panel.stop()
    wait_idle(qtbot, panel)
    for k, v in original.model.state_dict().items():
        assert torch.equal(v, before[k]), k
    assert state.session.bundle is original and state.frame.bundle is original
    trained = panel.trained.bundle
    assert trained is not original and trained.config.to_dict() == original.config.to_dict()
    assert trained.metrics["steps"] == panel.step


def test_a_worker_exception_is_a_message_and_the_app_stays_responsive(qtbot, panel, state, monkeypatch):
    def broken(self):
        raise RuntimeError("boom in the optimiser")

    monkeypatch.setattr(Trainer, "step", broken)
    messages = []
    state.message.connect(lambda level, text: messages.append((level, text)))
    panel.start()
    qtbot.waitUntil(lambda: any(level == "error" for level, _ in messages), timeout=TIMEOUT)
    assert "boom in the optimiser" in panel.message.text()
    assert any("boom in the optimiser" in text and "step 1" in text for _, text in messages)
    qtbot.waitUntil(lambda: panel.phase == "paused", timeout=TIMEOUT)
    timer = QTimer()
    timer.setInterval(20)
    with qtbot.waitSignal(timer.timeout, timeout=2000):
        timer.start()
    assert panel.run.is_running()  # paused, not dead: the weights can still be saved
    panel.stop()
    wait_idle(qtbot, panel)


def test_a_nan_loss_shows_the_training_error_naming_the_step(qtbot, panel, state, monkeypatch):
    calls = {"n": 0}
    original = torch.nn.CrossEntropyLoss.forward

    def nan_from_step_4(self, logits, target):
        calls["n"] += 1
        loss = original(self, logits, target)
        return loss * float("nan") if calls["n"] >= 4 else loss

    monkeypatch.setattr(torch.nn.CrossEntropyLoss, "forward", nan_from_step_4)
    messages = []
    state.message.connect(lambda level, text: messages.append((level, text)))
    panel.start()
    qtbot.waitUntil(lambda: any(level == "error" for level, _ in messages), timeout=TIMEOUT)
    text = panel.message.text()
    assert "loss became nan at step 4" in text, text
    qtbot.waitUntil(lambda: panel.phase == "paused", timeout=TIMEOUT)
    assert panel.step == 3 and panel.run.trainer.step_count == 3  # the last good step stays
    panel.stop()
    wait_idle(qtbot, panel)
    trained = panel.trained.bundle
    assert trained.metrics["steps"] == 3 and all(math.isfinite(float(v.float().sum()))
                                                 for v in trained.model.state_dict().values())


def test_timeline_keeps_snapshots_and_the_other_panels_follow_only_live(qtbot, panel, state, monkeypatch):
    monkeypatch.setattr(live_loop, "PROBE_INTERVAL", 0.05)
    monkeypatch.setattr(live_loop, "PROBE_BUDGET", 1.0)
    panel.start()
    qtbot.waitUntil(lambda: len(panel.timeline) >= 4 and state.session.shown_model is not None, timeout=TIMEOUT)
    steps = panel.timeline.steps
    assert steps == sorted(steps) and steps[0] == 0 and steps[-1] > 0
    panel.redraw()  # what the paced redraw timer does a moment later
    assert panel.probe.slider.maximum() == len(panel.timeline) - 1
    panel.probe.slider.setValue(0)  # as a user dragging the slider back
    old_step, old_snap = panel.timeline[0]
    assert not panel.timeline.live
    assert panel.probe.output_label.text() == (old_snap.result.output_text or "(empty)")
    assert np.allclose(panel.probe.map.values, old_snap.result.trace.attention("cross", 1)[0].mean(0).numpy())
    # Snapshots keep the probe's forward, not the weights: the other panels hold what they show.
    held = state.session.shown_model
    n = len(panel.timeline)
    qtbot.waitUntil(lambda: len(panel.timeline) > n + 2, timeout=TIMEOUT)
    qtbot.wait(int(1000 * panel_module.PUBLISH_INTERVAL) + 200)
    assert panel.probe.slider.value() == 0 and not panel.timeline.live  # stays where the user put it
    assert state.session.shown_model is held and state.frame.model_label == held.label
    panel.follow_live()
    assert panel.timeline.live
    qtbot.waitUntil(lambda: state.session.shown_model is not held, timeout=TIMEOUT)
    assert state.frame.model_label == "training run"
    assert state.frame.output_text == state.frame.bundle.translate(state.source_text)
    panel.stop()
    wait_idle(qtbot, panel)


def test_closing_the_panel_mid_training_writes_the_last_run(qtbot, panel, tmp_path):
    panel.show()
    panel.start()
    wait_steps(qtbot, panel, 3)
    run = panel.run
    panel.close()
    assert not run.is_running()
    folder = tmp_path / "appdata" / "last-run"
    assert (folder / "config.json").is_file() and (folder / "model.safetensors").is_file()
    restored = load_checkpoint(folder)
    assert restored.metrics["steps"] == run.trainer.step_count >= 3
    assert str(folder) in panel.message.text()


def test_closing_the_main_window_stops_the_run(qtbot, state, tmp_path, monkeypatch):
    monkeypatch.setenv("TRANSFORMER_EXPLORER_DATA", str(tmp_path))
    window = QMainWindow()
    qtbot.addWidget(window)
    p = TrainingPanel(state, window)
    configure(p)
    window.setCentralWidget(p)
    window.show()
    p.start()
    wait_steps(qtbot, p, 2)
    run = p.run
    window.close()
    assert not run.is_running() and p.run is None
    assert (tmp_path / "last-run" / "config.json").is_file()


def test_cuda_is_offered_only_when_torch_sees_one(panel):
    box = panel.controls.device_box
    assert box.model().item(box.findData("cuda")).isEnabled() == torch.cuda.is_available()


def test_snapshot_timeline_is_bounded_and_spans_the_run():
    timeline = SnapshotTimeline(capacity=10)
    for step in range(0, 1000, 5):
        timeline.add(step, f"snapshot {step}")
    assert 5 <= len(timeline) <= 10
    steps = timeline.steps
    assert steps[0] == 0 and steps[-1] == 995 and steps == sorted(steps)
    assert timeline[timeline.index_of_step(0)][0] == 0
    assert timeline.index_of_step(10_000) == len(timeline) - 1
    timeline.add(995, "replaced")
    assert timeline[len(timeline) - 1] == (995, "replaced")
    with pytest.raises(ValueError):
        timeline.add(3, "going back in time")


def test_saving_mid_run_writes_a_loadable_checkpoint_between_steps(qtbot, panel, tmp_path):
    panel.start()
    wait_steps(qtbot, panel, 2)
    folder = tmp_path / "mid-run"
    with qtbot.waitSignal(panel.run.worker.yielded, timeout=TIMEOUT,
                          check_params_cb=lambda m: isinstance(m, Saved)) as saved:
        panel.save_checkpoint(folder)
    assert saved.args == [Saved(str(folder))]
    restored = load_checkpoint(folder)
    assert restored.metrics["steps"] >= 2 and "Checkpoint saved" in panel.message.text()
    panel.pause()
    qtbot.waitUntil(lambda: panel.phase == "paused", timeout=TIMEOUT)
    panel.save_checkpoint(folder)  # paused: these are exactly the weights the trainer holds
    qtbot.waitUntil(lambda: load_checkpoint(folder).metrics["steps"] == panel.step, timeout=TIMEOUT)
    trained = panel.run.trainer.model.state_dict()
    for name, value in load_checkpoint(folder).model.state_dict().items():
        assert torch.equal(value, trained[name].cpu()), name
    panel.stop()
    wait_idle(qtbot, panel)


def test_use_this_model_hands_a_copy_to_the_session_during_the_run(qtbot, panel, state):
    panel.start()
    wait_steps(qtbot, panel, 2)
    panel.pause()
    qtbot.waitUntil(lambda: panel.phase == "paused", timeout=TIMEOUT)
    original = state.session.bundle
    with qtbot.waitSignal(state.bundleChanged, timeout=TIMEOUT):
        panel.use_model()
    used = state.session.bundle
    assert used is not original
    assert used.metrics["steps"] == panel.step and used.model is not panel.run.trainer.model
    assert "now the session's model" in panel.message.text()
    panel.stop()
    wait_idle(qtbot, panel)
    assert state.session.bundle is used  # the run's end keeps the model the user chose


def test_a_broken_tsv_file_is_a_message_not_a_crash(qtbot, panel, state, tmp_path):
    bad = tmp_path / "pairs.tsv"
    bad.write_text("hello\tolleh\nno tab on this line\n", encoding="utf-8")
    panel.controls.set_tsv(str(bad))
    messages = []
    state.message.connect(lambda level, text: messages.append((level, text)))
    panel.start()
    wait_idle(qtbot, panel)
    assert any(level == "error" and "pairs.tsv" in text and "line 2" in text for level, text in messages), messages
    assert "pairs.tsv" in panel.message.text() and panel.controls.start_button.isEnabled()
    assert not any(note.isVisible() for note in panel.curves.waiting)  # no step is coming: no "waiting for"


def test_after_the_run_the_trained_model_can_still_be_saved(qtbot, panel, tmp_path):
    configure(panel, steps=3)
    panel.start()
    wait_idle(qtbot, panel)
    assert panel.controls.save_button.isEnabled()
    folder = tmp_path / "after"
    panel.save_checkpoint(folder)
    qtbot.waitUntil(lambda: "Checkpoint saved" in panel.message.text(), timeout=TIMEOUT)
    assert load_checkpoint(folder).metrics["steps"] == 3


def test_train_for_trains_then_hands_over_the_model(qtbot, panel, state):
    """What `--train-seconds N` calls before taking a screenshot."""
    configure(panel, steps=40)
    start = time.monotonic()
    steps = panel.train_for(30.0)  # ends as soon as the 40 steps are done
    assert steps == 40 and time.monotonic() - start < 30.0
    assert panel.run is None and panel.phase == "idle"
    assert panel.trained.bundle.metrics["steps"] == 40 and state.result is not None
    # The run was shown while it trained; now the session's own model is back on screen.
    assert state.session.shown_model is None and state.frame.bundle is state.session.bundle
    assert state.session.bundle.metrics.get("steps") is None
    assert panel.curves.curves["loss"].getData()[0] is not None


def test_one_step_number_during_a_run_and_a_usable_probe_after_stop(qtbot, panel, state):
    """During a run only the progress bar names the step (the timeline says "live", the header
    "training run"); after Stop the probe field names the map's input, Enter runs the run's last
    model on a new one, and "Show in other panels" cannot be ticked (there is nothing to show)."""
    from PySide6.QtCore import Qt

    from model.data.tasks import get_task
    from model.train.request import default_probe

    panel.start()
    assert panel.controls.show_others.isEnabled()
    qtbot.waitUntil(lambda: panel.step >= 3 and len(panel.timeline) and state.session.shown_model is not None,
                    timeout=TIMEOUT)
    panel.redraw()
    assert panel.probe.timeline_label.text() == "live" and state.frame.model_label == "training run"
    panel.stop()
    wait_idle(qtbot, panel)
    probe, edit = panel.probe, panel.probe.probe_edit
    last_step, last = panel.timeline[len(panel.timeline) - 1]
    assert last_step == panel.step == panel.trained.step
    assert probe.timeline_label.text() == f"step {panel.step:,} (latest)"
    assert f"step {panel.step:,}" in panel.controls.progress.format()
    assert edit.text() == last.probe and not panel.controls.show_others.isEnabled()
    edit.clear()
    qtbot.keyClicks(edit, "hello")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    expected = panel.trained.bundle.run("hello")
    qtbot.waitUntil(lambda: probe.shown_probe() == "hello", timeout=TIMEOUT)
    assert probe.output_label.text() == (expected.output_text or "(empty)") and edit.text() == "hello"
    assert np.allclose(probe.map.values, expected.trace.attention("cross", 1)[0].mean(0).numpy())
    assert panel.timeline[len(panel.timeline) - 1][0] == panel.step  # the same step: the run's last model
    # The next run's task is another: the map gives way, the field names that task's probe.
    choose(panel.controls.kind_box, "decoder_only")
    task = panel.controls.task_name()
    assert task != "reverse" and probe.shown_probe() is None and probe.map.values.size == 0
    assert edit.text() == default_probe(get_task(task), "decoder_only")

