"""Live training panel: a real tiny training in a worker thread, driven like a user would.

Every test trains a tiny reverse model for a few dozen steps (batch 8, one torch thread), so
each takes seconds; what is checked is what a student sees: curves that move the right way,
controls that really stop the step counter, errors that appear as messages, the run's model
shown in the other panels without replacing the session's, and a window that can close
mid-run without losing the run. (tests/test_training_sandbox.py: the header and the sandbox.)
"""
from __future__ import annotations

import math
import time

import numpy as np
import pytest
import torch

pytest.importorskip("pytestqt")

from PySide6.QtCore import QTimer  # noqa: E402
from PySide6.QtWidgets import QLabel, QMainWindow  # noqa: E402

from explorer.panels.training import panel as panel_module  # noqa: E402
from explorer.panels.training import worker as training_worker  # noqa: E402
from explorer.panels.training.controls import CONTINUE  # noqa: E402
from explorer.panels.training.panel import TrainingPanel  # noqa: E402
from explorer.runner import Runner  # noqa: E402
from explorer.state import SessionState  # noqa: E402
from model.io.checkpoints import load_checkpoint, random_bundle  # noqa: E402
from model.train import live_loop  # noqa: E402
from model.train.timeline import SnapshotTimeline  # noqa: E402
from model.train.trainer import Trainer, noam_lr  # noqa: E402

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


def test_training_emits_batched_events_and_the_loss_falls(qtbot, panel, state):
    configure(panel, steps=60, warmup=10, batch=16)
    emits = []
    panel.start()
    panel.run.worker.rows.connect(lambda rows: emits.append(len(rows)))
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


def test_learning_rate_curve_warms_up_then_decays(qtbot, panel):
    configure(panel, steps=30, warmup=8)
    panel.start()
    wait_idle(qtbot, panel)
    lr = panel.curves.series["lr"]
    steps, values = lr.x.astype(int), lr.y
    assert len(values) == 30
    peak = int(np.argmax(values))
    assert steps[peak] == 8
    assert (np.diff(values[: peak + 1]) > 0).all() and (np.diff(values[peak:]) < 0).all()
    expected = [noam_lr(s, 64, 8) for s in steps]  # Eq. 3 with the tiny model's d_model
    assert np.allclose(values, expected, rtol=1e-6)
    assert panel.curves.curves["lr"].getData()[1] is not None and len(panel.curves.curves["lr"].getData()[1]) == 30


def test_the_rate_plot_shows_the_whole_runs_schedule_ahead(qtbot, panel):
    """From the run's first message the rate plot draws the schedule of all 400 steps (warm-up
    peak at 40, then the decay), dashed; the run's own rates trace over it, a dot at the last.
    The rate plot spans the whole run while the loss plot spans the steps trained."""
    configure(panel, steps=400, warmup=40)
    panel.start()
    assert all(note.isVisible() for note in panel.curves.waiting)  # the empty plots say the steps are coming
    qtbot.waitUntil(lambda: len(panel.curves.plan_steps) > 0, timeout=TIMEOUT)
    plan_x, plan_y = panel.curves.plan.getData()
    assert plan_x[0] == 1 and plan_x[-1] == 400 and plan_x[int(np.argmax(plan_y))] == 40
    assert plan_y == pytest.approx([noam_lr(int(s), 64, 40) for s in plan_x], rel=1e-9)
    wait_steps(qtbot, panel, 12)
    panel.stop()
    wait_idle(qtbot, panel)
    panel.curves.refresh()
    assert not any(note.isVisible() for note in panel.curves.waiting)
    lr = panel.curves.series["lr"]
    assert lr.y == pytest.approx(np.interp(lr.x, plan_x, plan_y), rel=1e-9)  # the run kept to its plan
    assert list(panel.curves.curves["lr_now"].getData()[0]) == [lr.x[-1]]
    for plot in (panel.curves.lr_plot, panel.curves.loss_plot):
        plot.getViewBox().updateAutoRange()  # (pyqtgraph auto-ranges when it paints; this panel is not shown)
    rate_left, rate_right = panel.curves.lr_plot.getViewBox().viewRange()[0]
    loss_right = panel.curves.loss_plot.getViewBox().viewRange()[0][1]
    assert rate_left <= 1 and rate_right >= 400, rate_right
    assert lr.x[-1] <= loss_right <= lr.x[-1] * 1.1 + 1 < rate_right, (loss_right, lr.x[-1])  # the steps trained


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
    assert not panel.live
    assert panel.probe.output_label.text() == (old_snap.result.output_text or "(empty)")
    assert np.allclose(panel.probe.image.image, old_snap.result.trace.attention("cross", 1)[0].mean(0).numpy())
    # Snapshots keep the probe's forward, not the weights: the other panels hold what they show.
    held = state.session.shown_model
    n = len(panel.timeline)
    qtbot.waitUntil(lambda: len(panel.timeline) > n + 2, timeout=TIMEOUT)
    qtbot.wait(int(1000 * panel_module.PUBLISH_INTERVAL) + 200)
    assert panel.probe.slider.value() == 0 and not panel.live  # stays where the user put it
    assert state.session.shown_model is held and state.frame.model_label == held.label
    panel.follow_live()
    assert panel.live
    qtbot.waitUntil(lambda: state.session.shown_model is not held, timeout=TIMEOUT)
    assert state.frame.model_label.startswith("training run, step ")
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
    with qtbot.waitSignal(panel.run.worker.saved, timeout=TIMEOUT) as saved:
        panel.save_checkpoint(folder)
    assert saved.args == [str(folder)]
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


def test_narrow_curves_trade_the_legend_for_short_titles(qtbot):
    from explorer.panels.training.curves import NARROW, TrainingCurves

    curves = TrainingCurves()
    qtbot.addWidget(curves)
    curves.reset(warmup=10)
    curves.resize(NARROW + 300, 500)
    curves.show()
    qtbot.waitUntil(lambda: curves.legend.isVisible())
    assert "Learning rate (Eq. 3)" in curves.lr_plot.titleLabel.text
    curves.resize(NARROW - 100, 500)
    qtbot.waitUntil(lambda: not curves.legend.isVisible())
    assert "Learning rate" in curves.lr_plot.titleLabel.text and "(Eq. 3)" not in curves.lr_plot.titleLabel.text
    assert "tokens" in curves.acc_plot.titleLabel.text and "exact" in curves.acc_plot.titleLabel.text
    assert curves.warmup.label.toPlainText() == "warm-up"
    # the loss title names the thick line where it fits whole, else says "Loss"
    from PySide6.QtGui import QFontMetricsF
    title = curves.loss_plot.titleLabel
    assert title.text in ("Loss (thick: smoothed)", "Loss")
    for width in (NARROW - 100, 2 * NARROW):
        curves.resize(width, 500)
        qtbot.wait(20)
        drawn = QFontMetricsF(title.item.font()).horizontalAdvance(title.text)
        assert drawn <= curves.loss_plot.width(), (width, title.text, drawn)
    assert "thick: smoothed" in title.text  # (a 1,240-px canvas: room for it)


@pytest.mark.parametrize("decay_steps", [0, 400])
def test_the_warmup_label_stays_clear_of_the_learning_rate_curve(qtbot, decay_steps):
    """At the lecture size (a 1280×720 beamer's curves, 2 × 2) the "warm-up ends" label sits
    under the peak, on the canvas colour: no point of the rate curve inside it, with the paper's
    decay or the lecture preset's linear one (beside the line it ran into the decay)."""
    from PySide6.QtWidgets import QApplication

    from explorer import presentation
    from explorer.panels.training.curves import TrainingCurves

    curves = TrainingCurves()  # not qtbot's: pyqtgraph's close() crashed the process after a failed assert
    try:
        _check_warmup_label(qtbot, curves, decay_steps)
    finally:
        presentation.apply_theme(QApplication.instance(), "light")
        curves.hide()
        curves.deleteLater()


def _check_warmup_label(qtbot, curves, decay_steps: int) -> None:
    import numpy as np
    from PySide6.QtCore import QPointF
    from PySide6.QtWidgets import QApplication

    from explorer import presentation, theme
    from explorer.panels.training.messages import MetricRows
    from model.train.optimizer import linear_decay_lr, noam_lr

    curves.resize(780, 390)
    curves.show()
    curves.reset(warmup=200, decay_steps=decay_steps)
    steps = np.arange(1, 451)
    lr = [linear_decay_lr(int(s), 64, 200, 1.0, decay_steps) if decay_steps else noam_lr(int(s), 64, 200)
          for s in steps]
    ones = np.ones(len(steps))
    curves.add_rows(MetricRows(step=steps, loss=ones, accuracy=ones, lr=np.array(lr), tokens_per_s=ones, wall=ones))
    curves.refresh()
    qtbot.wait(50)
    label = curves.warmup.label
    assert label.isVisible() and label.toPlainText().startswith("warm-up")
    box = label.sceneBoundingRect()
    vb = curves.lr_plot.getViewBox()
    inside = [s for s, y in zip(steps, lr) if box.contains(vb.mapViewToScene(QPointF(float(s), y)))]
    assert not inside, f"the rate curve runs through the label at steps {inside[:5]}…"
    assert box.left() > vb.sceneBoundingRect().left()  # whole, inside the plot
    assert label.fill.color().name() == theme.current().canvas
    presentation.apply_theme(QApplication.instance(), "dark")
    curves.restyle_marks()
    assert label.fill.color().name() == theme.DARK.canvas and label.color.name() == theme.DARK.muted


def test_the_warmup_label_stays_whole_when_the_warmup_just_ended(qtbot):
    """Step 200 of a 200-step warm-up: the line is at the plot's right edge, and its label
    goes beside it, to the left, whole inside the plot (centred, half of it was cut)."""
    import numpy as np

    from explorer.panels.training.curves import TrainingCurves
    from explorer.panels.training.messages import MetricRows
    from model.train.optimizer import linear_decay_lr

    curves = TrainingCurves()  # not qtbot's: see test_the_warmup_label_stays_clear_of_the_learning_rate_curve
    try:
        curves.resize(560, 390)
        curves.show()
        curves.reset(warmup=200, decay_steps=400)
        steps = np.arange(1, 201)
        lr = np.array([linear_decay_lr(int(s), 64, 200, 1.0, 400) for s in steps])
        ones = np.ones(len(steps))
        curves.add_rows(MetricRows(step=steps, loss=ones, accuracy=ones, lr=lr, tokens_per_s=ones, wall=ones))
        curves.refresh()
        qtbot.wait(50)
        label, vb = curves.warmup.label, curves.lr_plot.getViewBox()
        assert label.isVisible()
        assert vb.sceneBoundingRect().contains(label.sceneBoundingRect()), (label.sceneBoundingRect(),
                                                                            vb.sceneBoundingRect())
    finally:
        curves.hide()
        curves.deleteLater()


def test_a_short_panels_message_keeps_whole_sentences(qtbot):
    """On a short projector the message is one line of whole sentences, not one cut mid-word
    ("… “Use this mod…"), measured with the label's font; the tooltip keeps the rest."""
    from explorer.panels.training.run_message import RunMessage, whole_sentences

    stopped = ("Training stopped after 47 steps. The panels show “reverse” again. “Use this model” makes "
               "the trained model (step 47) the session's model.")
    assert (whole_sentences(stopped, lambda t: len(t) <= 70)
            == "Training stopped after 47 steps. The panels show “reverse” again. …")
    assert whole_sentences(stopped, lambda t: True) == stopped
    assert whole_sentences("p = 0.92 and loss 1.07.", lambda t: len(t) < 30) == "p = 0.92 and loss 1.07."  # no break at "0.92"
    assert whole_sentences(stopped, lambda t: len(t) < 20) == ""
    message = RunMessage()
    qtbot.addWidget(message)
    message.show_text(stopped)
    message.set_compact(True)
    first_two = message.fontMetrics().horizontalAdvance("Training stopped after 47 steps. The panels show “reverse” again. …")
    message.resize(first_two + 40, 30)
    assert message.text() == "Training stopped after 47 steps. The panels show “reverse” again. …"
    assert message.fontMetrics().horizontalAdvance(message.text()) <= message.width() - 8
    assert message.toolTip() == stopped
    message.resize(message.fontMetrics().horizontalAdvance("Training stopped") + 8, 30)
    assert message.text().startswith("Training stop") and message.text().endswith("…")  # elided: even one is too long


def test_a_long_probe_output_ends_in_an_ellipsis_with_the_whole_output_in_its_tooltip(qtbot, panel, state):
    """An untrained model's output (25 letters of noise) ran out of a read-only field with no
    sign of more: the probe's output line is never wider than its row, ends in "…" when cut,
    and names the whole output in its tooltip."""
    from dataclasses import replace
    panel.resize(700, 600)
    panel.show()
    noise = "nynynmmnynynmmnynynmmnynynmmnynynmm"
    result = replace(state.bundle.run("abc"), output_text=noise)
    panel.probe.show_snapshot(0, result, "abc")
    qtbot.wait(10)
    label = panel.probe.output_label
    assert label.text() == noise and noise in label.toolTip()
    shown = QLabel.text(label)  # (a QElidingLabel's text() is the whole; QLabel's, what is drawn)
    assert shown.endswith("…") and noise.startswith(shown[:-1])
    assert label.fontMetrics().horizontalAdvance(shown) <= label.width()
    assert label.geometry().right() <= label.parentWidget().width()


def test_the_waiting_notes_sit_inside_their_plots_on_a_second_run(qtbot):
    """After a run, the next one's empty plots say "waiting for the first steps" inside them: the
    views go back to the empty 0–1 ranges (auto-range kept the last run's, the notes off the plots)."""
    from explorer.panels.training.curves import TrainingCurves
    from explorer.panels.training.messages import MetricRows

    curves = TrainingCurves()  # not qtbot's: see test_the_warmup_label_stays_clear_of_the_learning_rate_curve
    try:
        curves.resize(900, 500)
        curves.show()
        curves.reset(warmup=10)
        steps = np.arange(1, 401)
        curves.add_rows(MetricRows(step=steps, loss=4.0 - steps / 100, accuracy=steps / 400, lr=np.full(400, 1e-3),
                                   tokens_per_s=5000 + steps, wall=steps / 10.0))
        curves.refresh()
        qtbot.wait(50)
        curves.reset(warmup=10)  # the second run
        qtbot.wait(50)
        for note, plot in zip(curves.waiting, (curves.loss_plot, curves.acc_plot, curves.speed_plot)):
            view = plot.getViewBox()
            (x0, x1), (y0, y1) = view.viewRange()
            assert note.isVisible() and x0 <= note.pos().x() <= x1 and y0 <= note.pos().y() <= y1, view.viewRange()
            text = note.textItem
            assert view.sceneBoundingRect().contains(text.mapRectToScene(text.boundingRect()))
    finally:
        curves.hide()
        curves.deleteLater()
