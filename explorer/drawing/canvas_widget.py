"""`CanvasWidget`: a QWidget that is one pyqtgraph canvas edge to edge (the base of every view
that draws plots into `self.canvas.ci`), so each view does not lay out its canvas again."""
from __future__ import annotations

from PySide6.QtWidgets import QVBoxLayout, QWidget

from explorer.drawing import plot_style as st


class CanvasWidget(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.canvas = st.graphics_widget()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.canvas)
