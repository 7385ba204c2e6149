"""The training progress bar, whose text always fits it.

A progress line such as "step 191 · 31% → 99% · 12 s" is wider than the bar on a 1280×720
projector at presentation scale; QProgressBar then wraps it into two cut lines. This bar keeps
the whole text and shows the longest form that fits: without the rate, then without the step,
then the last part alone (the clock or the time left), elided only as a last resort.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QProgressBar

SEPARATOR = " · "
PADDING = 14  # px the style keeps around the text


def shorter_forms(text: str) -> list[str]:
    """`text`, then forms with fewer " · " parts, most telling last-dropped: the rate goes
    first, then the leading step count; the last part (clock or time left) stays longest."""
    parts = text.split(SEPARATOR)
    forms = [parts]
    no_rate = [p for p in parts if not p.endswith("steps/s")]
    forms.append(no_rate)
    if len(no_rate) > 1 and no_rate[0].startswith("step "):
        forms.append(no_rate[1:])
    forms.append(parts[-1:])
    out: list[str] = []
    for form in forms:
        joined = SEPARATOR.join(form)
        if joined not in out:
            out.append(joined)
    return out


class FittingProgressBar(QProgressBar):
    """A QProgressBar whose `set_text` shows the longest of `shorter_forms` that fits."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.full_text = ""

    def set_text(self, text: str) -> None:
        self.full_text = text
        self._fit()

    def shown_text(self) -> str:
        return self.format()

    def _fit(self) -> None:
        room = self.contentsRect().width() - PADDING
        fm = QFontMetricsF(self.font())
        forms = shorter_forms(self.full_text)
        text = next((f for f in forms if fm.horizontalAdvance(f) <= room), None)
        if text is None:
            text = fm.elidedText(forms[-1], Qt.TextElideMode.ElideRight, max(room, 0.0))
        if text != self.format():
            self.setFormat(text)

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._fit()

    def changeEvent(self, event) -> None:  # noqa: N802 - a presentation font change re-fits the text
        super().changeEvent(event)
        if self.full_text:
            self._fit()


__all__ = ["FittingProgressBar", "shorter_forms"]
