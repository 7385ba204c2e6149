"""The mask-leak panel: a real tiny lab run on its worker thread, driven like a user would, then
what is drawn compared with the lab's own numbers; and a window closed mid-run."""
from __future__ import annotations

import time

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QThreadPool  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from explorer import presentation, theme  # noqa: E402
from explorer.panels.leak.panel import LeakPanel  # noqa: E402
from explorer.state import SessionState  # noqa: E402
from model.interpret.leak_lab import (  # noqa: E402
    RUN_LABELS,
    RUNS,
    LeakConfig,
    LeakResult,  # noqa: E402
)
from support import make_main_window  # noqa: E402

TIMEOUT = 60_000  # ms: CI machines are shared
TINY = dict(steps=20, d_model=16, n_heads=2, batch_size=8, warmup=10, eval_size=12)


@pytest.fixture
def panel(qtbot):
    p = LeakPanel(SessionState())
    qtbot.addWidget(p)
    p.resize(1200, 640)
    p.show()
    yield p
    p.shutdown()


def settle(qtbot, rounds: int = 4) -> None:
    for _ in range(rounds):  # layout, pyqtgraph's deferred geometry
        QApplication.processEvents()
        qtbot.wait(5)


def test_a_run_draws_both_curves_the_bars_and_the_maps(qtbot, tmp_path):
    """In the main window: a lab run fills the curves, the bars and the maps (check_run).
    (Whether the finished lab fits a beamer: the layout sweep.)"""
    window = make_main_window(qtbot, tmp_path, size=(1280, 720))
    window.focus_panel("leak")
    check_run(qtbot, window.panels["leak"])


def check_run(qtbot, panel):
    results = []
    panel.start(LeakConfig(**TINY), threads=1)
    panel.job.progress.connect(lambda m: results.append(m) if isinstance(m, LeakResult) else None)
    assert not panel.start_button.isEnabled() and panel.stop_button.isEnabled()
    assert panel.bars.pending.isVisible()  # the empty bars say when they fill, not bare axes …
    for heatmap in panel.maps.maps.values():  # the empty maps say what they wait for
        assert heatmap.note.isVisible() and "training ends" in heatmap.note.toPlainText()
        assert not heatmap.plot.getAxis("left").isVisible()  # no bare axes beside it
    assert panel.lab_model.text().startswith("Own model: 1 layer")  # what the lab trains
    assert "d_model" in panel.lab_model.toolTip()  # … and its width, on asking
    qtbot.waitUntil(lambda: panel.run is None, timeout=TIMEOUT)
    assert results and panel.result is results[0]
    assert not panel.bars.pending.isVisible()
    assert not any(heatmap.note.isVisible() for heatmap in panel.maps.maps.values())
    assert all(heatmap.plot.getAxis(name).isVisible()
               for heatmap in panel.maps.maps.values() for name in ("left", "bottom"))  # the tokens named again
    result = results[0]
    for run in RUNS:  # every step of both runs, as the lab recorded them
        x, y = panel.loss_plot.curves[run].getData()
        assert np.array_equal(x, np.arange(1, TINY["steps"] + 1))
        assert np.allclose(y, result.runs[run].losses)
    assert [label.text for _, label in panel.loss_plot.legend.items] == ["with mask", "no mask"]
    assert panel.loss_plot.floor.isVisible() and panel.loss_plot.floor.value() == pytest.approx(result.loss_floor)
    # the ceiling is the best guess's expected score ("≈"); its band, where that guess's score on
    # these sentences may fall, is drawn around it over the two next-word categories
    assert panel.bars.ceiling_label.toPlainText() == f"ceiling ≈{result.best_accuracy:.0%}"
    assert f"≈{result.best_accuracy:.0%} ceiling" in panel.message.text()
    band = panel.bars.band.opts
    assert list(band["x0"]) == pytest.approx([result.best_accuracy - result.ceiling_spread] * 2)
    assert list(band["width"]) == pytest.approx([2 * result.ceiling_spread] * 2)
    for run in RUNS:
        r = result.runs[run]
        assert np.allclose(panel.bars.values[run], [r.teacher_forced, r.free_running, r.generated])
    masked, leaking = (panel.maps.maps[r] for r in RUNS)
    assert masked.blocked is not None and np.triu(masked.matrix, 1).max() == 0.0  # hatched, and nothing there
    assert leaking.blocked is None and np.triu(leaking.matrix, 1).max() > 0.0
    assert masked.matrix.shape == (len(result.example),) * 2
    for run in RUNS:  # each map's title whole on its short lines (never elided)
        ahead = np.triu(panel.maps.maps[run].matrix, 1).sum(-1).mean()
        title = panel.maps.titles[run]
        assert title.text() == f"{RUN_LABELS[run]}\n{ahead:.0%} ahead" and title.isVisible()
        assert title.width() >= title.sizeHint().width()
    for run in RUNS:  # each run's own line: its label, the held-out opening and what it generated from it
        prompt, continuation = result.runs[run].generations[0]
        line = panel.generations[run]
        assert line.isVisible() and line.text().startswith(RUN_LABELS[run]) and prompt in line.text()
        assert line.text().endswith(continuation or "(nothing)") and continuation in line.toolTip()
    assert panel.start_button.isEnabled()
    assert str(round(result.runs["leaking"].final_loss, 2))[:3] in panel.message.text()


def test_choosing_a_head_redraws_both_maps_from_the_result(qtbot, panel):
    panel.start(LeakConfig(**TINY), threads=1)
    qtbot.waitUntil(lambda: panel.result is not None, timeout=TIMEOUT)
    data = [panel.head_combo.itemData(i) for i in range(panel.head_combo.count())]
    index = data.index((0, 1))
    panel.head_combo.setCurrentIndex(index)
    for run in RUNS:
        assert np.allclose(panel.maps.maps[run].matrix, panel.result.runs[run].attention[0, 1])
    panel.head_combo.setCurrentIndex(data.index((0, None)))
    assert np.allclose(panel.maps.maps["leaking"].matrix, panel.result.runs["leaking"].attention[0].mean(0))
    app = QApplication.instance()
    try:  # a theme change recolours the curves and the legend's text in place
        presentation.apply_theme(app, "dark")
        assert panel.loss_plot.curves["leaking"].opts["pen"].color().name() == theme.DARK.series[1]
        assert all(label.opts["color"] == theme.DARK.text for _, label in panel.loss_plot.legend.items)
    finally:
        presentation.apply_theme(app, "light")
    assert panel.loss_plot.curves["leaking"].opts["pen"].color().name() == theme.LIGHT.series[1]


def test_closing_mid_run_stops_and_joins_the_worker(qtbot, panel):
    panel.start(LeakConfig(**{**TINY, "steps": 100_000}), threads=1)
    run = panel.run
    qtbot.waitUntil(lambda: panel.step >= 2, timeout=TIMEOUT)
    start = time.monotonic()
    panel.close()  # closeEvent → shutdown: stop without scoring, join
    assert not panel.job.running and panel.run is None and run.stop_asked == LeakPanel.shutdown_args
    assert time.monotonic() - start < 10
    QApplication.processEvents()  # late messages of the old run are dropped quietly
    assert panel.result is None


def test_the_first_build_leaves_the_attention_maps_to_a_later_turn(qtbot):
    """Building the panel is light: the two maps come a turn later (or when first asked for)."""
    p = LeakPanel(SessionState())
    qtbot.addWidget(p)
    assert not p.maps.built  # the panel's own build did not make them
    qtbot.waitUntil(lambda: len(p.maps.built) == len(RUNS))
    assert list(p.maps.maps) == list(RUNS)


def test_a_panel_deleted_mid_run_ends_its_run_and_drops_its_late_messages(qtbot, capsys):
    import shiboken6
    pool = QThreadPool.globalInstance()
    threads_before = pool.maxThreadCount()
    panel = LeakPanel(SessionState())
    panel.start(LeakConfig(**{**TINY, "steps": 100_000}), threads=1)
    assert pool.maxThreadCount() == threads_before + 1  # the lab holds a pool thread while it runs
    run = panel.run
    qtbot.waitUntil(lambda: panel.step >= 2, timeout=TIMEOUT)
    shiboken6.delete(panel)  # (a dock rebuilt or a window torn down without a close event)
    assert run.stop_asked == LeakPanel.shutdown_args
    assert QThreadPool.globalInstance().waitForDone(TIMEOUT)  # the worker has ended
    for _ in range(5):
        QApplication.processEvents()
    assert "already deleted" not in capsys.readouterr().err
    assert pool.maxThreadCount() == threads_before  # given back by the run itself, the panel being gone
