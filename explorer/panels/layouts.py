"""Layouts built in one call: `row` and `column` of widgets, layouts, `(item, stretch)` pairs and
None (a stretch), and `flow`, a widget whose items wrap onto more lines where it is narrow."""
from __future__ import annotations

from PySide6.QtWidgets import QBoxLayout, QHBoxLayout, QLayout, QVBoxLayout, QWidget
from superqt import QFlowLayout

from explorer import style


def _fill(layout: QBoxLayout, items, margins: int | None) -> QBoxLayout:
    if margins is not None:
        layout.setContentsMargins(margins, margins, margins, margins)
    for item in items:
        item, stretch = item if isinstance(item, tuple) else (item, None)
        if item is None:
            layout.addStretch(1 if stretch is None else stretch)
        elif isinstance(item, QLayout):
            layout.addLayout(item, stretch or 0)
        else:
            layout.addWidget(item, stretch or 0)
    return layout


def row(*items, parent: QWidget | None = None, margins: int | None = None) -> QHBoxLayout:
    return _fill(QHBoxLayout(parent) if parent is not None else QHBoxLayout(), items, margins)


def column(*items, parent: QWidget | None = None, margins: int | None = None) -> QVBoxLayout:
    return _fill(QVBoxLayout(parent) if parent is not None else QVBoxLayout(), items, margins)


def flow(*widgets: QWidget, role: str | None = None, font=None) -> QWidget:
    """A widget holding `widgets` in a QFlowLayout, in the font `role` (`style.FONT_ROLES`: presenting
    scales it) or `font` where given."""
    holder = QWidget()
    layout = QFlowLayout(holder)
    layout.setContentsMargins(0, 0, 0, 0)
    for widget in widgets:
        if role is not None:
            style.set_font_role(widget, role)
        elif font is not None:
            widget.setFont(font)
        layout.addWidget(widget)
    return holder
