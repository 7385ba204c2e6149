"""Presenting is the same canvas at a larger base font: a canvas built at any scale is drawn at the
scale in use, once (restyling again changes nothing), and back at its own sizes at the normal scale."""
from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6.QtWidgets import QVBoxLayout, QWidget

from explorer import style
from explorer.drawing.plot_style import TICK_PT, TITLE_PT, graphics_widget, restyle_view, set_title, style_axis
from explorer.presentation import build_at_normal_size


def _panel() -> QWidget:
    """A panel with one plot: a styled axis, a title and a curve two pixels wide."""
    panel = QWidget()
    canvas = graphics_widget()
    QVBoxLayout(panel).addWidget(canvas)
    plot = canvas.addPlot()
    style_axis(plot.getAxis("left"), "loss")
    set_title(plot, "Training")
    plot.plot([0, 1, 2], [1, 0, 1], pen=pg.mkPen("k", width=2))
    return panel


def _sizes(panel: QWidget) -> tuple[float, float, float]:
    """(tick font pt, title pt, curve width) as drawn."""
    plot = panel.findChild(pg.GraphicsView).getItem(0, 0)
    tick = plot.getAxis("left").style["tickFont"].pointSizeF()
    title = float(plot.titleLabel.opts["size"][:-2])
    curve = pg.mkPen(plot.listDataItems()[0].opts["pen"]).widthF()
    return tick, title, curve


def test_a_panel_built_while_presenting_is_drawn_at_the_presentation_scale_once(qapp):
    style.set_scale(1.5)
    try:
        panel = build_at_normal_size(_panel)
        assert _sizes(panel) == pytest.approx((TICK_PT * 1.5, TITLE_PT * 1.5, 3.0))
        canvas = panel.findChild(pg.GraphicsView)
        restyle_view(canvas)  # a theme change, a panel's own restyle: the sizes stay
        assert _sizes(panel) == pytest.approx((TICK_PT * 1.5, TITLE_PT * 1.5, 3.0))
    finally:
        style.set_scale(1.0)
    restyle_view(canvas)
    assert _sizes(panel) == pytest.approx((TICK_PT, TITLE_PT, 2.0))  # its own sizes at the normal scale
    panel.deleteLater()


def test_a_canvas_built_at_the_scale_in_use_is_not_scaled_again(qapp):
    style.set_scale(1.5)
    try:
        panel = _panel()  # built while presenting, outside `build_at_normal_size`
        restyle_view(panel.findChild(pg.GraphicsView))
        assert _sizes(panel) == pytest.approx((TICK_PT * 1.5, TITLE_PT * 1.5, 2.0))
    finally:
        style.set_scale(1.0)
    panel.deleteLater()


def test_a_maps_label_axis_grows_with_the_base_font_without_a_resize(qtbot):
    """Presenting at a larger scale, the map keeps its size: its row axis still fits its labels."""
    import numpy as np
    from PySide6.QtWidgets import QApplication

    from explorer.drawing.heatmap import Heatmap

    app = QApplication.instance()
    heatmap = Heatmap()  # (no title: nothing else in the widget relays it out)
    qtbot.addWidget(heatmap)
    heatmap.resize(500, 400)
    heatmap.show()
    heatmap.set_data(np.eye(4), ["alpha", "beta", "gamma", "delta"], list("abcd"))
    qtbot.waitUntil(lambda: heatmap.rows_axis.width() == heatmap.rows_axis.extent(False))
    normal = heatmap.rows_axis.width()
    restyle_view(heatmap.canvas)
    style.set_scale(2.0)
    try:
        app.setFont(style.font(style.BASE_POINT_SIZE))
        restyle_view(heatmap.canvas)
        qtbot.waitUntil(lambda: heatmap.rows_axis.width() > normal * 1.5)
        assert heatmap.rows_axis.width() == heatmap.rows_axis.extent(False)  # as wide as its labels at 2×
    finally:
        style.set_scale(1.0)
        app.setFont(style.font(style.BASE_POINT_SIZE))


def test_a_widget_with_a_font_role_keeps_its_role_size_under_the_presentation_sheet(qapp):
    """Presenting, the font sheet sizes a widget without a role as body text; a heading, a small label
    and code keep their own roles' sizes × the scale."""
    from PySide6.QtWidgets import QLabel

    before = qapp.styleSheet()
    holder = QWidget()
    heading = style.set_font_role(QLabel("Layer 2", holder), "heading")
    small = style.set_font_role(QLabel("3 of 9 labels", holder), "small")
    code = style.set_font_role(QLabel("x = 1", holder), "mono")
    plain = QLabel("text", holder)
    try:
        qapp.setStyleSheet(style.font_sheet(2.0))
        for label in (heading, small, code, plain):
            label.ensurePolished()
        assert heading.font().pointSizeF() == pytest.approx(style.BASE_POINT_SIZE * 2.0)
        assert heading.font().bold() and not small.font().bold()
        assert small.font().pointSizeF() == pytest.approx(style.SMALL_POINT_SIZE * 2.0)
        assert code.font().family() == style.MONO_FAMILY and plain.font().family() != style.MONO_FAMILY
        assert plain.font().pointSizeF() == pytest.approx(style.BASE_POINT_SIZE * 2.0)
    finally:
        qapp.setStyleSheet(before)
    with pytest.raises(ValueError, match="font role"):
        style.role_font("huge")


@pytest.mark.parametrize("scale", [1.0, 2.0])
def test_one_font_sheet_at_every_scale_sizes_dock_titles_by_role_and_hand_set_fonts_only_when_presenting(qapp, scale):
    """The same sheet serves the normal window and presenting: a dock is in the title role × the scale;
    a font set by hand stays its own at the normal scale and is body text × the scale presenting."""
    from PySide6.QtWidgets import QDockWidget, QLabel

    before = qapp.styleSheet()
    dock = QDockWidget("Attention")
    hand = QLabel("probe")
    hand.setFont(style.font(style.TITLE_POINT_SIZE + 2))
    try:
        qapp.setStyleSheet(style.font_sheet(scale))
        for widget in (dock, hand):
            widget.ensurePolished()
        assert dock.font().pointSizeF() == pytest.approx(style.FONT_ROLES["title"][0] * scale)
        own = style.TITLE_POINT_SIZE + 2 if scale == 1.0 else style.BASE_POINT_SIZE * scale
        assert hand.font().pointSizeF() == pytest.approx(own)
    finally:
        qapp.setStyleSheet(before)
        dock.deleteLater()
        hand.deleteLater()
