"""A combo box whose text, when too long, is the name alone ("dates", not "dates — human-wr"),
else ends in "…" (Qt's cuts it mid-letter); its tooltip holds the whole entry."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QStyle, QStyleOptionComboBox, QStylePainter

NAME_SEPARATOR = " — "  # "name — what it does" (model.interpret.input_texts.model_description)


class ElidingComboBox(QComboBox):
    def __init__(self, parent=None, **options):
        super().__init__(parent, sizeAdjustPolicy=QComboBox.AdjustToMinimumContentsLengthWithIcon, **options)
        self.currentIndexChanged.connect(self._tip)

    def _tip(self, _index: int = 0) -> None:
        if self.toolTip() in ("", self.property("elided_tip")):  # a tooltip set by the owner stays
            self.setToolTip(self.currentText())
            self.setProperty("elided_tip", self.currentText())

    def _fitted(self, opt: QStyleOptionComboBox) -> str:
        text, metrics = opt.currentText, self.fontMetrics()
        room = self.style().subControlRect(QStyle.ComplexControl.CC_ComboBox, opt,
                                           QStyle.SubControl.SC_ComboBoxEditField, self).width()
        if metrics.horizontalAdvance(text) > room and NAME_SEPARATOR in text:
            text = text.split(NAME_SEPARATOR, 1)[0]  # "reverse", not "reverse — rever…"
        if metrics.horizontalAdvance(text) > room and " (" in text:
            text = text.split(" (", 1)[0]  # "Architecture", not "Architecture (Fi…"
        return metrics.elidedText(text, Qt.TextElideMode.ElideRight, room)

    def shown_text(self) -> str:
        """The text as painted now: whole, the name alone, or elided to the edit field's width."""
        opt = QStyleOptionComboBox()
        self.initStyleOption(opt)
        return self._fitted(opt)

    def paintEvent(self, event) -> None:  # noqa: N802
        painter = QStylePainter(self)
        opt = QStyleOptionComboBox()
        self.initStyleOption(opt)
        painter.drawComplexControl(QStyle.ComplexControl.CC_ComboBox, opt)
        opt.currentText = self._fitted(opt)
        painter.drawControl(QStyle.ControlElement.CE_ComboBoxLabel, opt)
