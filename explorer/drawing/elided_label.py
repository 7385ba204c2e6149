"""`ElidedLabel`: a title or readout that fits the width it is given instead of asking for more.

Maps' titles (decoding, mask leak), the compare panel's lines and the attention panel's hover
readout use it: on a projector a label that asks for its text's width would widen its panel
until the panel scrolls sideways.
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QFontMetrics, QFontMetricsF
from PySide6.QtWidgets import QLabel, QSizePolicy


class ElidedLabel(QLabel):
    """A label that never widens its panel: its text whole, or on two lines where `break_at`
    allows ("Cross-attention⏎L1 H1"), or shortened with "…"; the whole text in its tooltip and
    `full_text`. Centred (a map's title) unless its owner aligns it otherwise (a readout)."""

    def __init__(self, text: str = "", parent=None):
        super().__init__(parent)
        self.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Fixed)
        self.setAlignment(Qt.AlignCenter)
        self.setTextFormat(Qt.PlainText)  # it measures plain text; a model's output "<b>…" is no markup
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt's name
        """One text (any shorter forms given before are dropped)."""
        self.set_texts(text)

    def set_texts(self, text: str, *shorter: str) -> None:
        """`text`, or where it is not whole the first of the `shorter` forms that is ("Own model:
        1 layer × 4 heads" for "…, d_model 64, facts corpus"), before anything is cut with "…".
        (`least_width` and `lines_at`, asked by a flow of maps' titles, weigh the full text only.)"""
        self.full_text = text
        self.shorter = shorter
        self.setToolTip(text)
        self._elide()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._elide()

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().changeEvent(event)
        if event.type() == QEvent.FontChange:  # elided for the old font: presentation may change
            self._elide()  # the font at an unchanged width, and the break or the cut must follow it

    break_at: str | None = None  # where a title too long for one line may break into two (": ", " ")
    shorter: tuple[str, ...] = ()  # shorter forms of the text, tried in order before eliding (`set_texts`)
    keep_tail = False  # no break leaves both lines whole: cut the first line and keep the second whole
    # (a line whose last part explains the rest: compare's "…; both maps read A's output")

    def _splits(self, text: str) -> list[tuple[str, str]]:
        """(first line, second line) at each place `break_at` allows, first to last."""
        if not self.break_at:
            return []
        # ": " and "; " end the first line ("no mask:"); a divider (" · ") is dropped at the break
        keep = self.break_at.rstrip() if self.break_at.rstrip()[-1:] in (":", ";", ",") else ""
        out, i = [], text.find(self.break_at)
        while i >= 0:
            out.append((text[:i] + keep, text[i + len(self.break_at):]))
            i = text.find(self.break_at, i + 1)
        return out

    def least_width(self) -> float:
        """The narrowest width in which the title is whole: on one line, or on two where
        `break_at` lets it break (a layout asks this before it narrows the title's column)."""
        metrics = QFontMetricsF(self.font())
        widths = [max(metrics.horizontalAdvance(a), metrics.horizontalAdvance(b)) for a, b in self._splits(self.full_text)]
        return min([metrics.horizontalAdvance(self.full_text), *widths]) + 1  # (Qt cuts a text exactly its width)

    def lines_at(self, width: float) -> int:
        """How many lines the title takes in `width` pixels: 1 (whole or elided) or 2 (broken)."""
        metrics = QFontMetrics(self.font())  # (as drawn: `fontMetrics()`, whole pixels)
        width = int(width)

        def whole(line: str) -> bool:  # as `_elide` decides, with Qt's own test
            return metrics.elidedText(line, Qt.ElideRight, width) == line

        if whole(self.full_text):
            return 1
        return 2 if any(whole(a) and whole(b) for a, b in self._splits(self.full_text)) else 1

    def _elide(self) -> None:
        width = max(self.width(), 20)
        metrics = self.fontMetrics()
        text = self.full_text

        def whole(line: str) -> bool:  # Qt's own test, as it draws: a text whose advance equals the
            return metrics.elidedText(line, Qt.ElideRight, width) == line  # width was still cut ("L1 …")

        if not whole(text):
            splits = [(max(metrics.horizontalAdvance(a), metrics.horizontalAdvance(b)), a, b)
                      for a, b in self._splits(text) if whole(a) and whole(b)]
            if splits:  # the most even break ("Self-attention⏎L1 H1")
                _, head, tail = min(splits)
                QLabel.setText(self, f"{head}\n{tail}")  # whole, on two lines
                return
            tails = [(head, tail) for head, tail in self._splits(text) if whole(tail)] if self.keep_tail else []
            if tails:  # the first line as much as fits, the second whole (the last break: the
                head, tail = tails[-1]  # explanation, not a "; " inside a model's output)
                QLabel.setText(self, f"{metrics.elidedText(head, Qt.ElideRight, width)}\n{tail}")
                return
            text = next((short for short in self.shorter if whole(short)), self.shorter[-1] if self.shorter else text)
        QLabel.setText(self, metrics.elidedText(text, Qt.ElideRight, width))


__all__ = ["ElidedLabel"]
