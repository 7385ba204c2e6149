"""What the training panel draws: the learning-rate plot (Eq. 3 warming up then decaying, the
whole run's schedule ahead of it), the curves' titles and legend as the canvas narrows, the
warm-up label clear of the curve and whole inside its plot, the waiting notes inside their
plots, the whole message on a projector, the probe output's ellipsis, and the narrow layout's tabs.
(tests/test_training_panel.py: driving a run.)
"""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from PySide6.QtWidgets import QLabel  # noqa: E402

import training_panel_setup as setup  # noqa: E402
from model.train.trainer import noam_lr  # noqa: E402
from training_panel_setup import TIMEOUT, configure, wait_idle, wait_steps  # noqa: E402

pipeline, state, panel = setup.pipeline, setup.state, setup.panel  # the shared fixtures: pytest finds them by name


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
        plot.vb.updateAutoRange()  # (pyqtgraph auto-ranges when it paints; this panel is not shown)
    rate_left, rate_right = panel.curves.lr_plot.vb.viewRange()[0]
    loss_right = panel.curves.loss_plot.vb.viewRange()[0][1]
    assert rate_left <= 1 and rate_right >= 400, rate_right
    assert lr.x[-1] <= loss_right <= lr.x[-1] * 1.1 + 1 < rate_right, (loss_right, lr.x[-1])  # the steps trained


def test_narrow_curves_trade_the_legend_for_a_colour_key_title(qtbot):
    from explorer.panels.training.curves import TrainingCurves
    from explorer.screen import ScreenClass
    from model.train.curve_texts import NARROW, TITLES

    curves = TrainingCurves()
    qtbot.addWidget(curves)
    curves.reset(warmup=10, decay_steps=400)
    curves.resize(NARROW + 300, 500)
    curves.show()
    qtbot.waitUntil(lambda: curves.legend.isVisible())
    declared = {curves.loss_plot: TITLES["loss"], curves.acc_plot: TITLES["acc"],
                curves.lr_plot: TITLES["lr"], curves.speed_plot: TITLES["speed"]}
    assert {plot: plot.titleLabel.text for plot in declared} == declared
    assert "linear decay to step 400" in curves.lr_plot.toolTip()  # the rule the run follows
    assert "smoothed" in curves.loss_plot.toolTip()
    curves.resize(NARROW - 100, 500)
    qtbot.waitUntil(lambda: not curves.legend.isVisible())
    assert curves.lr_plot.titleLabel.text == TITLES["lr"] and curves.loss_plot.titleLabel.text == TITLES["loss"]
    assert "tokens" in curves.acc_plot.titleLabel.text and "exact" in curves.acc_plot.titleLabel.text
    assert curves.warmup.label.toPlainText() == "warm-up"
    curves.set_metric("masked_accuracy")  # the key names what the held-out points measure
    assert "masked" in curves.acc_plot.titleLabel.text
    curves.apply_screen_class(ScreenClass.NARROW)  # a narrow screen: the key on two lines
    assert "<br>" in curves.acc_plot.titleLabel.text
    assert curves.loss_plot.getAxis("left").labelText == "CE"
    curves.resize(NARROW + 300, 500)
    curves.apply_screen_class(ScreenClass.WIDE)
    qtbot.waitUntil(lambda: curves.legend.isVisible())
    assert curves.acc_plot.titleLabel.text == TITLES["acc"]
    assert curves.loss_plot.getAxis("left").labelText == "cross-entropy"


@pytest.mark.parametrize("decay_steps", [0, 400])
def test_the_warmup_label_stays_clear_of_the_learning_rate_curve(qtbot, decay_steps):
    """At the lecture size (curves 780×390, 2 × 2) the "warm-up ends" label sits under the peak,
    on the canvas colour: no point of the rate curve inside it, with the paper's decay or the
    lecture preset's linear one."""
    from PySide6.QtWidgets import QApplication

    from explorer import presentation
    from explorer.panels.training.curves import TrainingCurves

    curves = TrainingCurves()  # not qtbot's: pyqtgraph's close() after a failed assert would crash the process
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
    from model.train.live_messages import MetricRows
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
    vb = curves.lr_plot.vb
    inside = [s for s, y in zip(steps, lr) if box.contains(vb.mapViewToScene(QPointF(float(s), y)))]
    assert not inside, f"the rate curve runs through the label at steps {inside[:5]}…"
    assert box.left() > vb.sceneBoundingRect().left()  # whole, inside the plot
    assert label.fill.color().name() == theme.current().canvas
    presentation.apply_theme(QApplication.instance(), "dark")
    curves.restyle_marks()
    assert label.fill.color().name() == theme.DARK.canvas and label.color.name() == theme.DARK.muted


def test_the_warmup_label_stays_whole_when_the_warmup_just_ended(qtbot):
    """Step 200 of a 200-step warm-up: the line is at the plot's right edge, and its label
    goes beside it, to the left, whole inside the plot (not centred on the line)."""
    import numpy as np

    from explorer.panels.training.curves import TrainingCurves
    from model.train.live_messages import MetricRows
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
        label, vb = curves.warmup.label, curves.lr_plot.vb
        assert label.isVisible()
        assert vb.sceneBoundingRect().contains(label.sceneBoundingRect()), (label.sceneBoundingRect(),
                                                                            vb.sceneBoundingRect())
    finally:
        curves.hide()
        curves.deleteLater()


def test_a_projectors_message_says_the_whole_thing(qtbot, panel):
    """Presenting, the run's message wraps onto as many lines as it needs: every word of it is
    on screen (the label is as tall as its wrapped text), none replaced by "…"."""
    from explorer.screen import ScreenClass
    from model.train.live_messages import Offer, run_ended

    panel.apply_screen_class(ScreenClass.PROJECTOR)
    panel.resize(700, 600)
    panel.show()
    stopped = run_ended("stopped", 47, Offer(None, 47, "stopped"), "reverse", was_shown=True)
    panel.say(stopped)
    qtbot.waitUntil(lambda: panel.message.height() >= panel.message.heightForWidth(panel.message.width()))
    message = panel.message
    assert message.text() == stopped and "…" not in message.text()
    assert message.heightForWidth(message.width()) > message.fontMetrics().height() * 1.5  # it wrapped
    assert message.fontMetrics().horizontalAdvance(stopped) > message.width()  # (one line would not hold it)


def test_a_long_probe_output_ends_in_an_ellipsis_with_the_whole_output_in_its_tooltip(qtbot, panel, state):
    """An output longer than its row (an untrained model's noise): the probe's output line is
    never wider than its row, ends in "…" when cut, and names the whole output in its tooltip."""
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
    views go back to the empty 0–1 ranges, not the last run's."""
    from explorer.panels.training.curves import TrainingCurves
    from model.train.live_messages import MetricRows

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
            view = plot.vb
            (x0, x1), (y0, y1) = view.viewRange()
            assert note.isVisible() and x0 <= note.pos().x() <= x1 and y0 <= note.pos().y() <= y1, view.viewRange()
            text = note.textItem
            assert view.sceneBoundingRect().contains(text.mapRectToScene(text.boundingRect()))
    finally:
        curves.hide()
        curves.deleteLater()


def test_a_short_screen_folds_the_settings_once_a_run_begins(qtbot, panel):
    """PROJECTOR: the settings show until a run begins, then stay folded (also after it) until
    "Settings" is clicked; WIDE shows them always, with no button to fold them."""
    from explorer.screen import ScreenClass

    panel.resize(1016, 700)
    panel.show()
    controls = panel.controls
    panel.apply_screen_class(ScreenClass.PROJECTOR)
    assert controls.settings.isVisible() and controls.settings_button.isVisible()
    panel.start()
    wait_steps(qtbot, panel, 1)
    assert not controls.settings.isVisible()
    panel.stop()
    wait_idle(qtbot, panel)
    assert not controls.settings.isVisible()
    controls.settings_button.click()
    assert controls.settings.isVisible()
    controls.settings_button.click()
    panel.apply_screen_class(ScreenClass.WIDE)
    assert controls.settings.isVisible() and not controls.settings_button.isVisible()


def test_narrow_puts_the_curves_and_the_probe_in_tabs_and_back(qtbot, panel):
    """NARROW: the curves and the probe a tab each (each the whole height); any other class puts
    them side by side again, both shown, in one page without a tab bar."""
    from explorer.screen import ScreenClass
    panel.resize(900, 700)
    panel.show()
    panel.apply_screen_class(ScreenClass.NARROW)
    tabs = panel.body
    assert [tabs.widget(k) for k in range(tabs.count())] == [panel.curves_page, panel.probe]  # (the curves' page)
    assert panel.curves.isVisible() and not panel.probe.isVisible()
    tabs.setCurrentWidget(panel.probe)
    assert panel.probe.isVisible() and not panel.curves.isVisible()
    assert panel.probe.height() > panel.height() / 2
    panel.apply_screen_class(ScreenClass.PROJECTOR)
    assert tabs.count() == 1 and not tabs.tabBar().isVisible()
    assert panel.curves.isVisible() and panel.probe.isVisible()
    assert panel.curves_page.geometry().right() < panel.probe.geometry().left()  # side by side, in this order


def test_the_probe_map_comes_with_the_first_snapshot(qtbot, state):
    """Before any snapshot the empty map says its data is coming; the first snapshot draws the
    snapshot's attention there, titled in the map's header beside its count."""
    from explorer.panels.training.probe import NO_MAP_YET, ProbeView

    probe = ProbeView()
    qtbot.addWidget(probe)
    probe.resize(600, 500)
    probe.show()
    assert probe.map.values.size == 0 and probe.map_note.isVisible() and probe.map_note.toPlainText() == NO_MAP_YET
    result = state.bundle.run("abc")
    probe.show_snapshot(3, result, "abc")
    assert probe.map.isVisible() and not probe.map_note.isVisible()
    assert np.allclose(probe.map.values, result.trace.attention("cross", 1)[0].mean(0).numpy())
    qtbot.waitUntil(lambda: probe.map.count.isVisible())
    title, count = probe.map.title, probe.map.count  # the title in the map's header, on the count's line
    assert title.text() == "Encoder–decoder (cross) attention"
    assert abs(title.geometry().center().y() - count.geometry().center().y()) <= title.height() // 2
    probe.clear()
    assert probe.map.values.size == 0 and probe.shown_probe() is None and probe.map_note.isVisible()


def test_the_curves_are_light_plots_in_one_canvas(qtbot):
    """The four plots are view boxes with two axes each (no PlotItem: no menus, no hidden axes),
    in the one canvas, each with its title over it, made in the turn after the canvas."""
    import pyqtgraph as pg

    from explorer.drawing.map_plot import MapPlot
    from explorer.panels.training.curves import TrainingCurves

    curves = TrainingCurves()
    qtbot.addWidget(curves)
    assert not curves.built and not any(isinstance(item, pg.AxisItem) for item in curves.scene().items())
    qtbot.waitUntil(lambda: curves.built)
    items = curves.scene().items()
    assert not any(isinstance(item, pg.PlotItem) for item in items)
    assert sum(isinstance(item, pg.AxisItem) for item in items) == 8
    assert all(isinstance(plot, MapPlot) and plot.titleLabel.scene() is curves.scene() for plot in curves.plots)
    curves.resize(900, 600)
    curves.show()
    qtbot.waitExposed(curves)
    for plot in curves.plots:  # each title sits right over its own plot's data
        title, box = plot.titleLabel.sceneBoundingRect(), plot.vb.sceneBoundingRect()
        assert title.bottom() <= box.top() + 1 and title.left() < box.center().x() < title.right()


def test_the_probe_map_has_the_columns_height_and_the_probe_half_the_width(qtbot, panel):
    """The layer and head pickers sit beside the probe and its output, the map's title in its own
    header: between the output and the timeline there is only the map; the curves and the probe
    share the panel's width evenly."""
    from PySide6.QtCore import QPoint, QRect

    from explorer.screen import ScreenClass

    panel.apply_screen_class(ScreenClass.PROJECTOR)
    panel.resize(1016, 700)
    panel.show()
    qtbot.waitExposed(panel)
    probe = panel.probe

    def box(widget):
        return QRect(widget.mapTo(probe, QPoint(0, 0)), widget.size())

    for picker, beside in ((probe.layer_box, probe.probe_edit), (probe.head_box, probe.output_label)):
        assert abs(box(picker).center().y() - box(beside).center().y()) <= beside.height() // 2
    spacing = probe.layout().spacing() + 2
    assert box(probe.map).top() - box(probe.output_label).bottom() <= spacing + 8  # nothing between them
    assert box(probe.slider).top() - box(probe.map).bottom() <= box(probe.slider).height() + spacing
    curves_width, probe_width = panel.curves.width(), panel.probe.width()
    assert abs(curves_width - probe_width) <= 0.05 * (curves_width + probe_width)


def test_curves_built_while_presenting_are_drawn_at_the_presenting_size(qtbot, qapp):
    """Curves made while presenting (their plots come in a later turn) have their tick numbers,
    axis names and titles at the presenting size, as curves made before it was entered."""
    from explorer import style
    from explorer.panels.training.curves import TrainingCurves
    from explorer.presentation import set_scale

    set_scale(qapp, 1.6)
    try:
        curves = TrainingCurves()
        qtbot.addWidget(curves)
        qtbot.waitUntil(lambda: curves.built)
        for plot in curves.plots:
            axis = plot.getAxis("left")
            assert axis.style["tickFont"].pointSizeF() == pytest.approx(style.font(style.SMALL_POINT_SIZE).pointSizeF())
            assert axis.labelStyle["font-size"] == style.css_pt(style.SMALL_POINT_SIZE)
            assert plot.titleLabel.opts["size"] == style.css_pt(style.TITLE_POINT_SIZE)
    finally:
        set_scale(qapp, 1.0)
