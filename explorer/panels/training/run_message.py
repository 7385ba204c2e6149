"""The Training panel's message line: wrapped on a wide screen; on a compact one, one line of as
many whole sentences as fit (`whole_sentences`), the whole message in its tooltip."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocumentFragment
from PySide6.QtWidgets import QLabel, QSizePolicy

from explorer import style
from model.train.live_messages import whole_sentences


class RunMessage(QLabel):
    def __init__(self, parent=None):
        super().__init__(" ", parent)
        self.full_html = ""
        self.compact = False  # one line (set by the panel for its screen class)
        self.setVisible(False)  # until there is something to say
        self.setFont(style.font(style.BASE_POINT_SIZE))
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)  # a long line never widens the window

    def show_text(self, html: str) -> None:
        self.full_html = html
        self.setVisible(bool(html.strip()))  # no empty line taking a plot's height
        self.fit()

    def set_compact(self, compact: bool) -> None:
        if compact != self.compact:
            self.compact = compact
            self.fit()

    def fit(self) -> None:
        self.setWordWrap(not self.compact)
        if not self.compact:
            self.setTextFormat(Qt.TextFormat.AutoText)
            self.setText(self.full_html)
            self.setToolTip("")
            return
        plain = QTextDocumentFragment.fromHtml(self.full_html).toPlainText()
        self.setTextFormat(Qt.TextFormat.PlainText)
        room, metrics = max(0, self.width() - 8), self.fontMetrics()
        shown = whole_sentences(plain, lambda t: metrics.horizontalAdvance(t) <= room)
        self.setText(shown or metrics.elidedText(plain, Qt.TextElideMode.ElideRight, room))
        self.setToolTip(plain)

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        if self.compact and self.full_html:
            self.fit()


__all__ = ["RunMessage"]
