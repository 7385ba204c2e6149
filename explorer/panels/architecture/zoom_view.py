"""`ZoomView`: the architecture diagram's view — fitted to its dock until the user zooms."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QPainter
from PySide6.QtWidgets import QGraphicsScene, QGraphicsView

from explorer import style, theme


class ZoomView(QGraphicsView):
    """Wheel (with or without Ctrl) zooms around the cursor, dragging the background pans; until
    the user zooms, the view keeps the whole figure fitted to its size."""

    MIN_SCALE, MAX_SCALE = 0.1, 6.0
    FIT_MAX = 1.25  # fitting never magnifies more (× the presentation scale): huge text helps nobody
    resized = Signal()

    def __init__(self, scene: QGraphicsScene, parent=None):
        super().__init__(scene, parent)
        self.setRenderHints(QPainter.Antialiasing | QPainter.TextAntialiasing | QPainter.SmoothPixmapTransform)
        self.setDragMode(QGraphicsView.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.AnchorUnderMouse)
        self.setResizeAnchor(QGraphicsView.AnchorViewCenter)
        self.auto_fit = True
        self.restyle()
        theme.notifier().changed.connect(self.restyle)

    def restyle(self, *_) -> None:
        """The canvas in the current palette (the panel redraws the figure's items)."""
        self.setBackgroundBrush(QBrush(style.colour("canvas")))

    def zoom(self, factor: float) -> None:
        current = self.transform().m11()
        factor = max(self.MIN_SCALE / current, min(self.MAX_SCALE / current, factor))
        self.auto_fit = False
        self.scale(factor, factor)

    def fit(self) -> None:
        """Fit the whole figure as one drawing (aspect kept), never magnified beyond FIT_MAX."""
        self.auto_fit = True
        rect = self.scene().itemsBoundingRect().adjusted(-8, -8, 8, 8)  # a thin margin: the drawing is the screen
        if rect.isEmpty():
            return
        self.setSceneRect(rect)
        self.fitInView(rect, Qt.KeepAspectRatio)
        most = self.FIT_MAX * max(style.scale(), 1.0)
        if self.transform().m11() > most:
            self.resetTransform()
            self.scale(most, most)
            self.centerOn(rect.center())

    def wheelEvent(self, event) -> None:  # noqa: N802
        steps = event.angleDelta().y() / 120.0
        if steps:
            self.zoom(1.15 ** steps)
        event.accept()

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        if self.auto_fit:
            self.fit()
        self.resized.emit()
