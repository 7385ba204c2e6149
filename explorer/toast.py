"""`StatusToast`: presenting hides the status bar; its messages, and work that runs longer than a
moment, float over the window's bottom edge for SHOWN_MS instead (nothing reflows)."""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import QLabel, QMainWindow

from explorer import style

BUSY_DELAY_MS = 600  # shorter work is not announced (every Enter runs the model)
SHOWN_MS = 8000  # a message covers the panel's bottom edge this long (the bar keeps it 15 s)
EDGE_PX = 8


class StatusToast(QObject):
    """What the window says (`say`) and long busy work, in a label over the window while `active`."""

    def __init__(self, window: QMainWindow):
        super().__init__(window)
        self.window = window
        self.active = False
        self.label = QLabel(window, objectName="status_toast", wordWrap=True, alignment=Qt.AlignmentFlag.AlignCenter,
                            visible=False)
        self.label.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)  # never in the way of a click
        self._message, self._level, self._busy = "", "info", ""
        self._busy_timer = QTimer(self, singleShot=True, interval=BUSY_DELAY_MS, timeout=self._refresh)
        self._expiry = QTimer(self, singleShot=True, interval=SHOWN_MS, timeout=self._expire)
        window.statusBar().messageChanged.connect(lambda text: None if text else self._expire())
        window.installEventFilter(self)

    def set_active(self, on: bool) -> None:
        self.active = on
        self._refresh()

    def say(self, level: str, text: str) -> None:
        """A message of `level` (error, warning or info: its colour), shown for SHOWN_MS."""
        self._message, self._level = text, level
        self._expiry.start()
        self._refresh()

    def set_busy(self, busy: bool, what: str) -> None:
        self._busy = what if busy else ""
        if busy:
            self._busy_timer.start()  # said only if it is still running then
        else:
            self._busy_timer.stop()
        self._refresh()

    def text(self) -> str:
        """What the toast says now ("" when hidden)."""
        return self.label.text() if self.label.isVisible() else ""

    def _expire(self) -> None:
        self._message = ""
        self._refresh()

    def _refresh(self) -> None:
        busy = self._busy if self._busy and not self._busy_timer.isActive() else ""
        text = self._message or (f"{busy}…" if busy and not busy.endswith("…") else busy)
        if not self.active or not text:
            self.label.hide()
            return
        role = {"error": "error", "warning": "accent_text"}.get(self._level, "text") if self._message else "muted"
        edge = role if role in ("error", "accent_text") else "muted"
        # a set_sheet template: {role} fields filled from the palette, the sheet's own braces doubled
        style.set_sheet(self.label, f"QLabel#status_toast {{{{ color: {{{role}}}; background: {{window}};"
                                    f" border: 2px solid {{{edge}}}; border-radius: 6px; padding: 6px 14px; }}}}")
        self.label.setText(text)
        self._place()
        self.label.show()
        self.label.raise_()

    def _place(self) -> None:
        """Centred over the bottom edge, at most the window's width, as tall as its text."""
        room = max(100, self.window.width() - 2 * EDGE_PX)
        width = min(room, self.label.fontMetrics().horizontalAdvance(self.label.text()) + 40)
        height = self.label.heightForWidth(width)
        height = height if height > 0 else self.label.sizeHint().height()
        self.label.setGeometry((self.window.width() - width) // 2, self.window.height() - height - EDGE_PX,
                               width, height)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        if obj is self.window and event.type() == QEvent.Type.Resize and self.label.isVisible():
            self._place()
        return False
