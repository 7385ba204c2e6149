"""The training panel's rules without widgets (model/train): what a run may learn and takes from
the loaded model, the request its settings make, the probe map, the viewed snapshot timeline,
the pacing of live work, which text a run's model is shown on, and the end-of-run sentence."""
from __future__ import annotations

import numpy as np
import pytest

from model.data.tasks import CORPUS_TASKS, get_task
from model.train.live_messages import Offer, run_ended
from model.train.pacing import Pacer
from model.train.presets import LECTURE, LECTURE_PRESETS
from model.train.probe_map import ProbeMap, expected_kind, pick_names
from model.train.request import BUILTIN_TASKS, new_bundle
from model.train.run_setup import CONTINUE, TSV, RunSetup, fitting_task, model_defaults, task_refusal
from model.train.shown_text import given_back, readable, stand_in
from model.train.steering import ACTIVE_PHASES, phase_actions
from model.train.timeline import ViewedTimeline, timeline_texts


@pytest.fixture(scope="module")
def reverse():
    return new_bundle(get_task("reverse"), "tiny", 0, "encoder_decoder")


@pytest.fixture(scope="module")
def gpt():
    return new_bundle(get_task("facts"), "tiny", 0, "decoder_only")


def test_variants_learn_only_corpus_tasks_and_fall_back_to_the_first():
    for task in BUILTIN_TASKS + (TSV,):
        assert task_refusal("encoder_decoder", task) is None  # pairs of any task, a file's too
        refused = task_refusal("decoder_only", task)
        assert (refused is None) == (task in CORPUS_TASKS)
        assert refused is None or "text corpus" in refused and CORPUS_TASKS[0] in refused
        assert fitting_task("decoder_only", task) == (task if task in CORPUS_TASKS else CORPUS_TASKS[0])


def test_a_new_run_takes_the_loaded_models_kind_and_task(reverse, gpt):
    assert model_defaults(reverse, "decoder_only") == ("encoder_decoder", "reverse")
    assert model_defaults(gpt, "encoder_decoder") == ("decoder_only", "facts")


def test_the_setup_makes_its_request(reverse):
    setup = RunSetup(task="reverse", steps=123, warmup=7, batch_size=5, device="cpu")
    r = setup.request(reverse, "abc", start_paused=True, eval_size=9)
    assert (r.task, r.preset, r.kind, r.continue_from, r.probe, r.start_paused) == ("reverse", "tiny",
                                                                                     "encoder_decoder", None, "abc", True)
    assert (r.train.steps, r.train.warmup, r.train.batch_size, r.train.device, r.train.eval_size) == (123, 7, 5, "cpu", 9)
    assert RunSetup(preset=CONTINUE).request(reverse, "").continue_from is reverse
    assert RunSetup(task="tsv", tsv_path="x.tsv").request(None, "").tsv_path == "x.tsv"
    assert RunSetup(task="reverse", tsv_path="x.tsv").request(None, "").tsv_path is None  # a file only when chosen
    lecture = RunSetup(task="translation", preset=LECTURE, kind="decoder_only").request(None, "")
    assert lecture.kind == LECTURE_PRESETS["translation"].kind and lecture.target == LECTURE_PRESETS["translation"].target


def test_the_probe_map_is_the_recorded_attention(reverse, gpt):
    result = reverse.run("abc")
    shown = ProbeMap.of(result, "cross", 1, None)
    expected = result.trace.attention("cross", 1)[0].mean(0).numpy()
    assert np.allclose(shown.values, expected) and shown.cols == list(result.src_pieces)[: expected.shape[1]]
    one = ProbeMap.of(result, "cross", 0, 2)
    assert np.allclose(one.values, result.trace.attention("cross", 0)[0, 2].numpy())
    assert expected_kind("encoder_decoder") == "cross" and expected_kind("decoder_only") == "decoder_self"
    assert pick_names(2, heads=True, short=True) == ["mean", "H1", "H2"]
    assert pick_names(2, heads=False, short=False) == ["layer 1", "layer 2"]


def test_a_past_snapshot_stays_viewed_while_the_run_goes_on():
    timeline = ViewedTimeline(capacity=4)
    assert timeline.select(0) is None and timeline.viewed_step() == 0
    for step in range(3):
        assert timeline.add_viewed(step * 10, step)  # live: the newest is shown
    assert timeline.select(1) == 1 and not timeline.live and timeline.viewed_step() == 10
    for step in range(3, 12):
        assert not timeline.add_viewed(step * 10, step)
    assert timeline.viewed_step() == timeline[timeline.index_of_step(10)][0]  # the nearest kept after thinning
    assert timeline.add_viewed(200, 20, follow=True) and timeline.live
    assert timeline.select(99) == len(timeline) - 1 and timeline.live


def test_the_pacer_spaces_work_by_its_cost():
    pacer = Pacer(1.0, 0.1)
    assert pacer.wait(now=5.0) == 0.0  # nothing done yet: at once
    pacer.started(now=5.0)
    assert pacer.wait(now=5.25) == pytest.approx(0.75)
    pacer.cost = 0.5  # a costly piece: the gap grows to cost / share
    assert pacer.wait(now=5.25) == pytest.approx(4.75) and pacer.wait(cost=0.0, now=7.0) == 0.0
    pacer.reset()
    assert pacer.wait(now=5.1) == 0.0
    with pytest.raises(ValueError):
        Pacer(1.0, 0.0)


def test_a_run_of_another_task_is_shown_on_its_probe_and_the_text_comes_back(reverse):
    digits = new_bundle(get_task("addition"), "tiny", 0, "encoder_decoder")
    source = "hello there"
    assert not readable(digits, source) and readable(digits, "12+3") and readable(reverse, source)
    assert stand_in(digits, source, "12+3") == "12+3" and stand_in(reverse, source, "12+3") is None
    assert stand_in(digits, source, "no digits") is None  # no better text to show: keep the session's
    assert given_back(reverse, "12+3", (source, "target", "12+3")) == (source, "target", False)
    assert given_back(reverse, source, None) is None  # it reads the session's text: nothing to do
    example = given_back(digits, source, None)
    assert example[0] in digits.examples and readable(digits, example[0]) and example[2]


def test_the_end_of_a_run_says_how_to_keep_the_model(reverse):
    offer = Offer(reverse, 40, "stopped")
    text = run_ended("stopped", 47, offer, "reverse", was_shown=True)
    assert text.startswith("Training stopped after 47 steps.") and "“reverse” again" in text and "step 40" in text
    assert run_ended("finished", 1_000, offer, "reverse", False) == "Training finished after 1,000 steps."


def test_the_timeline_says_live_or_which_snapshot():
    assert timeline_texts(0, 0, 0, True, True)[0] == "step —"
    assert timeline_texts(5, 4, 1200, True, True)[0] == "live"
    assert timeline_texts(5, 4, 1200, True, False)[0] == "step 1,200 (latest)"  # a stopped run's newest
    label, tip, slider = timeline_texts(5, 1, 300, False, True)
    assert label == "step 300 (past)" and "step 300" in tip and slider.startswith("Snapshot 2 of 5")


@pytest.mark.parametrize("phase", ["idle", "building", "running", "paused", "finishing"])
def test_each_phase_allows_what_steering_can_do_then(phase):
    for has_model in (False, True):
        actions = phase_actions(phase, has_model)
        assert actions["pause"] == (phase == "running") and actions["start"] == actions["step"]
        assert actions["start"] == (phase not in ACTIVE_PHASES or phase == "paused")  # (paused: resume)
        assert actions["stop"] == (phase in ACTIVE_PHASES and phase != "finishing")  # (finishing: stopping already)
        assert actions["keep"] == (phase in ("running", "paused") or phase == "idle" and has_model)
        assert not (actions["start"] and actions["pause"])


def test_each_text_message_has_its_words_its_level_and_where_it_is_said():
    """The run's text messages read as sentences: a probe it cannot read is a warning here only;
    a save, a failed save and a training error are said in the status line too."""
    from model.train.live_messages import REPORTS, Failed, ProbeFailed, Saved, SaveFailed, report

    assert report(ProbeFailed("unknown symbol 'Z'")) == ("Probe input: unknown symbol 'Z'", "warning", False)
    assert report(Saved("/tmp/run")) == ("Checkpoint saved to /tmp/run", "info", True)
    text, level, everywhere = report(SaveFailed("disk full"))
    assert "disk full" in text and level == "error" and everywhere
    assert report(Failed("NaN loss at step 12")) == ("NaN loss at step 12", "error", True)
    assert set(REPORTS) == {ProbeFailed, Saved, SaveFailed, Failed}
