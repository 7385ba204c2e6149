"""The Training panel's message line: wrapped on a wide screen, one line on a compact one.

The one line holds as many whole sentences as fit ("Training stopped after 47 steps. The panels
show “reverse” again. …"), so it reads what happened rather than a sentence cut mid-word; only
a first sentence too long for the line is elided. The tooltip and the status line hold it all.
"""
from __future__ import annotations

import re

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocumentFragment
from PySide6.QtWidgets import QLabel, QSizePolicy

from explorer import style

SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=\S)")  # "… 47 steps. The panels …" (not "0.92")


def whole_sentences(text: str, fits) -> str:
    """The most leading sentences of `text` that `fits` (on one line), "…" after them where
    sentences are left out and it fits too; "" when not even the first one fits."""
    sentences = SENTENCE_BREAK.split(text.strip())
    for n in range(len(sentences), 0, -1):
        head = " ".join(sentences[:n])
        if n == len(sentences) and fits(head):
            return head
        if n < len(sentences) and fits(head + " …"):  # the "…" says that more was said
            return head + " …"
    return ""


class RunMessage(QLabel):
    def __init__(self, parent=None):
        super().__init__(" ", parent)
        self.full_html = ""
        self.compact = False  # one line (set by the panel for its screen class)
        self.setWordWrap(True)
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

    def plain_text(self) -> str:
        return QTextDocumentFragment.fromHtml(self.full_html).toPlainText()

    def fit(self) -> None:
        if not self.compact:
            self.setWordWrap(True)
            self.setTextFormat(Qt.TextFormat.AutoText)
            self.setText(self.full_html)
            self.setToolTip("")
            return
        plain = self.plain_text()
        self.setWordWrap(False)
        self.setTextFormat(Qt.TextFormat.PlainText)
        room, metrics = max(0, self.width() - 8), self.fontMetrics()
        shown = whole_sentences(plain, lambda t: metrics.horizontalAdvance(t) <= room)
        self.setText(shown or metrics.elidedText(plain, Qt.TextElideMode.ElideRight, room))
        self.setToolTip(plain)

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        if self.compact and self.full_html:
            self.fit()


__all__ = ["RunMessage", "whole_sentences"]
