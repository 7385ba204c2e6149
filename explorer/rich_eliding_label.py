"""`RichElidingLabel`: one line of rich text cut to its width, coloured spans kept (superqt's
QElidingLabel elides plain text) at the last character or allowed stop that leaves room for a
marker ("…", "… +12 more"), after trying the shorter forms it was given whole. `text()` is the
whole text, `shown_text()` what is drawn."""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QFontMetricsF, QTextCharFormat, QTextCursor, QTextDocument, QTextLine
from PySide6.QtWidgets import QLabel, QSizePolicy


def _document(text: str, font) -> QTextDocument:
    doc = QTextDocument()
    doc.setDefaultFont(font)
    doc.setDocumentMargin(0)  # (as QLabel lays its rich text out)
    doc.setHtml(text)
    return doc


def elide_rich(text: str, font, width: float, stops: Sequence[int] = (),
               marker: Callable[[int], str] = lambda kept: "…") -> str:
    """`text` (rich) whole if it fits `width` px; else its start up to the last character (or of
    `stops`, plain-text positions) that fits before `marker(kept characters)`, formatting kept."""
    doc = _document(text, font)
    if doc.idealWidth() <= width:
        return text
    line, advance = doc.firstBlock().layout().lineAt(0), QFontMetricsF(font).horizontalAdvance
    reserve, cut = 0.0, 0
    for _ in range(4):  # room for the marker the cut gets (its count may change with the cut)
        cut = line.xToCursor(max(width - reserve, 0.0), QTextLine.CursorPosition.CursorOnCharacter)
        if stops:
            cut = max((stop for stop in stops if stop <= cut), default=min(stops))
        if advance(marker(cut)) <= reserve:
            break
        reserve = advance(marker(cut))
    cursor = QTextCursor(doc)
    cursor.setPosition(cut)
    cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
    cursor.removeSelectedText()
    cursor.insertText(marker(cut), QTextCharFormat())  # in the label's own colour, not the cut span's
    return doc.toHtml()


class RichElidingLabel(QLabel):
    """A one-line rich-text label that elides. `least`: the plain text whose width is the least it
    asks of its layout; `stops` / `marker`: where it may be cut and what it says there;
    `shorter`: forms of the text, shortest last, shown whole where the text does not fit."""

    def __init__(self, least: str = "m…", parent=None):
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setWordWrap(False)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.least = least
        self.stops: Sequence[int] = ()
        self.marker: Callable[[int], str] = lambda kept: "…"
        self.whole = ""
        self.shorter: Sequence[str] = ()

    def setText(self, text: str, stops: Sequence[int] = (), marker: Callable[[int], str] | None = None,  # noqa: N802
                shorter: Sequence[str] = ()) -> None:
        self.whole, self.stops, self.shorter = text, stops, shorter
        self.marker = marker or (lambda kept: "…")
        self._elide()
        self.updateGeometry()

    def text(self) -> str:
        """The whole text (what is drawn: `shown_text`)."""
        return self.whole

    def shown_text(self) -> str:
        return QLabel.text(self)

    def _elide(self) -> None:
        room = self.contentsRect().width() - 2 * self.margin() - max(self.indent(), 0)
        forms = (self.whole, *self.shorter)
        fits = next((form for form in forms[:-1] if _document(form, self.font()).idealWidth() <= room), None)
        shown = fits or elide_rich(forms[-1], self.font(), room, self.stops if not self.shorter else (), self.marker)
        if shown != QLabel.text(self):
            QLabel.setText(self, shown)

    def _around(self, width: float) -> int:
        """`width` of text plus the label's margins."""
        margins = self.contentsMargins()
        return math.ceil(width) + margins.left() + margins.right() + 2 * self.margin() + 1

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(self._around(_document(self.whole, self.font()).idealWidth()), super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        least = QFontMetricsF(self.font()).horizontalAdvance(self.least) if self.whole else 0
        return QSize(self._around(least), super().minimumSizeHint().height())

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._elide()

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:  # (presenting: larger text, another cut)
            self._elide()
            self.updateGeometry()
