"""The induction-heads panel: a tiny lab run on its worker thread, started and stopped like a
user would, and what is drawn compared with the lab's own measurements."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from PySide6.QtWidgets import QApplication  # noqa: E402

from explorer import presentation, style  # noqa: E402
from explorer.panels.induction.panel import InductionPanel  # noqa: E402
from explorer.state import SessionState  # noqa: E402
from model.train.induction import InductionConfig, InductionMeasure, phase_text  # noqa: E402

TIMEOUT = 60_000  # ms: CI machines are shared
TINY = dict(vocab=12, seq_len=16, min_len=3, max_len=6, d_model=16, n_heads=2, batch_size=8, eval_size=8,
            eval_every=5, warmup=5)


@pytest.fixture
def panel(qtbot):
    p = InductionPanel(SessionState())
    qtbot.addWidget(p)
    p.resize(1200, 600)
    p.show()
    yield p
    p.shutdown()


def test_start_draws_the_curves_and_the_map_and_stop_stops(panel, qtbot):
    seen: list[InductionMeasure] = []
    panel.start(InductionConfig(**TINY, steps=100_000), threads=1)
    panel.job.progress.connect(lambda m: seen.append(m) if isinstance(m, InductionMeasure) else None)
    assert not panel.start_button.isEnabled() and panel.stop_button.isEnabled()
    assert panel.map.note.isVisible() and "training" in panel.map.note.toPlainText()
    assert panel.lab_model.text() == "Own model: 2 layers × 2 heads, attention only"
    qtbot.waitUntil(lambda: panel.step >= 30 and len(panel.measures) >= 4, timeout=TIMEOUT)
    panel.stop()
    qtbot.waitUntil(lambda: panel.run is None, timeout=TIMEOUT)
    assert panel.start_button.isEnabled() and not panel.stop_button.isEnabled()
    QApplication.processEvents()
    stopped_at = panel.step
    assert stopped_at < 100_000 and panel.measures[-1].step == stopped_at  # the stop's own measurement came
    qtbot.wait(300)
    assert panel.step == stopped_at  # … and nothing after it

    x, y = panel.loss_plot.curve.getData()  # every step's loss, in order
    assert np.array_equal(x, np.arange(1, stopped_at + 1)) and np.all(np.isfinite(y))
    assert [m.step for m in panel.measures] == [m.step for m in seen]
    x, y = panel.icl_plot.curve.getData()
    assert np.array_equal(x, [m.step for m in seen]) and np.allclose(y, [m.icl for m in seen])
    assert sorted(panel.head_plot.curves) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    for (layer, head), curve in panel.head_plot.curves.items():
        assert np.allclose(curve.getData()[1], [m.scores[layer, head] for m in seen])
    assert [label.text for _, label in panel.head_plot.legend.items] == ["H1", "H2", "L1"]

    last = seen[-1]  # the map at the end: the best head over the example's two copies
    layer, head = last.best_head()
    s, n = last.example_start, last.example_length
    assert not panel.map.note.isVisible()
    assert np.allclose(panel.map.matrix, last.attention[layer, head][s:s + 2 * n, s:s + 2 * n])
    ids = list(last.example[s:s + 2 * n])
    labels = panel.map.row_labels  # one letter per token id: the same id, the same letter, and only it
    assert labels == panel.map.col_labels and len(labels) == len(ids)
    assert all((a == b) == (i == j) for a, i in zip(labels, ids) for b, j in zip(labels, ids))
    assert all(len(label) == 1 for label in labels) and labels[:n] == labels[n:]
    assert panel.map.title.text().startswith(f"L{layer + 1}H{head + 1}")
    assert panel.message.text() == phase_text(panel.phase, last)


def test_phase_marker_follows_the_measurements(panel):
    """Measurements handed to the panel directly: the marker appears where the ICL score has
    come half its way, on all three plots."""
    cfg = InductionConfig(**TINY)
    scores = np.zeros((cfg.n_layers, cfg.n_heads))
    attention = np.zeros((cfg.n_layers, cfg.n_heads, cfg.seq_len, cfg.seq_len))
    example = list(range(1, cfg.seq_len + 1))
    for step, icl in zip(range(0, 200, 20), [0, -0.1, -0.1, -0.2, -1.0, -2.0, -2.8, -3.0, -3.0, -3.0]):
        panel.show_measure(InductionMeasure(step, step / 10, 3.0, 3.3, 3.3 + icl, icl, scores, attention, example, 2, 5))
    assert panel.phase is not None and panel.phase.step == 100  # the first reading past −1.5, for good
    for plot in (panel.loss_plot, panel.icl_plot, panel.head_plot):
        assert plot.phase.isVisible() and plot.phase.value() == 100
    assert "Phase change at step 100" in panel.message.text()


def test_presenting_dark_restyles_without_losing_the_run(panel, qtbot, qapp):
    cfg = InductionConfig(**TINY)
    scores = np.full((cfg.n_layers, cfg.n_heads), 0.5)
    attention = np.full((cfg.n_layers, cfg.n_heads, cfg.seq_len, cfg.seq_len), 0.1)
    panel.show_measure(InductionMeasure(0, 0.0, 3.0, 3.3, 3.3, 0.0, scores, attention, list(range(1, 17)), 2, 5))
    presentation.apply_theme(qapp, "dark")
    try:
        QApplication.processEvents()
        assert panel.map.matrix.shape == (10, 10)  # redrawn, not emptied
        assert panel.icl_plot.curve.opts["pen"].color().name() == style.current().accent
    finally:
        presentation.apply_theme(qapp, "light")



def test_the_first_build_leaves_the_head_curves_to_a_later_turn(qtbot):
    """Building the panel is light: every head's curve and the legend come a turn later."""
    p = InductionPanel(SessionState())
    qtbot.addWidget(p)
    assert not p.head_plot.curves
    cfg = InductionConfig()
    qtbot.waitUntil(lambda: len(p.head_plot.curves) == cfg.n_layers * cfg.n_heads)
    assert [label.text for _, label in p.head_plot.legend.items][:cfg.n_heads] == [
        f"H{h + 1}" for h in range(cfg.n_heads)]


def test_runs_do_not_pile_up_connections_and_a_deleted_panel_ends_its_run(qtbot):
    """However many runs a panel has started, one handler stops the run under way when the panel is
    deleted (its widgets gone)."""
    from PySide6.QtCore import SIGNAL, QThreadPool

    panel = InductionPanel(SessionState())
    receivers = []
    for _ in range(3):
        panel.start(InductionConfig(**TINY, steps=10), threads=1)
        qtbot.waitUntil(lambda: panel.run is None, timeout=TIMEOUT)
        receivers.append(panel.receivers(SIGNAL("destroyed(QObject*)")))
    assert receivers[0] == receivers[-1]
    panel.start(InductionConfig(**TINY, steps=100_000), threads=1)
    steering = panel.run
    qtbot.waitUntil(lambda: panel.step >= 2, timeout=TIMEOUT)
    panel.deleteLater()
    qtbot.waitUntil(lambda: steering.stop_asked is not None, timeout=TIMEOUT)
    assert QThreadPool.globalInstance().waitForDone(TIMEOUT)  # the worker has ended
    assert steering.stop_asked == InductionPanel.shutdown_args


def test_the_maps_axis_titles_are_drawn_at_the_text_size_in_use(panel, qapp):
    """A map first drawn while presenting has its axis titles at the presenting size (its axes were
    hidden under the waiting note when the canvases were rescaled)."""
    from explorer.presentation import set_scale

    cfg = InductionConfig(**TINY)
    scores = np.full((cfg.n_layers, cfg.n_heads), 0.5)
    attention = np.full((cfg.n_layers, cfg.n_heads, cfg.seq_len, cfg.seq_len), 0.1)
    set_scale(qapp, 1.6)
    try:
        panel.show_measure(InductionMeasure(0, 0.0, 3.0, 3.3, 3.3, 0.0, scores, attention, list(range(1, 17)), 2, 5))
        for name, text in (("left", "query"), ("bottom", "key")):
            axis = panel.map.plot.getAxis(name)
            assert axis.labelText == text and axis.labelStyle["font-size"] == style.css_pt(style.SMALL_POINT_SIZE)
    finally:
        set_scale(qapp, 1.0)


def test_lab_plot_axis_titles_read_at_the_body_size_larger_than_the_tick_numbers(qtbot):
    from explorer.panels.live_lab.plot_look import LabPlot
    for scale in (1.0, 1.6):
        style.set_scale(scale)
        try:
            plot = LabPlot("Loss", "nats / token")
            qtbot.addWidget(plot)
            plot.restyle()
            for name in ("bottom", "left"):
                axis = plot.axes.getAxis(name)
                title_pt = float(axis.labelStyle["font-size"].removesuffix("pt"))
                assert title_pt == pytest.approx(style.role_font("body").pointSizeF(), abs=0.1)
                assert title_pt > axis.style["tickFont"].pointSizeF()
        finally:
            style.set_scale(1.0)
