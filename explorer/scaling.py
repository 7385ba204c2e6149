"""The presentation's size: the application font at a factor of the normal one. A pyqtgraph canvas,
which does not follow it, is brought to the factor by `plot_style.restyle_view` from the scale
recorded on it, so a canvas built at any size ends at the size in use."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import QApplication, QWidget
from shiboken6 import isValid

from explorer import style
from explorer.drawing.plot_style import SCALE_PROPERTY, restyle_view

_windows: list[QWidget] = []  # the main windows whose plots a theme / scale change reaches
applied_scale = style.scale  # the scale in use (presentation and panels read it here)


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
    """The application's font at `factor` × normal (`style.font` gives later items the same); each
    canvas keeps the scale it is drawn at until `restyle_view` (`presentation.apply_theme`). Returns
    the ratio applied."""
    factor = max(1.0, min(float(factor), 3.0))
    ratio = factor / style.scale()
    if abs(ratio - 1.0) < 1e-6:
        return 1.0
    for view in plot_views(app):  # (a canvas never restyled is at the old scale)
        if not view.property(SCALE_PROPERTY):
            view.setProperty(SCALE_PROPERTY, style.scale())
    style.set_scale(factor)
    app.setFont(style.font(style.BASE_POINT_SIZE))
    return ratio


def build_at_normal_size(make):
    """`make()` run at the normal size, then its canvases redrawn at the size in use: a widget's own
    font is what it gets back when the presentation's style sheet goes."""
    factor = style.scale()
    if factor == 1.0:
        return make()
    style.set_scale(1.0)
    try:
        widget = make()
    finally:
        style.set_scale(factor)
    for view in widget.findChildren(pg.GraphicsView):
        view.setProperty(SCALE_PROPERTY, 1.0)
        restyle_view(view)
    return widget
