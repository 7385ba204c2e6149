"""Screen classes: a panel declares a layout per class (`apply_screen_class(cls)`); the window
classifies its size (and whether it is presenting) and tells every panel on a change."""
from __future__ import annotations

from enum import Enum


class ScreenClass(str, Enum):
    WIDE = "wide"            # ≥ 1600 px wide, not presenting: views side by side
    PROJECTOR = "projector"  # 1024–1599 px wide, or presenting: fewer, larger views
    NARROW = "narrow"        # < 1024 px wide: one column, controls folded


def classify(width: int, height: int, presenting: bool = False) -> ScreenClass:
    """The class of a window `width` × `height` px; presenting never counts as wide."""
    if width < 1024 or height < 600:
        return ScreenClass.NARROW
    if presenting or width < 1600:
        return ScreenClass.PROJECTOR
    return ScreenClass.WIDE

