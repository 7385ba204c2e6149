"""Presentation is a layout: at 1280×720 and 1024×768 every panel, alone on the screen, shows
its texts whole, its plots at a readable size, and nothing outside the window — measured with
QFontMetrics and widget / item rectangles (tests/layout_checks.py), not compared as pixels.

What is measured, per panel (architecture, step, attention, positional, decoding, training):
- only that panel's dock is on screen, inside the window, and its scroll area does not scroll;
- every shown QLabel / QAbstractButton: its text's advance (QFontMetricsF; rich text through a
  QTextDocument; wrapped text by heightForWidth) fits the widget — or it is elided on purpose
  ("…" and the whole text in its tooltip);
- every shown pyqtgraph ViewBox (colour bars excepted) is at least 160×120 screen pixels, and
  every plot title fits the row its plot gives it (pyqtgraph fixes it at 30 px);
- every square-celled (aspect-locked) map covers ≥ 60 % of its plot area each way, so its token
  labels sit against it (`loose_maps`);
- decoding: the step-by-step maps' titles whole (not elided);
- a diverging colour bar (the forward pass' signed tensors): its
  negative, zero and positive tick labels all drawn whole;
- Figure 1: each block's name and shape inside the block's rectangle, no two text items of the
  figure overlapping, all of them in the view, and at 1280×720 a cap height of ≥ 11 px on screen;
  block names ≥ 12 px at 1024×768 and ≥ 13.5 px at 1280×720.
"""
from __future__ import annotations

import os
from contextlib import contextmanager

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
import pyqtgraph as pg  # noqa: E402
from PySide6.QtGui import QFontMetricsF  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from explorer import presentation, style  # noqa: E402
from layout_checks import (MIN_CAP_HEIGHT, block_name_caps, clipped_texts, colorbar_problems, cramped_titles,  # noqa: E402
                           drawn_labels, figure_problems, long_axis_titles, loose_maps, outside_window, overflowing_canvases,
                           settle_until_still, shown, small_plots)

PANELS = ("architecture", "step", "attention", "positional", "decoding", "heads", "lens", "attribution",
          "compare", "leak", "training")
SIZES = ((1280, 720), (1024, 768))


def settle(qtbot, rounds: int = 4) -> None:
    """Layout, pyqtgraph's deferred geometry, the figure's re-arrangement: until nothing moves
    (every window on screen; at least `rounds` rounds)."""
    from PySide6.QtWidgets import QMainWindow
    windows = [w for w in QApplication.topLevelWidgets() if isinstance(w, QMainWindow) and w.isVisible()]
    for window in windows:
        assert settle_until_still(qtbot, window, least=rounds), "the layout never stopped moving"


@contextmanager
def showing(window, qtbot, bundle, text: str):
    """The presenting window on another model and input, its own (untrained reverse, "attention")
    back afterwards: the module's window is shared by every test."""
    try:
        run_and_wait(window, qtbot, bundle, text)
        yield
    finally:
        run_and_wait(window, qtbot, own_model(), "attention")


def own_model():
    """The shared window's untrained reverse model, the same whichever tests ran before in this
    process (random_bundle draws from torch's global generator): with another, "attention" decoded
    to <eos> at once, and the decoding check measured a 1 × 9 map that fills 18% of its plot (CI's
    failure of stop 28, order-dependent)."""
    import torch
    from model.io.checkpoints import random_bundle
    with torch.random.fork_rng():
        torch.manual_seed(0)
        return random_bundle("reverse")


def run_and_wait(window, qtbot, bundle, text: str) -> None:
    window.runner.set_bundle(bundle, then_run=text)
    qtbot.waitUntil(lambda: window.state.frame is not None and window.state.frame.source == text, timeout=20_000)


@pytest.fixture(scope="module", params=SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def presenting(request, qapp, tmp_path_factory):
    """One presenting window per size for every panel's check (each test brings its panel to
    the front alone, which is all that differs between them)."""
    from explorer.launch import close_window
    from explorer.main_window import MainWindow
    from explorer.runner import Runner
    from explorer.state import SessionState
    from PySide6.QtCore import QSettings
    size = request.param
    # as the app starts: its stylesheet first (without one, entering presentation left the top
    # bar's labels at their normal size, and the panels more height than on a real projector)
    presentation.apply_theme(QApplication.instance(), "light")
    state = SessionState()
    runner = Runner(state, synchronous=True)
    settings = QSettings(str(tmp_path_factory.mktemp("layout") / "s.ini"), QSettings.IniFormat)
    window = MainWindow(state, runner, settings=settings, restore=False, persist=False)
    window.resize(*size)
    window.show()
    runner.set_bundle(own_model(), then_run="attention")
    window.lecture.presentation.enter(full_screen=False)  # scale and theme are process-wide: this module's
    window.resize(*size)                                  # other windows are built in test_presentation.py
    for _ in range(4):
        QApplication.processEvents()
    yield window, size
    window.lecture.presentation.leave()
    presentation.apply_theme(QApplication.instance(), "light")
    close_window(qapp, window)


@pytest.mark.parametrize("name", PANELS)
def test_each_panel_alone_fits_at_projector_sizes(presenting, qtbot, name):
    window, size = presenting
    window.focus_panel(name)
    settle(qtbot)
    panel, dock = window.panels[name], window.docks[name]
    shown_docks = [n for n, d in window.docks.items() if d.isVisible()]
    assert shown_docks == [name]
    problems = (outside_window(panel, window) + clipped_texts(panel) + small_plots(panel) + cramped_titles(panel)
                + loose_maps(panel) + overflowing_canvases(panel) + long_axis_titles(panel))
    if name == "architecture":
        problems += figure_problems(panel, MIN_CAP_HEIGHT if size == (1280, 720) else None)
    if name == "decoding":  # the step-by-step maps' titles whole, never "Mask in forc…"
        problems += [f"title {m.title.text()!r} elided" for m in (panel.mask_map, panel.self_map, panel.cross_map)
                     if shown(m) and m.title.text().replace("\n", " ") != m.title.full_text]  # (a break is whole)
    assert not problems, f"{name} at {size[0]}×{size[1]}:\n  " + "\n  ".join(problems)
    assert dock.geometry().width() >= size[0] - 4  # the panel has the window's whole width


@pytest.mark.parametrize("name, step", [("step", "encoder.embedding.tokens"), ("step", "encoder.layers.0.self_attn.scores")])
def test_diverging_colour_bars_draw_every_tick(presenting, qtbot, name, step):
    """A signed map's colour bar at presentation size: −, 0 and + ticks, each whole."""
    window, size = presenting
    window.focus_panel(name)
    assert window.state.select_step_named(step)
    settle(qtbot)
    panel = window.panels[name]
    bars = [i for v in panel.findChildren(pg.GraphicsView) if shown(v) for i in v.scene().items()
            if isinstance(i, pg.ColorBarItem) and i.isVisible() and min(i.axis.range) < 0 < max(i.axis.range)]
    assert bars, f"{name}: no diverging colour bar on screen"
    problems = colorbar_problems(panel)
    assert not problems, f"{name} at {size[0]}×{size[1]}:\n  " + "\n  ".join(problems)


# Figure 1's block names on screen (cap height: QFontMetricsF × the item's device transform);
# the wider 1280×720 projector must draw them larger than 1024×768 does.
LEAST_NAME_CAP = {(1024, 768): 12.0, (1280, 720): 13.5}


def test_figure1_block_names_reach_a_back_row(presenting, qtbot):
    window, size = presenting
    window.focus_panel("architecture")
    settle(qtbot)
    panel = window.panels["architecture"]
    caps = block_name_caps(panel)
    assert len(caps) >= 10  # every block of both columns measured
    assert min(caps) >= LEAST_NAME_CAP[size], f"block names' cap height {min(caps):.1f} px at {size}"
    assert not figure_problems(panel, None)


def _probe_labels(panel):
    """(row labels drawn, column labels drawn, left axis title, row label point size)."""
    from PySide6.QtGui import QFontInfo
    left, bottom = panel.probe.plot.getAxis("left"), panel.probe.plot.getAxis("bottom")
    return ([t for _v, t in left._tickLevels[0]], [t for _v, t in bottom._tickLevels[0]], left.labelText,
            QFontInfo(left.style["tickFont"]).pointSize())


def test_the_training_probe_names_every_row_and_column(presenting, qtbot):
    """The probe map on a projector names every row and column of the default probe, with a
    run's message showing (one line), and — during a run, when the settings fold away — of a
    16-letter probe (17 rows: the lecture preset's longest input and its <eos>), at ≥ 8 pt."""
    from model.io.checkpoints import bundled_checkpoints, load_checkpoint

    window, size = presenting
    window.focus_panel("training")
    panel = window.panels["training"]
    from explorer.panels.training.messages import RunInfo
    info = RunInfo("reverse", "d_model 64, 2+2 layers, 4 heads, d_ff 256 · 239,262 parameters", "cpu", 400, 200,
                   "attention", 1, {}, [], [])
    panel.say(info.headline() + " The other panels show this run's model in place of “reverse” until it ends "
              "or you go back.")
    settle(qtbot)
    assert panel.message.compact  # a short panel (both projectors): one line of whole sentences,
    assert panel.message.text().startswith("Training reverse on cpu (1 thread): 239,262 parameters.")  # whole
    assert panel.message.toolTip().startswith("Training reverse on cpu (1 thread): 239,262 parameters. "
                                              "Sizes: d_model 64")  # the rest in the tooltip
    assert panel.message.height() <= 2 * panel.message.fontMetrics().height()  # one line
    model = load_checkpoint(bundled_checkpoints()["reverse"])
    for probe, phase in (("attention", "idle"), ("abcdefghijklmnop", "running")):
        panel.phase = phase
        panel._show_phase()
        assert panel.controls.settings.isVisible() == (phase == "idle")  # fixed during a run: folded
        result = model.run(probe)
        panel.probe.show_snapshot(100, result, probe)
        settle(qtbot)
        rows, cols, title, pt = _probe_labels(panel)
        assert rows == list(result.out_pieces) and cols == list(result.src_pieces), (size, probe, title)
        assert title == "predicting" and pt >= 8
        assert panel.probe.layer_box.currentText() == "L2"  # short picker names, beside the map's title
        assert panel.probe.map_title.geometry().top() == panel.probe.layer_box.geometry().top() or size[0] < 1280
    panel.phase = "idle"
    panel._show_phase()
    assert panel.controls.settings.isVisible()


def test_the_training_probe_says_how_many_rows_it_names_when_not_all_fit(presenting, qtbot):
    """A probe longer than the map has room for at 8 pt (24 letters, settings shown): row labels
    shrink to the floor before they thin, and the axis says how many it names."""
    from model.io.checkpoints import bundled_checkpoints, load_checkpoint

    window, size = presenting
    window.focus_panel("training")
    panel = window.panels["training"]
    settle(qtbot)
    probe = "abcdefghijklmnopqrstuvwx"
    result = load_checkpoint(bundled_checkpoints()["reverse"]).run(probe)
    panel.probe.show_snapshot(100, result, probe)
    settle(qtbot)
    rows, _cols, title, pt = _probe_labels(panel)
    assert len(rows) < len(result.out_pieces) and pt == 8
    assert title in (f"predicting ({len(rows)} of 25)", f"{len(rows)} of 25")  # the count, whole, along the map
    left = panel.probe.plot.getAxis("left")
    assert left.label.boundingRect().width() <= left.geometry().height()  # (its text runs up the axis)


def test_an_axis_title_keeps_its_count_when_the_axis_is_short():
    from explorer.panels.training.probe_axes import axis_title
    advance = len  # one pixel a character
    assert axis_title("predicting", 10, 10, 5, advance) == "predicting"  # all named: no count
    assert axis_title("predicting", 9, 17, 100, advance) == "predicting (9 of 17)"
    assert axis_title("predicting", 9, 17, 12, advance) == "9 of 17"  # the count, never cut


def test_the_training_curves_number_their_value_axes(presenting, qtbot):
    """Every curve's value axis draws numbers, each whole inside the axis; the learning rate's
    at least three, in units of its power of ten (a fixed 62-px axis drew only "0" on a projector)."""
    import numpy as np
    from explorer.panels.training.messages import MetricRows
    from model.train.optimizer import linear_decay_lr

    window, size = presenting
    window.focus_panel("training")
    curves = window.panels["training"].curves
    curves.reset(warmup=200, decay_steps=400)
    steps = np.arange(1, 451)
    lr = np.array([linear_decay_lr(int(s), 64, 200, 1.0, 400) for s in steps])
    loss = 4.0 * np.exp(-steps / 150) + 0.5
    curves.add_rows(MetricRows(step=steps, loss=loss, accuracy=1 - loss / 5, lr=lr, tokens_per_s=40 + 10 * np.sin(steps / 30),
                               wall=steps / 15.0))
    curves.refresh()
    settle(qtbot)
    for plot in (curves.loss_plot, curves.acc_plot, curves.lr_plot, curves.speed_plot):
        axis = plot.getAxis("left")
        labels = drawn_labels(axis)
        bounds = axis.boundingRect()
        assert len(labels) >= (3 if plot is curves.lr_plot else 2), (size, plot.titleLabel.text, labels)
        for rect, text in labels:
            assert bounds.contains(rect), f"{text!r} at {rect} outside its axis {bounds} ({size})"
    from PySide6.QtCore import QPointF
    label, vb = curves.warmup.label, curves.lr_plot.getViewBox()  # the warm-up's label hides no rate
    box = label.sceneBoundingRect()
    assert vb.sceneBoundingRect().contains(box), size
    crossed = [s for s, y in zip(steps, lr) if box.contains(vb.mapViewToScene(QPointF(float(s), y)))]
    assert not crossed or curves.warmup.line.zValue() < curves.curves["lr"].zValue(), size  # (drawn under it)
    rate = curves.lr_plot.getAxis("left")
    assert rate.labelText == "lr (×10⁻³)"  # the lecture preset peaks at 8.8e-3
    shown = sorted(float(t) * 1e-3 for _r, t in drawn_labels(rate))
    low, high = curves.lr_plot.getViewBox().viewRange()[1]
    assert 0 <= shown[0] and shown[-1] <= high and low <= lr.max() <= high  # the numbers are the rates, rescaled
    assert shown[-1] >= lr.max() / 2


def test_the_all_heads_grid_names_every_token_of_a_date(presenting, qtbot):
    """`dates` on "22 November 2026" (16 tokens) at 1280×720: the grid read "2 ␣ o e b r 2 2".
    It now shows as many layers as have room for every label (one, here: "layer 1 of 2"), and
    names every token under and beside each map. At 1024×768 four maps side by side are too
    narrow for 16 columns each: the axis says how many it shows."""
    from explorer.drawing.token_axis import MIN_LABEL_PT
    from explorer.runner import load_bundle

    window, size = presenting
    with showing(window, qtbot, load_bundle("dates"), "22 November 2026"):
        window.focus_panel("attention")
        panel = window.panels["attention"]
        panel.set_view("grid")
        settle(qtbot, 6)
        pane = panel.grid.pane("encoder")
        tokens = panel.data.labels["encoder"][0]
        assert len(tokens) == 16
        rows = drawn_labels(pane.query_axis)
        if size == (1280, 720):
            assert pane.layout.layers == 1 and "layer 1 of 2" in pane.plot.getAxis("left").labelText
            assert [t for _r, t in rows] == [t for t in tokens], rows  # every row, beside the maps
            cols = [t for _r, t in drawn_labels(pane.key_axis)]
            assert cols == tokens * 4  # every column, under each of the four heads' maps
            assert min(pane.query_axis.fit.pt, pane.key_axis.fit.pt) >= MIN_LABEL_PT
        elif len(rows) < len(tokens) * pane.layout.layers:
            assert "of" in pane.query_axis.labelString()  # "showing k of n labels"


def _grid_names_every_token(window, qtbot, letters: str, layer: int, heads: tuple[int, ...]):
    """For each of `heads` of `layer` selected in turn on `reverse` reading `letters`: check that
    the all-heads grid names every token under and beside each map at ≥ 8 pt, then yield the
    encoder's pane and the head for the test's own checks."""
    from explorer.drawing.token_axis import MIN_LABEL_PT
    from explorer.runner import load_bundle

    with showing(window, qtbot, load_bundle("reverse"), letters):
        window.focus_panel("attention")
        panel = window.panels["attention"]
        panel.set_view("grid")
        for head in heads:
            window.state.select_attention("encoder", layer, head)
            settle(qtbot, 6)
            pane = panel.grid.pane("encoder")
            tokens = panel.data.labels["encoder"][0]
            assert len(tokens) == len(letters)
            rows = [t for _r, t in drawn_labels(pane.query_axis)]
            cols = [t for _r, t in drawn_labels(pane.key_axis)]
            assert rows == tokens * pane.layout.layers and cols == tokens * pane.layout.heads, (len(rows), len(cols))
            assert min(pane.query_axis.fit.pt, pane.key_axis.fit.pt) >= MIN_LABEL_PT
            yield pane, head


def test_the_all_heads_grid_names_every_token_of_a_24_token_input(presenting, qtbot):
    """24 letters on `reverse` (2 layers × 4 heads): four 24-token maps side by side are too
    small for every label on either projector, so the grid shows a page of the layer's heads
    ("heads 1–3 of 4") and names every token under and beside each map. Choosing head 4 turns
    to the page that holds it."""
    window, size = presenting
    for pane, head in _grid_names_every_token(window, qtbot, "abcdefghijklmnopqrstuvwx", 0, (0, 3)):
        shown_heads = pane.nheads or 4  # (a page of heads here; all four where a font fits them)
        assert 2 <= shown_heads <= 4 and pane.head0 <= head < pane.head0 + shown_heads, (size, pane.head0, shown_heads)
        if shown_heads < 4:
            assert f"heads {pane.head0 + 1}–{pane.head0 + shown_heads} of 4" in pane.plot.titleLabel.text
        assert f"L1 H{head + 1}" in pane.plot.titleLabel.text
        assert pane.box.isVisible()  # the selected head is on the page, boxed


def test_the_all_heads_grid_names_every_token_of_a_32_token_input(presenting, qtbot):
    """The issue's bar: no label dropped for inputs up to 32 tokens at 1280×720. 32 letters on
    `reverse` leave room for one map a page on either projector (two would squeeze the rows):
    the map fills the canvas's height, every token is named, the left axis says which layer and
    head (and, where it fits, that Layer: and Head: turn the page), and the lone map wears no selection box."""
    window, size = presenting
    for pane, head in _grid_names_every_token(window, qtbot, "abcdefghijklmnopqrstuvwxyzabcdef", 1, (1, 3)):
        assert (pane.first, pane.head0, pane.nheads) == (1, head, 1), size  # one map a page, on either projector
        full = f"layer 2 of 2 · head {head + 1} of 4 (Layer, Head: pages)"  # the hint where it fits the axis,
        left = pane.plot.getAxis("left")  # the whole note in its tooltip always
        assert left.labelText in (full, full.split(" (")[0]) and left.toolTip() == full
        assert not long_axis_titles(window.panels["attention"]), long_axis_titles(window.panels["attention"])
        assert pane.plot.titleLabel.text.endswith(f"L2 H{head + 1}") and not pane.box.isVisible()


def test_the_decoding_controls_settle_on_one_arrangement_with_every_text_whole(presenting, qtbot):
    """gpt-facts' strategy list is wider ("Follow the continuation"): its controls flipped between
    one line and two on every layout pass (the rows inherited the outer spacing, 16 px on one
    line, 2 on two, so each arrangement measured the other as fitting) and the beamer drew the
    step counter cut, "step 7 ,". The arrangement holds, and every text of the panel is whole."""
    from explorer.runner import load_bundle

    window, size = presenting
    with showing(window, qtbot, load_bundle("gpt-facts"), "the duck"):
        window.focus_panel("decoding")
        settle(qtbot)
        controls = window.panels["decoding"].controls
        direction = controls.rows.direction()
        for _ in range(3):
            controls._arrange()
            QApplication.processEvents()
            assert controls.rows.direction() == direction
        label = controls.step_label
        assert label.text().startswith("step ") and label.width() >= label.sizeHint().width(), label.text()
        assert not clipped_texts(window.panels["decoding"]), clipped_texts(window.panels["decoding"])


def test_the_decoding_bars_name_the_chosen_token_whole(presenting, qtbot):
    """The argmax's bar is labelled with the whole token ("<eos>", not "<eo…"): a label wider
    than its slot shrinks (to 8 pt at least) before it is cut, each label inside its slot."""
    from PySide6.QtGui import QFontInfo
    from explorer.runner import load_bundle

    window, size = presenting
    text = "transformer"
    with showing(window, qtbot, load_bundle("reverse"), text):
        window.focus_panel("decoding")
        panel = window.panels["decoding"]
        panel.set_step(len(text))  # the last step: <eos> is chosen
        settle(qtbot, 6)
        axis = panel.bars.getPlotItem().getAxis("bottom")
        labels = [t for _r, t in drawn_labels(axis)]
        assert labels and labels[0] == "<eos>", labels
        assert not any(t.endswith("…") for t in labels), labels
        assert QFontInfo(axis.style["tickFont"]).pointSize() >= 8


def test_the_decoding_bars_show_fewer_candidates_rather_than_shrink_their_names(presenting, qtbot):
    """gpt-facts' ten candidates ("happy", "neigh", "<pad>") in one plot shrank every name to
    8 pt on a 1280-px beamer: the bars show as many of the most probable as have room for their
    names at the labels' own size (≥ 3), each label whole and inside the widget (its descenders
    too: the axis was sized from text painted at a smaller size, "happy" cut through its "p")."""
    from PySide6.QtCore import QPointF
    from explorer.runner import load_bundle

    window, size = presenting
    with showing(window, qtbot, load_bundle("gpt-facts"), "the duck"):
        window.focus_panel("decoding")
        panel = window.panels["decoding"]
        settle(qtbot, 6)
        bars = panel.bars
        axis = bars.getPlotItem().getAxis("bottom")
        drawn = drawn_labels(axis)
        names = [t for _r, t in drawn]
        assert len(names) >= 3 and not any(t.endswith("…") for t in names), names
        heights = [float(h) for h in bars.heights[: len(names)]]
        assert heights == sorted(heights, reverse=True) and bars.token_ids[0] == bars.chosen  # the most probable, in order
        assert axis.style["tickFont"].pointSizeF() == pytest.approx((style.BASE_POINT_SIZE + 1) * style.scale())
        for rect, text in drawn:
            bottom = axis.mapToScene(QPointF(rect.center().x(), rect.bottom())).y()
            assert bottom <= bars.viewport().height(), (text, bottom, bars.viewport().height())
            assert QFontMetricsF(axis.style["tickFont"]).height() <= axis.geometry().height()


def test_the_parallel_pass_table_shows_every_position_without_scrolling(presenting, qtbot):
    """"Masked vs. unmasked": the table of 12 positions (input, prediction with and without the
    mask) scrolled sideways inside its half at 1024×768; it now wraps into bands of positions,
    each numbered, every cell inside the table and wide enough for its token."""
    from PySide6.QtGui import QFontMetrics
    from explorer.runner import load_bundle

    window, size = presenting
    text = "transformer"
    with showing(window, qtbot, load_bundle("reverse"), text):
        window.focus_panel("decoding")
        panel = window.panels["decoding"]
        view = panel.parallel
        panel.tabs.setCurrentWidget(view)
        view.remove_mask.setChecked(True)
        settle(qtbot, 6)
        table = view.table
        n = view.positions()
        assert n == len(text) + 1 and view.run.unmasked is not None
        assert table.horizontalScrollBar().maximum() == 0 and table.verticalScrollBar().maximum() == 0
        port = table.viewport().rect()
        metrics = QFontMetrics(table.font())
        for c in range(n):
            for r in range(3):
                item = view.cell(r, c)
                rect = table.visualItemRect(item)
                assert port.contains(rect), (size, r, c, rect, port)
                assert metrics.horizontalAdvance(item.text()) <= rect.width(), (size, item.text())
        numbers = [table.item(row, col).text() for row in range(0, table.rowCount(), 4)
                   for col in range(table.columnCount()) if table.item(row, col) is not None]
        assert numbers == [str(i) for i in range(n)]
        assert [view.cell(1, c).text() for c in range(n - 1)] == list(text[::-1])  # with the mask: the reversal
        bands = view._band
        # filled while its tab is hidden (a new input), it is cut again when shown
        panel.tabs.setCurrentIndex(0 if panel.tabs.widget(0) is not view else 1)
        window.runner.run("transform")
        qtbot.waitUntil(lambda: window.state.frame.source == "transform", timeout=20_000)
        panel.tabs.setCurrentWidget(view)
        settle(qtbot, 4)
        assert view.positions() == len("transform") + 1 and view._band >= min(bands, view.positions())
        assert table.horizontalScrollBar().maximum() == 0
        view.remove_mask.setChecked(False)


def test_the_forward_pass_reads_its_step_beside_a_map_that_fills_its_plot(presenting, qtbot):
    """The forward pass at a projector size: a 16-token self-attention map had ~220 px in a
    full-width plot, its row labels far left of it, the texts around it scrolled off. Now the
    step's texts stand in a column beside the map, the map fills its plot and names every
    token, its axes say query and key, and its title counts layers from 1."""
    from explorer.runner import load_bundle

    window, size = presenting
    with showing(window, qtbot, load_bundle("dates"), "22 November 2026"):
        window.focus_panel("step")
        assert window.state.select_step_named("encoder.layers.0.self_attn.weights")
        settle(qtbot, 6)
        panel = window.panels["step"]
        view = panel.view
        assert panel.beside and panel.info.isVisible()
        assert panel.info.geometry().left() >= view.geometry().right()  # the column is right of the map
        assert panel.name_label.text() == "Encoder layer 1 · self-attention · weights"
        assert "encoder.layers.0.self_attn.weights" in panel.name_label.toolTip()  # (its path, folded)
        assert view.left.labelText.startswith("query") and view.bottom.labelText.startswith("key")
        tokens = window.state.axis_labels("src")
        assert [t for _r, t in drawn_labels(view.left)] == [t.replace(" ", "␣") for t in tokens]
        assert [t for _r, t in drawn_labels(view.bottom)] == [t.replace(" ", "␣") for t in tokens]
        box, image = view.plot.vb.sceneBoundingRect(), view.image.sceneBoundingRect()
        assert image.height() >= 300  # from 220 px
        assert box.contains(image.center())  # square cells by the aspect lock, the map in its plot
        scroll = window.docks["step"].widget()
        assert not clipped_texts(panel)  # (the map keeps square cells, the spare room beside it)
        assert getattr(scroll, "verticalScrollBar", None) is None or scroll.verticalScrollBar().maximum() == 0


def test_the_beam_tree_labels_are_projector_sized_and_never_overlap(presenting, qtbot):
    """The tour's beam scene (dates, beam 4): the tree's labels are sized in their HTML, so the
    presentation's font pass left them at ~8–11 px; they are now scaled like every text, and a
    label a slot cannot hold (a score under its token) is left to the hover tip, not drawn over
    the next slot's token. The best path keeps every token and score, inside the plot."""
    import re
    from explorer.runner import load_bundle
    from explorer.style import BASE_POINT_SIZE, SMALL_POINT_SIZE
    from model.interpret.frame import DecodeSettings

    window, size = presenting
    with showing(window, qtbot, load_bundle("dates"), "Nov 22, 2026"):
        window.state.session.set_decoding(DecodeSettings(strategy="beam", beam_size=4, alpha=0.6))
        window.focus_panel("decoding")
        settle(qtbot, 6)
        view = window.panels["decoding"].beam_view
        assert view.isVisible() and view.result is not None
        labels = [label for label in view.labels if label.isVisible()]
        sizes = [float(s) for label in labels for s in re.findall(r"font-size:([\d.]+)pt", label.textItem.toHtml())]
        assert sizes and min(sizes) >= SMALL_POINT_SIZE * presentation.applied_scale() - 0.5 > BASE_POINT_SIZE
        box = view.getPlotItem().getViewBox().sceneBoundingRect()
        rects = []  # the text's own area: its document's (empty) margins left out
        for label in labels:
            m = label.textItem.document().documentMargin()
            rects.append(label.mapRectToScene(label.boundingRect()).adjusted(m, m, -m, -m))
        for label, (_n, on_best, (_c, _w, token), score) in zip(view.labels, view._label_parts):
            if on_best:  # the best path: token and score, always
                assert label.isVisible() and label.textItem.toPlainText().split() == [token, *([score] if score else [])]
        for i, a in enumerate(rects):
            assert box.contains(a), (size, labels[i].textItem.toPlainText(), a, box)
            for j in range(i):
                assert not a.intersects(rects[j]), (size, labels[i].textItem.toPlainText(),
                                                     labels[j].textItem.toPlainText())
