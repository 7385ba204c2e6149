"""`CaptionLabel`: a tour caption across the whole window, exactly as tall as its lines (a
word-wrapped QLabel in a toolbar wraps at its own size hint, into more lines than needed)."""
from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QLabel, QSizePolicy

LEAST_WIDTH = 200  # px: what the label asks for before it has a width (the toolbar gives it the rest)


class CaptionLabel(QLabel):
    def __init__(self, text: str = "", parent=None, **options):
        super().__init__(text, parent, **options)
        self.setWordWrap(True)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Preferred)
        self._asked = -1  # the height the last size hint gave

    def _height(self) -> int:
        return self.heightForWidth(max(self.width(), LEAST_WIDTH))

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        self._asked = self._height()
        return QSize(LEAST_WIDTH, self._asked)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(LEAST_WIDTH // 2, self._height())

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        if self._height() != self._asked:  # another width: as many lines as the text needs there
            self.updateGeometry()
