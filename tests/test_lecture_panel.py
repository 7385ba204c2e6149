"""The training panel's lecture preset: the request it builds is the preset's, and the
progress line shows the time to the target as a run goes."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from explorer.panels.training.controls import TrainingControls  # noqa: E402
from model.data.streams import ScheduledTask  # noqa: E402
from model.train.presets import lecture_preset  # noqa: E402
from model.train.progress import progress_text, target_text  # noqa: E402
from model.train.request import LECTURE, build_trainer  # noqa: E402


def choose(c: TrainingControls, task: str) -> None:
    c.task_box.setCurrentIndex(c.task_box.findData(task))
    c._on_task_activated(c.task_box.currentIndex())
    c.model_box.setCurrentIndex(c.model_box.findData(LECTURE))


@pytest.mark.parametrize("task", ["reverse", "facts"])
def test_choosing_the_lecture_preset_shows_and_requests_its_settings(controls, task):
    choose(controls, task)
    preset = lecture_preset(task)
    assert (controls.steps_spin.value(), controls.warmup_spin.value(), controls.batch_spin.value()) == (
        preset.steps, preset.warmup, preset.batch_size)
    assert controls.kind() == preset.kind and not controls.kind_box.isEnabled()
    request = controls.setup().request(None, "")
    assert request.preset == LECTURE and request.kind == preset.kind
    assert request.train == preset.train_config(device=request.train.device)
    assert (request.target, request.eval_interval) == (preset.target, preset.eval_every_s)


def test_the_lecture_request_builds_the_presets_model_and_stream(controls):
    choose(controls, "reverse")
    controls.batch_spin.setValue(32)  # a changed batch: the buckets follow it
    trainer = build_trainer(controls.setup().request(None, ""))
    preset = lecture_preset("reverse")
    c = trainer.model.config
    assert (c.d_model, c.d_ff, c.n_encoder_layers, c.dropout) == (
        preset.model["d_model"], preset.model["d_ff"], preset.model["n_encoder_layers"], 0.0)
    assert trainer.config.lr_scale == preset.lr_scale and trainer.config.batch_size == 32
    if isinstance(trainer.task, ScheduledTask):
        assert trainer.task.batch_size == 32
    assert trainer.task.max_src_len == 16
    assert len(trainer.next_batch().src) == 32


def test_a_task_without_a_lecture_preset_says_so(controls):
    from model.train.trainer import TrainingError

    choose(controls, "sort")
    with pytest.raises(TrainingError, match="no lecture preset"):
        build_trainer(controls.setup().request(None, ""))


def test_progress_shows_the_time_to_target():
    walls, steps = np.array([0.0, 10.0]), np.array([1.0, 200.0])
    running = progress_text(200, 3000, "running", walls, steps, target=target_text(0.99, 0.87, None, 23.0))
    assert running == "step 200 · 87% → 99% · 23 s"
    done = progress_text(480, 3000, "running", walls, steps, target=target_text(0.99, 1.0, 41.0, 50.0))
    assert done == "step 480 · 99% at 41 s"
    assert "left" in progress_text(200, 3000, "running", walls, steps)  # no target: the plain clock


def test_before_the_first_step_the_progress_says_what_is_happening():
    """Not "step 0 / 400 · 0 %" for seconds (a tour's training scene looked stuck)."""
    none = np.array([])
    assert progress_text(0, 400, "building", none, none) == "building the model…"
    assert progress_text(0, 400, "running", none, none) == "starting: the first steps…"
    assert progress_text(0, 400, "running", none, none, target=target_text(0.99, None, None, 0.0)).startswith("starting")
    assert progress_text(0, 400, "paused", none, none) == "step 0 / 400 · 0 % · paused"
    assert progress_text(0, 400, "running", none, none, done=True) == "step 0 / 400 · 0 % · stopped"
    assert progress_text(1, 400, "running", none, none).startswith("step 1 / 400")


@pytest.mark.parametrize("target, confirmed", [(0.0, True), (1.01, False)])
def test_a_check_that_reaches_the_target_is_confirmed_on_more_pairs(controls, target, confirmed):
    """The lecture clock stops on a large held-out check, not on a lucky 99/100: a quick check at
    or above the target is repeated on TARGET_CONFIRM_SIZE pairs, and that score is the one sent."""
    from model.train.live_loop import TARGET_CONFIRM_SIZE, TrainingLoop
    from model.train.steering import Steering

    choose(controls, "reverse")
    request = controls.setup().request(None, "")
    request.target = target
    loop = TrainingLoop(request, Steering(request))
    loop.trainer = build_trainer(request)
    loop.trainer.step()
    events = [m for m in loop.evaluate(force=True) if hasattr(m, "score")]
    assert len(events) == 1
    quick = request.train.eval_size
    assert quick < TARGET_CONFIRM_SIZE
    assert events[0].n == (TARGET_CONFIRM_SIZE if confirmed else quick)
    assert events[0].score == pytest.approx(loop.trainer.evaluate(events[0].n).score)


def test_the_rate_plot_names_the_schedule_the_run_uses(qtbot):
    from explorer.panels.training.curves import TrainingCurves

    curves = TrainingCurves()
    qtbot.addWidget(curves)
    curves.resize(1400, 800)
    curves.reset(warmup=200, decay_steps=400)  # the lecture preset's
    assert curves.lr_plot.titleLabel.text == "Learning rate"  # short by design; the schedule in its tooltip
    assert "linear decay to step 400" in curves.lr_plot.toolTip()
    curves.reset(warmup=400)  # a plain run: Eq. 3 throughout
    assert "Eq. 3" in curves.lr_plot.toolTip() and "linear decay" not in curves.lr_plot.toolTip()


def test_the_progress_bar_shows_the_runs_line_and_names_it_whole_in_its_tooltip(qtbot):
    """The training progress is Qt's own bar: the run's line is drawn beside it on one eliding
    line, is the bar's format and both tooltips, and the value follows the step."""
    from explorer.panels.training.controls import TrainingControls

    controls = TrainingControls()
    qtbot.addWidget(controls)
    text = "step 191 · 31% → 99% · 12 s"
    controls.set_progress(191, 400, text)
    assert controls.progress.format() == text and controls.progress.toolTip() == text
    assert controls.progress_line.text() == text and controls.progress_line.toolTip() == text
    assert controls.progress_line.wordWrap() is False  # one line: elided, never wrapped and clipped
    assert controls.progress.value() == 191 and controls.progress.maximum() == 400

def test_a_probe_map_too_short_for_every_row_label_says_how_many_it_shows(qtbot):
    from explorer.panels.training.probe import ProbeView
    from model.io.checkpoints import bundled_checkpoints, load_checkpoint

    result = load_checkpoint(bundled_checkpoints()["reverse"]).run("abcdefghijklmnop")
    probe = ProbeView()
    qtbot.addWidget(probe)
    probe.resize(700, 900)
    probe.show()
    probe.show_snapshot(10, result, "abcdefghijklmnop")
    rows = len(result.out_pieces)
    heatmap = probe.map
    qtbot.wait(20)
    probe.grab()  # (the axes count what they drew when they are painted)
    assert heatmap.rows_axis.drawn == rows and heatmap.rows_axis.labelText == "predicting"  # tall: every row named
    assert heatmap.count_text() == ""
    probe.resize(700, 330)
    qtbot.wait(20)
    probe.grab()
    shown = heatmap.rows_axis.drawn
    assert 0 < shown < rows and f"{shown} of {rows} labels" in heatmap.count_text()  # (the map's one count)
