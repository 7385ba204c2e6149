"""The hover readout and the mask key, in the tab bar's row right of the view tabs.

They had a line of their own under the maps: ~31 px that a 1280×720 projector took from the
all-heads grid, whose 24-token maps then could not name every token. In the tab row they use
room that was empty. The readout keeps to one line (elided, the whole text in its tooltip and
in `full_text`); the corner asks for exactly the width the tabs leave, so the tabs never scroll.
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QTabWidget, QWidget

from explorer.drawing.token_heatmap import ElidedLabel

GAP_PX = 16  # between the last tab and the readout


class TabCorner(QWidget):
    """`readout` (an ElidedLabel, left-aligned) and `legend` side by side, as wide as `tabs` leaves."""

    def __init__(self, tabs: QTabWidget, legend: QLabel, parent=None):
        super().__init__(parent)
        self.tabs = tabs
        self.readout = ElidedLabel(" ")
        self.readout.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self.legend = legend
        row = QHBoxLayout(self)
        row.setContentsMargins(GAP_PX, 0, 4, 0)
        row.addWidget(self.readout, 1)
        row.addWidget(legend)
        tabs.installEventFilter(self)  # its resize changes the room left
        tabs.setCornerWidget(self, Qt.Corner.TopRightCorner)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        bar = self.tabs.tabBar()
        room = self.tabs.width() - bar.sizeHint().width() - 2
        return QSize(max(room, self.legend.sizeHint().width() if self.legend.isVisible() else 0, 1),
                     max(bar.sizeHint().height(), self.readout.sizeHint().height()))

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(1, 1)  # never a reason for the tabs to scroll

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        if obj is self.tabs and event.type() in (QEvent.Type.Resize, QEvent.Type.FontChange, QEvent.Type.LayoutRequest):
            self.updateGeometry()
        return False


__all__ = ["TabCorner"]
