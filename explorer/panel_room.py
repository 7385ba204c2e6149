"""`offered_room(panel)`: the room a panel's dock offers it, not the panel's own size (which
grows to its minimum in a smaller dock): panels that reflow decide from this."""
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
