"""The presentation's size: a larger application font, and the pyqtgraph canvases (which do not
follow it) redrawn at the same factor, in place, in the main windows registered here.
"""
from __future__ import annotations

import contextlib

import pyqtgraph as pg
from PySide6.QtGui import QFont, QPen
from PySide6.QtWidgets import QApplication, QGraphicsSimpleTextItem, QGraphicsTextItem, QGraphicsView, QWidget
from shiboken6 import isValid

from explorer import style
from explorer.drawing.plot_style import fit_title_row, set_axis_pen

_applied_scale = 1.0  # the factor the plots on screen are drawn at
_windows: list[QWidget] = []  # the main windows whose plots a theme / scale change reaches


def applied_scale() -> float:
    return _applied_scale


def register_window(window: QWidget) -> None:
    """Only our own live windows are reached, never `QApplication.allWidgets()`: that can hold
    widgets of closed windows awaiting deletion, and touching those aborts the process."""
    if window not in _windows:
        _windows.append(window)
        window.destroyed.connect(lambda *_: _windows.remove(window) if window in _windows else None)


def windows() -> list[QWidget]:
    """The registered main windows still alive."""
    for window in list(_windows):
        if not isValid(window):
            _windows.remove(window)
    return list(_windows)


def plot_views(_app: QApplication | None = None) -> list[pg.GraphicsView]:
    return [v for window in windows() for v in window.findChildren(pg.GraphicsView)]


def set_scale(app: QApplication, factor: float) -> float:
    """The application's font at `factor` × normal and the plots already drawn redrawn at it
    (`style.font` gives items built later the same). Returns the ratio applied."""
    global _applied_scale
    factor = max(1.0, min(float(factor), 3.0))
    ratio = factor / _applied_scale
    if abs(ratio - 1.0) < 1e-6:
        return 1.0
    style.set_scale(factor)
    app.setFont(style.font(style.BASE_POINT_SIZE))
    for view in plot_views(app):
        rescale_scene(view, ratio)
    _applied_scale = factor
    return ratio


def build_at_normal_size(make):
    """`make()` run at the normal size, then its plots redrawn at the size in use: a widget's own
    font is what it gets back when the presentation's style sheet goes."""
    factor = _applied_scale
    if abs(factor - 1.0) < 1e-6:
        return make()
    style.set_scale(1.0)
    try:
        widget = make()
    finally:
        style.set_scale(factor)
    for view in widget.findChildren(pg.GraphicsView):
        rescale_scene(view, factor)
    return widget


def _scaled_font(font: QFont, ratio: float) -> QFont:
    f = QFont(font)
    if f.pointSizeF() > 0:
        f.setPointSizeF(max(6.0, f.pointSizeF() * ratio))
    elif f.pixelSize() > 0:
        f.setPixelSize(max(8, round(f.pixelSize() * ratio)))
    return f


def _scaled_pen(pen, ratio: float) -> QPen:
    pen = QPen(pg.mkPen(pen))
    pen.setWidthF(max(1.0, pen.widthF()) * ratio)
    return pen


def _rescale_axis(axis: pg.AxisItem, ratio: float) -> None:
    """Tick font, pen, and the title, whose size lives in its HTML (pyqtgraph's labelStyle)."""
    tick = axis.style.get("tickFont")
    tick = style.font(style.SMALL_POINT_SIZE) if tick is None else _scaled_font(tick, ratio)
    axis.setStyle(tickFont=tick)
    set_axis_pen(axis, _scaled_pen(axis.pen(), ratio))
    size = axis.labelStyle.get("font-size")
    if isinstance(size, str) and size.endswith("pt") and axis.label.isVisible():
        try:
            points = max(6.0, float(size[:-2]) * ratio)
        except ValueError:
            return
        axis.setLabel(axis.labelText, axis.labelUnits, axis.labelUnitPrefix,
                      **{**axis.labelStyle, "font-size": f"{points:.1f}pt"})


def rescale_scene(view: QGraphicsView, ratio: float) -> None:
    """Axes, titles, text and curve widths of one pyqtgraph canvas, in place."""
    for item in view.scene().items():
        if isinstance(item, pg.AxisItem):
            _rescale_axis(item, ratio)
        elif isinstance(item, pg.LabelItem):
            size = str(item.opts.get("size") or f"{style.BASE_POINT_SIZE}pt")
            if size.endswith("pt"):
                with contextlib.suppress(ValueError):
                    item.setText(item.text, size=f"{float(size[:-2]) * ratio:.1f}pt")
                plot = item.parentItem()
                if isinstance(plot, pg.PlotItem) and plot.titleLabel is item and item.isVisible():
                    fit_title_row(plot)
        elif isinstance(item, pg.PlotDataItem):
            pen = item.opts.get("pen")
            if pen is not None:
                item.setPen(_scaled_pen(pen, ratio))
        elif isinstance(item, pg.PlotCurveItem) and not isinstance(item.parentItem(), pg.PlotDataItem):
            item.setPen(_scaled_pen(item.opts["pen"], ratio))
        elif isinstance(item, (QGraphicsSimpleTextItem, QGraphicsTextItem)) and not isinstance(
                item.parentItem(), pg.LabelItem):
            item.setFont(_scaled_font(item.font(), ratio))
