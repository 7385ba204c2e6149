"""`offered_room(panel)`: the room a panel's dock offers it, not the panel's own size.

A panel in its dock's scroll area grows to its minimum when that is larger than the dock: a
choice made from the panel's own size (one line or two, texts beside or below) then depended
on the arrangement shown before it. Panels that reflow ask this instead.
"""
from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QAbstractScrollArea


def offered_room(panel) -> QSize:
    """The viewport of the scroll area showing `panel` (without scroll bars), else its own size."""
    viewport = panel.parentWidget()
    scroll = viewport.parentWidget() if viewport is not None else None
    if isinstance(scroll, QAbstractScrollArea):
        return scroll.maximumViewportSize()
    return panel.size()
