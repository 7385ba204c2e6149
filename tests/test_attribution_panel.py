"""The attribution panel draws the session's text, recomputes (off the GUI thread) when a click
chooses another output token, and says plainly when a model has no output token to explain."""
from __future__ import annotations

import copy
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402

from explorer.panels.attribution.panel import AttributionPanel  # noqa: E402
from explorer.runner import Runner  # noqa: E402
from explorer.state import SessionState  # noqa: E402
from model.interpret.attribution import METHODS, attribute, build_problem, gradients  # noqa: E402
from model.interpret.attribution.gradients import short_value  # noqa: E402
from model.io.checkpoints import bundled_checkpoints, load_checkpoint  # noqa: E402

SOURCE = "abcdef"


@pytest.fixture
def setup(qtbot, monkeypatch):
    monkeypatch.setattr(gradients, "IG_STEPS", 8)  # the picture, not IG's accuracy, is tested here
    bundle = load_checkpoint(bundled_checkpoints()["reverse"])
    state = SessionState()
    runner = Runner(state, synchronous=True)
    panel = AttributionPanel(state)
    qtbot.addWidget(panel)
    panel.resize(1280, 720)
    panel.show()
    qtbot.waitExposed(panel)
    runner.set_bundle(bundle, then_run=SOURCE)
    assert panel.wait_until_drawn()
    return state, runner, panel, bundle


def test_panel_draws_bars_for_the_sessions_text_and_a_click_changes_them(setup, qtbot):
    state, runner, panel, bundle = setup
    assert panel.bars.pieces == list(SOURCE)
    assert panel.bars.bar_count() == len(METHODS) * len(SOURCE)
    assert panel.table.values.shape == (len(METHODS), len(METHODS))
    first = attribute(bundle, SOURCE, position=0, methods=["occlusion", "attention"])
    drawn = panel.bars.heights_of("occlusion")
    np.testing.assert_allclose(drawn, np.abs(first["occlusion"]) / np.abs(first["occlusion"]).max(), atol=1e-6)
    assert np.argmax(panel.bars.heights_of("attention")) == len(SOURCE) - 1  # output 1 reads input n
    # the trained model is sure of "f" (p ≈ 0.92): g×i's specks are explained, with both scales
    scores = attribute(bundle, SOURCE, position=0, methods=["grad_x_input", "integrated_gradients"])
    gxi, ig = (float(np.abs(scores[m]).max()) for m in ("grad_x_input", "integrated_gradients"))
    assert gxi < 0.05 * ig, (gxi, ig)  # (the case the note is for: else this test says nothing)
    assert "g×i ≈ 0" in panel.status.text() and short_value(ig) in panel.status.text()
    problem = build_problem(bundle, SOURCE, position=0)  # p by the model's own forward, not the problem's
    with torch.no_grad():
        p = bundle.model(problem.src, problem.tgt)[0, problem.row].softmax(-1)[problem.token_id].item()
    assert p > 0.8 and f"at p = {p:.2f}" in panel.status.text()
    assert "background" not in panel.status.styleSheet()  # an explanation reads as plain text, not a warning

    qtbot.mouseClick(panel.next_button, Qt.MouseButton.LeftButton)  # the second output token
    assert panel.wait_until_drawn()
    assert panel.shown.position == 1 and state.session.view("attribution_output") == "1"
    second = attribute(bundle, SOURCE, position=1, methods=["occlusion"])["occlusion"]
    now = panel.bars.heights_of("occlusion")
    np.testing.assert_allclose(now, np.abs(second) / np.abs(second).max(), atol=1e-6)
    assert not np.allclose(now, drawn)
    assert np.argmax(panel.bars.heights_of("attention")) == len(SOURCE) - 2
    assert panel.output_box.currentIndex() == 1

    runner.run("xyz")  # the session's new text is followed
    assert panel.wait_until_drawn()
    assert panel.bars.pieces == list("xyz") and panel.shown.position == 1


def test_a_model_without_an_output_token_is_named_not_drawn(setup):
    state, runner, panel, _ = setup
    encoder = copy.copy(load_checkpoint(bundled_checkpoints()["bert-facts"]))
    encoder.task = dict(encoder.task, pretrained=True)  # no trained masked-LM head, as a pretrained encoder
    runner.set_bundle(encoder, then_run="the cow says moo")
    assert panel.wait_until_drawn()
    assert panel.bars.bar_count() == 0 and panel.shown is None
    assert "masked-LM head" in panel.status.text() and "background" in panel.status.styleSheet()  # a warning


def test_the_spearman_table_writes_each_rho_and_every_method_name_is_drawn(qtbot):
    """Each cell says its ρ as papers print it; the methods' names stay readable on a narrow
    table (the map's label policy: all drawn, turned if need be, none cut)."""
    import numpy as np
    from scipy.stats import spearmanr

    from explorer.panels.attribution.spearman import SpearmanTable

    table = SpearmanTable()
    qtbot.addWidget(table)
    names = ["attn", "head", "roll", "flow", "g×i", "IG", "occl"]
    scores = np.random.default_rng(0).normal(size=(7, 9))
    rho = spearmanr(scores, axis=1).statistic
    rho[2, 3] = rho[3, 2] = np.nan  # undefined: blank
    table.show_rho(names, rho)
    assert table.value(0, 0) == "1" and table.value(2, 3) == ""
    assert table.value(0, 1) == f"{rho[0, 1]:.2f}".replace("0.", ".")
    for width in (700, 330):
        table.resize(width, 320)
        table.show()
        qtbot.waitUntil(lambda: table.label_counts()[1][0] > 0)
        assert table.label_counts() == [(7, 7), (7, 7)], width  # every name drawn, rows and columns


def test_a_panel_just_shown_is_drawn_by_wait_until_drawn(qtbot, monkeypatch):
    """A show starts the work only after the queued events (entering presentation shows and
    hides every panel); a figure that waits right after the show still gets the drawn panel,
    not "Computing …" (the contact sheet's attribution tiles were taken mid-computation)."""
    monkeypatch.setattr(gradients, "IG_STEPS", 8)
    state = SessionState()
    runner = Runner(state, synchronous=True)
    runner.set_bundle(load_checkpoint(bundled_checkpoints()["reverse"]), then_run=SOURCE)
    panel = AttributionPanel(state)
    qtbot.addWidget(panel)
    panel.resize(1280, 720)
    panel.show()  # no event processed after it: the refresh has not started
    assert not panel.job.running and panel.shown is None
    assert panel.wait_until_drawn()
    assert panel.shown is not None and panel.shown_request == panel.request()
    assert not panel.bar.isVisible()


def test_the_work_records_the_attention_once_reuses_the_frames_output_and_reports_ig_refinements(monkeypatch):
    """What keeps a large model's attribution bearable: the frame's greedy output is not decoded
    again, all four attention methods share one recorded pass, and every refinement of
    integrated gradients is a progress report; the scores are `attribute`'s own."""
    import re

    from model.interpret.attribution import attention_scores
    from model.interpret.attribution.side_by_side import compare_methods
    from model.interpret.frame import compute_frame
    for name, value in (("IG_STEPS", 2), ("IG_MAX_STEPS", 8), ("IG_TOLERANCE", 0.0)):  # refined twice: 2, 4, 8 points
        monkeypatch.setattr(gradients, name, value)
    bundle = load_checkpoint(bundled_checkpoints()["gpt-facts"])
    frame = compute_frame(bundle, "the cow says")
    own = tuple(i for i in frame.decode.output_ids if i != frame.decode.eos_id)
    expected = attribute(bundle, "the cow says", position=1, head=(1, 2))
    recorded = []
    real_record = attention_scores.record
    monkeypatch.setattr(attention_scores, "record", lambda model: recorded.append(1) or real_record(model))
    monkeypatch.setattr(bundle, "generate_ids", lambda *a, **k: pytest.fail("the frame's output was decoded again"))
    work = compare_methods(bundle, "the cow says", None, 1, (1, 2), own)
    reports = []
    while True:
        try:
            reports.append(next(work))
        except StopIteration as done:
            view = done.value
            break
    assert len(recorded) == 2  # the head's label, and every attention method's weights
    refinements = [re.search(r"integrated gradients, (\d+) points", what) for _done, _total, what in reports]
    assert [int(found.group(1)) for found in refinements if found] == [2, 4, 8]
    assert [done for done, _total, _what in reports] == sorted(done for done, _total, _what in reports)
    assert reports[-1][0] == len(METHODS) == reports[-1][1] - 1
    assert view.outputs == bundle.tgt_tokenizer.pieces(list(own) + [bundle.tgt_tokenizer.eos_id])
    for method in METHODS:
        np.testing.assert_allclose(view.scores[method], expected[method], atol=1e-6, err_msg=method)


def test_closing_the_window_stops_the_work_at_its_next_report(qtbot, monkeypatch):
    import time

    from PySide6.QtWidgets import QVBoxLayout, QWidget

    from explorer.panels.attribution import panel as attribution_panel
    ended = []

    def endless(request):  # work that only ends when told to: a large model's integrated gradients
        try:
            while True:
                time.sleep(0.01)
                yield 5, 8, "Computing integrated gradients, 512 points…"
        finally:
            ended.append(True)

    monkeypatch.setattr(attribution_panel, "compare_request", endless)
    state = SessionState()
    runner = Runner(state, synchronous=True)
    window = QWidget()
    panel = AttributionPanel(state)
    QVBoxLayout(window).addWidget(panel)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    runner.set_bundle(load_checkpoint(bundled_checkpoints()["reverse"]), then_run=SOURCE)
    qtbot.waitUntil(lambda: panel.job.running and "512 points" in panel.status.text(), timeout=10_000)
    window.close()
    qtbot.waitUntil(lambda: not panel.job.running and bool(ended), timeout=5_000)
    assert panel.shown is None  # nothing half-computed is drawn
