"""Margins that give an aspect-locked view box its picture's shape.

pyqtgraph centres an aspect-locked picture (square cells of a query × key map) inside a view
box that fills its plot, so on a wide panel the map sits in the middle of an empty strip and
its token labels stay at the strip's far edges, a hand's width from the rows they name. The
remedy is to give the spare room to margins around the plot (or around the plot and its colour
bar together), so the axes, and their labels, sit against the map.
"""
from __future__ import annotations

import functools

from PySide6.QtCore import QSizeF, Qt
from PySide6.QtWidgets import QGraphicsLayout
from shiboken6 import isValid


def hug_margins(layout: QGraphicsLayout, view_box, aspect: float, least: tuple[float, float] = (0.0, 0.0),
                base: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0), passes: int = 6) -> tuple[float, float]:
    """Set `layout`'s contents margins (`base` plus the spare room, split evenly) so that
    `view_box` has the shape `aspect` (width / height) and is at least `least` pixels; return
    the spare (width, height) given away.

    Computed from no spare room every time, never from an earlier fit, so a window shows the same
    picture whatever was drawn before; token axes whose size follows the room they get settle
    within a few passes. The same call on an unchanged layout returns the last answer without a
    layout pass: each pass resizes every axis, which then redraws its labels (milliseconds of a
    long frame whose maps change but whose plot does not)."""
    if not isValid(layout) or not isValid(view_box):  # a resize signal from a window being torn down
        return 0.0, 0.0
    asked = (aspect, tuple(least), tuple(base), passes)
    memo = getattr(layout, "_hug_memo", None)
    if memo is not None and memo[0] == (asked, _layout_state(layout)):
        return memo[1]
    left, top, right, bottom = base
    owner = layout.parentLayoutItem()  # the plot (or canvas) whose layout this is
    if owner is not None:
        # The spare room is no minimum: pin the owner's minimum at its base margins' (else the
        # margins would grow the plot past its view when the panel is made smaller, or, laid out on
        # a top-level item, resize it at once) before any margins are given away.
        layout.setContentsMargins(left, top, right, bottom)  # first: unpinned, the old margins' minimum
        owner.setMinimumSize(QSizeF(-1, -1))                 # would resize a top-level plot at once
        layout.activate()
        owner.setMinimumSize(QSizeF(owner.minimumSize()))
    spare_w = spare_h = 0.0
    for i in range(passes + 1):
        layout.setContentsMargins(left + spare_w / 2, top + spare_h / 2, right + spare_w / 2, bottom + spare_h / 2)
        layout.activate()
        box = view_box.geometry()
        if i == passes or box.width() <= 0 or box.height() <= 0 or aspect <= 0:
            break  # (the last pass's margins applied, not only computed)
        want_w = max(box.height() * aspect, least[0])
        want_h = max(box.width() / aspect, least[1])
        off_w, off_h = box.width() - want_w, box.height() - want_h
        if abs(off_w) < 1 and abs(off_h) < 1:
            break
        spare_w, spare_h = max(0.0, spare_w + off_w), max(0.0, spare_h + off_h)
    layout._hug_memo = ((asked, _layout_state(layout)), (spare_w, spare_h))
    return spare_w, spare_h


_HINTS = (Qt.SizeHint.MinimumSize, Qt.SizeHint.PreferredSize, Qt.SizeHint.MaximumSize)


def _layout_state(layout: QGraphicsLayout) -> tuple:
    """Everything a hug's answer follows from besides its arguments: the size the layout has, its
    margins (as the last hug left them, or as someone else set them) and each item's size hints
    and visibility (an axis that grew for longer labels, a title given more text)."""
    owner = layout.parentLayoutItem()
    size = owner.geometry().size() if owner is not None else layout.geometry().size()
    items = []
    for i in range(layout.count()):
        item = layout.itemAt(i)
        visible = item.isVisible() if hasattr(item, "isVisible") else True
        items.append((visible, *(v for which in _HINTS
                                 for hint in (item.effectiveSizeHint(which),) for v in (hint.width(), hint.height()))))
    return (size.width(), size.height(), layout.getContentsMargins(), tuple(items))


def not_reentrant(method):
    """A method that returns at once when it is called again from inside itself: a hug's new
    margins resize the view box, whose resize signal calls the hug again. (One guard for every
    hugging plot, instead of a flag and a try/finally in each.)"""
    running: set[int] = set()

    @functools.wraps(method)
    def guarded(self, *args, **kwargs):
        if id(self) in running:
            return None
        running.add(id(self))
        try:
            return method(self, *args, **kwargs)
        finally:
            running.discard(id(self))

    return guarded
