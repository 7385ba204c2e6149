"""The hover readout and the mask key, in the tab bar's row right of the view tabs (room that
is otherwise empty, so the maps keep every line). The readout keeps to one line (elided, the
whole text in its tooltip); the corner asks for exactly the width the tabs leave.
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QTabWidget, QWidget

from explorer import style

GAP_PX = 16  # between the last tab and the readout


class TabCorner(QWidget):
    """`readout` (one eliding line, left-aligned) and `legend` side by side, as wide as `tabs` leaves."""

    def __init__(self, tabs: QTabWidget, legend: QLabel, parent=None):
        super().__init__(parent)
        self.tabs = tabs
        self.readout = style.eliding_line(" ")
        self.legend = legend
        row = QHBoxLayout(self)
        row.setContentsMargins(GAP_PX, 0, 4, 0)
        row.addWidget(self.readout, 1)
        row.addWidget(legend)
        self._hint = QSize()
        # the room left changes with the tabs' width and with the tab bar's own (fonts)
        tabs.installEventFilter(self)
        tabs.tabBar().installEventFilter(self)
        tabs.setCornerWidget(self, Qt.Corner.TopRightCorner)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        bar = self.tabs.tabBar()
        room = self.tabs.width() - bar.sizeHint().width() - 2
        margins = self.layout().contentsMargins()
        legend = self.legend.sizeHint().width() + margins.left() + margins.right() if self.legend.isVisible() else 0
        return QSize(max(room, legend, 1), max(bar.sizeHint().height(), self.readout.sizeHint().height()))

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(1, 1)  # never a reason for the tabs to scroll

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        if event.type() in (QEvent.Type.Resize, QEvent.Type.FontChange):
            hint = self.sizeHint()
            if hint != self._hint:  # only a real change asks the tabs to lay out again
                self._hint = hint
                self.updateGeometry()
        return False


__all__ = ["TabCorner"]
