"""Scaling what is already on screen: every widget with its own font, every pyqtgraph axis,
title, text item and pen, in the main windows registered here (`register_window`) — never
`QApplication.allWidgets()`, which can hold widgets of closed windows awaiting deletion."""
from __future__ import annotations

import pyqtgraph as pg
from shiboken6 import isValid
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QPen
from PySide6.QtWidgets import QApplication, QGraphicsSimpleTextItem, QGraphicsTextItem, QGraphicsView, QWidget

from explorer import style
from explorer.drawing import plot_style

_SAVED_FONT = "_q_styleSheetWidgetFont"
_applied_scale = 1.0  # the factor the widgets on screen are drawn at


def applied_scale() -> float:
    return _applied_scale


_windows: list[QWidget] = []  # the main windows whose widgets a theme / scale change walks


def register_window(window: QWidget) -> None:
    """Walk only our own live windows, never `QApplication.allWidgets()`: that list can hold
    widgets of closed windows waiting for deletion, and touching those aborts the process."""
    if window not in _windows:
        _windows.append(window)
        window.destroyed.connect(lambda *_: _windows.remove(window) if window in _windows else None)


def _widgets(_app=None) -> list[QWidget]:
    out: list[QWidget] = []
    for window in list(_windows):
        if not isValid(window):
            _windows.remove(window)
            continue
        out.append(window)
        out.extend(window.findChildren(QWidget))
    return out


def _plot_views(app: QApplication | None = None) -> list[pg.GraphicsView]:
    return [w for w in _widgets(app) if isinstance(w, pg.GraphicsView)]


# -- scaling --------------------------------------------------------------------------------------
def scale_widgets(app: QApplication, factor: float) -> float:
    """Draw the widgets and plots already built at `factor` × the normal size (1.0 = normal);
    `style.font` gives later ones the same. Returns the ratio applied."""
    global _applied_scale
    factor = max(1.0, min(float(factor), 3.0))
    ratio = factor / _applied_scale
    if abs(ratio - 1.0) < 1e-6:
        return 1.0
    style.set_scale(factor)
    app.setFont(style.font(style.BASE_POINT_SIZE))
    # Every new font is computed before any is set: setting a combo box's font also sets its
    # popup's (a child with a font of its own), which this walk then scaled a second time —
    # drop-down lists at 29 pt while presenting and 8.7 pt after.
    targets = [(w, _scaled_font(w.font(), ratio)) for w in _widgets(app) if w.testAttribute(Qt.WA_SetFont)]
    for widget, font in targets:
        _set_font(widget, font)
    for view in _plot_views(app):
        _rescale_scene(view, ratio)
    _applied_scale = factor
    return ratio


def _scaled_font(font: QFont, ratio: float) -> QFont:
    f = QFont(font)
    if f.pointSizeF() > 0:
        f.setPointSizeF(max(6.0, f.pointSizeF() * ratio))
    elif f.pixelSize() > 0:
        f.setPixelSize(max(8, round(f.pixelSize() * ratio)))
    return f


def _scale_font_of(obj, ratio: float) -> None:
    _set_font(obj, _scaled_font(obj.font(), ratio))


def _set_font(obj, f: QFont) -> None:
    obj.setFont(f)
    # Qt's style-sheet style keeps the font it saw at polish time in this property and puts it
    # back on the next re-polish (any setStyleSheet): keep it in step, or a theme change would
    # undo the scaling.
    if isinstance(obj, QWidget) and obj.property(_SAVED_FONT) is not None:
        obj.setProperty(_SAVED_FONT, f)


def _scaled_pen(pen, ratio: float) -> QPen:
    pen = QPen(pg.mkPen(pen))
    pen.setWidthF(max(1.0, pen.widthF()) * ratio)
    return pen


def _rescale_axis_title(axis: pg.AxisItem, ratio: float) -> None:
    """An axis title's size lives in its HTML ("font-size" in pyqtgraph's labelStyle), which
    wins over the text item's font: scale that, and let pyqtgraph rebuild the title."""
    size = axis.labelStyle.get("font-size")
    if isinstance(size, str) and size.endswith("pt"):
        try:
            axis.labelStyle["font-size"] = f"{max(6.0, float(size[:-2]) * ratio):.1f}pt"
        except ValueError:
            return
        axis._updateLabel()  # (pyqtgraph's own: the title's HTML from labelStyle, and the axis' room)
        plot_style.refit_axis_title(axis)  # a title that fits only in short: its size changed, its axis not
        axis.resizeEvent()  # centred again for its new length: pyqtgraph places the title only on a
        # resize, and a title grown in place ran off the top of the attention grid's colour bar


def _rescale_scene(view: QGraphicsView, ratio: float) -> None:
    """Axes, titles, text and curve widths of one pyqtgraph canvas, in place."""
    for item in view.scene().items():
        if isinstance(item, pg.AxisItem):
            tick = item.style.get("tickFont")
            if tick is None:  # pyqtgraph's default: the widget font; start from the shared small size
                tick = style.font(style.SMALL_POINT_SIZE)
            else:
                tick = QFont(tick)
                tick.setPointSizeF(max(6.0, tick.pointSizeF() * ratio))
            item.setStyle(tickFont=tick)
            item.setPen(_scaled_pen(item.pen(), ratio))
            _rescale_axis_title(item, ratio)
        elif isinstance(item, pg.LabelItem):
            size = str(item.opts.get("size") or f"{style.BASE_POINT_SIZE}pt")
            if size.endswith("pt"):
                least = item.minimumWidth()
                try:
                    item.setText(item.text, size=f"{float(size[:-2]) * ratio:.1f}pt")
                except ValueError:
                    pass
                if least < item.minimumWidth():  # setText makes it as wide as its text again: a
                    item.setMinimumWidth(least)  # title allowed to shrink (never widening its plot) stays so
                plot = item.parentItem()
                if isinstance(plot, pg.PlotItem) and plot.titleLabel is item:
                    plot_style.fit_title_row(plot)  # an enlarged title never prints over its plot
        elif isinstance(item, pg.PlotDataItem):
            pen = item.opts.get("pen")
            if pen is not None:
                item.setPen(_scaled_pen(pen, ratio))
        elif isinstance(item, pg.PlotCurveItem) and not isinstance(item.parentItem(), pg.PlotDataItem):
            item.setPen(_scaled_pen(item.opts["pen"], ratio))
        elif isinstance(item, (QGraphicsTextItem, QGraphicsSimpleTextItem)) and not isinstance(
                item.parentItem(), pg.LabelItem):
            _scale_font_of(item, ratio)
