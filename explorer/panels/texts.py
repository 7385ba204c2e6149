"""Panel text made one way: word-wrapped labels (`text_label`) and the note over a panel tinted by
its level (`say`)."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from explorer import style

NOTE_SHEET = "background:{{{level}_bg}}; color:{{{level}_text}}; padding:6px; border-radius:4px;"
PLAIN_SHEET = "color: {text};"


def text_label(text: str = "", point_size: float | None = style.BASE_POINT_SIZE, *, bold: bool = False,
               mono: bool = False, rich: bool = False, selectable: bool = False, top_left: bool = False,
               sheet: str = "") -> QLabel:
    """A word-wrapped label; a font of its own only where it differs from the app's: the font role of
    that size (`style.FONT_ROLES`, which presenting scales), else a plain font."""
    label = QLabel(text)
    label.setWordWrap(True)
    if bold or mono or point_size not in (None, style.BASE_POINT_SIZE):
        spec = (point_size or style.BASE_POINT_SIZE, bold, mono)
        role = next((role for role, role_spec in style.FONT_ROLES.items() if role_spec == spec), None)
        if role is not None:
            style.set_font_role(label, role)
        else:
            label.setFont(style.font(*spec))
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
    """Show `text` in the note, tinted by its level ("info", "warning", "error"; "plain": untinted)."""
    style.set_sheet(note, PLAIN_SHEET if level == "plain" else NOTE_SHEET.format(level=level))
    note.setText(text)
