"""Panel text made one way: word-wrapped labels (`text_label`) and the note over a panel,
tinted by its level (`say`: "info", "warning")."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from explorer import style

NOTE_SHEET = "background:{{{level}_bg}}; color:{{{level}_text}}; padding:6px; border-radius:4px;"


def text_label(text: str = "", point_size: float | None = style.BASE_POINT_SIZE, *, bold: bool = False,
               mono: bool = False, rich: bool = False, selectable: bool = False, top_left: bool = False,
               sheet: str = "") -> QLabel:
    """A word-wrapped label (in the app's font where `point_size` is None)."""
    label = QLabel(text)
    label.setWordWrap(True)
    if point_size is not None:
        label.setFont(style.font(point_size, bold=bold, mono=mono))
    if rich:
        label.setTextFormat(Qt.TextFormat.RichText)
    if selectable:
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if top_left:
        label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
    if sheet:
        style.set_sheet(label, sheet)
    return label


def say(note: QLabel, text: str, level: str = "info") -> None:
    """Show `text` in the note, tinted by its level."""
    style.set_sheet(note, NOTE_SHEET.format(level=level))
    note.setText(text)
