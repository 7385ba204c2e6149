"""Every panel other than decoding, with the two descendants of the paper's model: a decoder-only
(GPT-like) next-token LM and an encoder-only (BERT-like) masked LM, both on the 'facts' corpus.

What is checked is what a person sees: the input bar names what to type (a prompt, a text with
[MASK]) and marks the words the model filled in; the stepper and the attention panel name the
prompt + continuation axes and offer only the attention kinds the model has; the training panel
trains either kind with the same Trainer, labels the held-out curve by what it measures, and
continues a loaded variant but never a pretrained model.
"""
from __future__ import annotations

import pytest
import torch

pytest.importorskip("pytestqt")

from explorer.input_bar import InputBar  # noqa: E402
from explorer.panels.attention.panel import AttentionPanel  # noqa: E402
from explorer.panels.stepper.panel import StepperPanel  # noqa: E402
from explorer.panels.training import worker as training_worker  # noqa: E402
from explorer.panels.training.controls import choose  # noqa: E402
from explorer.panels.training.panel import TrainingPanel  # noqa: E402
from explorer.runner import Runner  # noqa: E402
from explorer.state import SessionState  # noqa: E402
from explorer.theme import current as palette  # noqa: E402
from model.data.tasks import CORPUS_TASKS, get_task  # noqa: E402
from model.interpret.output_line import output_html  # noqa: E402
from model.io.checkpoints import random_bundle  # noqa: E402
from model.train.request import TrainingRequest, build_trainer, default_probe  # noqa: E402
from model.train.run_setup import CONTINUE  # noqa: E402
from model.train.trainer import EvalEvent, TrainConfig, TrainingError  # noqa: E402

TIMEOUT = 60_000


def gpt():
    torch.manual_seed(0)
    return random_bundle("facts", kind="decoder_only", n_encoder_layers=0, d_model=32, n_heads=4, d_ff=64,
                         dropout=0.0)


def bert():
    torch.manual_seed(0)
    return random_bundle("facts", kind="encoder_only", n_decoder_layers=0, d_model=32, n_heads=4, d_ff=64,
                         dropout=0.0)


@pytest.fixture
def session(qtbot):
    state = SessionState()
    runner = Runner(state, synchronous=True)
    bar = InputBar(state, runner)
    qtbot.addWidget(bar)
    return state, runner, bar


# -- input bar -------------------------------------------------------------------------------
def test_the_input_bar_names_what_each_kind_reads(session):
    state, runner, bar = session
    runner.set_bundle(random_bundle("reverse", dropout=0.0), then_run="abc")
    assert bar.source_label.text() == "Source:" and not bar.target.isHidden()
    runner.set_bundle(gpt(), then_run="the duck")
    assert bar.source_label.text() == "Prompt:" and bar.target_label.text() == "Continuation:"
    assert not bar.target.isHidden()
    bar.target.setText("eats")
    runner.set_bundle(bert(), then_run="the [MASK] says moo")
    assert bar.source_label.text() == "Text with [MASK]:" and "[MASK]" in bar.source.placeholderText()
    assert bar.target.isHidden() and bar.target.text() == ""  # nothing to teacher-force
    examples = [bar.examples.itemData(i) for i in range(1, bar.examples.count())]
    assert examples == state.bundle.examples and all("[MASK]" in e for e in examples)


def test_choosing_an_example_runs_it(session):
    state, runner, bar = session
    runner.set_bundle(gpt(), then_run="the duck")
    row = bar.examples.findData("a sleepy lion")
    assert row > 0
    bar.examples.activated.emit(row)
    assert state.source_text == "a sleepy lion" and state.result.n_prompt == 3
    assert bar.examples.currentIndex() == 0  # ready for the next pick


def test_the_masked_lms_fill_ins_are_marked_and_the_prompt_is_set_apart(session):
    state, runner, bar = session
    runner.set_bundle(bert(), then_run="the [MASK] says moo")
    result = state.result
    filled = result.mask_predictions[0].pieces[0]
    text = bar.status.text()
    assert f'text-decoration: underline;">{filled}</span>' in text and "[MASK]" not in text
    assert text.startswith("Filled (1 mask)")
    assert f"{filled} " in bar.status.toolTip() and "%" in bar.status.toolTip()  # top-k candidates
    runner.set_bundle(gpt(), then_run="the duck")
    text = output_html(state.result, state.bundle, palette())
    prompt_at, continuation_at = text.index("the duck"), text.index("<b")
    assert text.startswith("Output (") and prompt_at < continuation_at
    assert text.count("Continuation") == 0  # (the input field beside it is "Continuation:")


# -- stepper and attention ---------------------------------------------------------------------
def test_the_stepper_names_the_decoder_only_axes_prompt_and_continuation(qtbot):
    state = SessionState()
    runner = Runner(state, synchronous=True)
    panel = StepperPanel(state)
    qtbot.addWidget(panel)
    runner.set_bundle(gpt(), then_run="the duck")
    assert state.select_step_named("decoder.embedding.tokens")
    view = panel.view
    assert view.rows_axis.labelText == "tokens: <bos> prompt | continuation"
    assert view.row_labels[:3] == ["<bos>", "the", "duck"] and len(view.row_labels) == len(state.result.tgt_pieces)
    runner.set_bundle(bert(), then_run="the [MASK] says moo")
    assert state.select_step_named("encoder.embedding.tokens")
    assert view.rows_axis.labelText == "input tokens" and view.row_labels == ["the", "[MASK]", "says", "moo"]


@pytest.mark.parametrize("make, text, kinds, names", [
    (gpt, "the duck", ["decoder_self"], "prompt | continuation"),
    (bert, "the [MASK] says moo", ["encoder"], "input")])
def test_the_attention_panel_offers_only_the_kinds_the_model_has(qtbot, make, text, kinds, names):
    state = SessionState()
    runner = Runner(state, synchronous=True)
    panel = AttentionPanel(state)
    qtbot.addWidget(panel)
    runner.set_bundle(make(), then_run=text)
    offered = [panel.picker.kind_box.itemData(i) for i in range(panel.picker.kind_box.count())]
    assert offered == kinds
    assert panel.data.axis_names(kinds[0]) == (names, names)
    panel.set_view("single")
    assert names in panel.single.rows_axis.labelText
    if kinds == ["decoder_self"]:  # rows: <bos> prompt continuation
        q_labels, _ = panel.data.labels["decoder_self"]
        assert q_labels == state.result.tgt_pieces and q_labels[1:3] == ["the", "duck"]


def test_the_encoder_decoder_keeps_source_and_target_names(qtbot):
    state = SessionState()
    runner = Runner(state, synchronous=True)
    panel = AttentionPanel(state)
    qtbot.addWidget(panel)
    runner.set_bundle(random_bundle("reverse", dropout=0.0), then_run="abc")
    assert panel.data.axis_names("cross") == ("target", "source")
    assert state.axis_title("tgt") is None  # the inspector's usual "target tokens"


# -- training ---------------------------------------------------------------------------------
@pytest.fixture
def panel(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("TRANSFORMER_EXPLORER_DATA", str(tmp_path / "appdata"))
    monkeypatch.setattr(training_worker, "worker_threads", lambda: 1)
    state = SessionState()
    runner = Runner(state, synchronous=True)  # (alive while this fixture is suspended)
    runner.set_bundle(random_bundle("reverse"), then_run="abc")
    p = TrainingPanel(state)
    qtbot.addWidget(p)
    p.controls.steps_spin.setValue(6)
    p.controls.warmup_spin.setValue(4)
    p.controls.batch_spin.setValue(8)
    yield p
    p.shutdown()


def enabled_tasks(controls) -> list[str]:
    model = controls.task_box.model()
    return [controls.task_box.itemData(r) for r in range(controls.task_box.count()) if model.item(r).isEnabled()]


def test_the_kind_chooser_restricts_the_tasks_to_the_corpus(panel):
    c = panel.controls
    assert "reverse" in enabled_tasks(c) and c.task_name() == "reverse"
    choose(c.kind_box, "decoder_only")
    assert enabled_tasks(c) == list(CORPUS_TASKS) and c.task_name() == "facts"
    assert panel.probe.probe_edit.text() == default_probe(get_task("facts"), "decoder_only")
    assert "[MASK]" not in panel.probe.probe_edit.text()
    choose(c.kind_box, "encoder_only")
    assert "[MASK]" in panel.probe.probe_edit.text()  # a masked LM is probed with a blank to fill
    req = panel.request()
    assert req.kind == "encoder_only" and req.task == "facts"
    choose(c.kind_box, "encoder_decoder")
    assert "reverse" in enabled_tasks(c) and c.task_name() == "facts"  # the choice stays, all tasks open


def test_a_variant_is_refused_a_task_that_is_not_a_corpus():
    with pytest.raises(TrainingError, match="corpus"):
        build_trainer(TrainingRequest(task="reverse", kind="decoder_only", train=TrainConfig(steps=1, batch_size=2)))


def test_continue_training_is_offered_for_variants_but_not_for_pretrained_models(panel):
    c, state = panel.controls, panel.state
    row = c.model_box.findData(CONTINUE)
    for bundle in (gpt(), bert()):
        state.set_bundle(bundle)
        assert c.model_box.model().item(row).isEnabled(), bundle.config.kind
    c.model_box.setCurrentIndex(row)
    assert c.kind() == "encoder_only" and not c.kind_box.isEnabled()
    pretrained = bert()
    pretrained.task = dict(pretrained.task, pretrained=True)
    state.set_bundle(pretrained)
    assert not c.model_box.model().item(row).isEnabled() and c.model_box.currentData() != CONTINUE
    assert "pretrained" in c.model_box.model().item(row).toolTip()


@pytest.mark.parametrize("kind, metric, kind_shown", [
    ("decoder_only", "next_token_accuracy", "decoder_self"), ("encoder_only", "masked_accuracy", "encoder")])
def test_training_a_variant_through_the_worker(qtbot, panel, kind, metric, kind_shown):
    from model.train.curve_texts import held_out_name

    c = panel.controls
    choose(c.kind_box, kind)
    evals = []
    panel.start()
    panel.run.worker.yielded.connect(lambda m: isinstance(m, EvalEvent) and evals.append(m))
    qtbot.waitUntil(lambda: panel.run is None and panel.phase == "idle", timeout=TIMEOUT)
    assert panel.step == 6
    assert evals and all(e.metric == metric for e in evals) and 0.0 <= evals[-1].score <= 1.0
    assert panel.curves.held_out_metric == metric and "held-out" in held_out_name(metric)
    assert panel.curves.curves["exact"].getData()[1][-1] == pytest.approx(evals[-1].score)
    label = panel.curves.legend.getLabel(panel.curves.curves["exact"]).text
    assert label == held_out_name(metric) and ("next-token" in label if kind == "decoder_only"
                                                      else "masked" in label)
    # The probe watched the kind's own attention, labelled by what each axis holds.
    assert panel.probe.kind == kind_shown and len(panel.timeline) >= 2
    assert panel.probe.map.rows_axis.labelText in ("predicting", "query (attending)")
    # The session keeps its reverse model; "Use this model" makes the trained copy (of the
    # same kind) the session's, with a forward on a text it reads (its probe: not "abc").
    state = panel.state
    assert state.session.bundle.task["name"] == "reverse" and state.frame.bundle is state.session.bundle
    bundle = panel.trained.bundle
    assert bundle.config.kind == kind and bundle.metrics["steps"] == 6
    assert bundle.metrics[metric] == pytest.approx(evals[-1].score) and bundle.metrics["objective"]
    panel.use_model()
    assert state.session.bundle is bundle and state.frame.bundle is bundle
    assert state.result is not None and state.result.trace.attention_kinds() == [kind_shown]
    # … and it can be trained on: "continue training" is offered for it.
    assert c.model_box.model().item(c.model_box.findData(CONTINUE)).isEnabled()


def test_the_diagram_shows_the_masked_lms_fill_ins_as_its_output(qtbot):
    from explorer.panels.architecture.panel import ArchitecturePanel
    from model.inference.figure1 import output_pieces

    state = SessionState()
    runner = Runner(state, synchronous=True)
    panel = ArchitecturePanel(state)
    qtbot.addWidget(panel)
    panel.resize(1280, 800)
    panel.show()
    runner.set_bundle(bert(), then_run="the [MASK] says moo")
    result = state.result
    guess = result.mask_predictions[0].pieces[0]
    assert output_pieces(result) == ["the", guess, "says", "moo"]
    line = panel.figure.token_texts["out"]  # whole where its column has room; else cut, whole in its tooltip
    qtbot.waitUntil(lambda: line.text().split() == ["the", guess, "says", "moo"], timeout=5_000)
    assert "encoder.layers.0.self_attn" in panel.blocks() and "decoder.layers.0.self_attn" not in panel.blocks()


def test_before_a_run_the_probe_titles_the_attention_the_kind_will_show(panel):
    c, probe = panel.controls, panel.probe
    assert probe.map.title.text() == "Encoder–decoder (cross) attention"  # one name per kind, in every panel
    choose(c.kind_box, "decoder_only")
    assert probe.map.title.text() == "Decoder masked self-attention"
    choose(c.kind_box, "encoder_only")
    assert probe.map.title.text() == "Encoder self-attention"


def test_a_narrow_accuracy_plot_names_the_held_out_metric(qtbot):
    from explorer.panels.training.curves import TrainingCurves

    curves = TrainingCurves()
    qtbot.addWidget(curves)
    curves.resize(400, 300)
    curves.show()
    qtbot.waitExposed(curves)
    curves.add_eval(EvalEvent(step=5, exact_match=0.25, metric="masked_accuracy"))
    assert "masked" in curves.acc_plot.titleLabel.text and "exact" not in curves.acc_plot.titleLabel.text
    curves.refresh()
    assert list(curves.curves["exact"].getData()[1]) == [0.25]
