"""`FigureView`: Figure 1 of a config in a view of its own, drawn in the arrangement the view shows
largest and fitted to its room until the user zooms (the wheel zooms around the cursor, dragging
the background pans)."""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QSizeF, Qt, QTimer
from PySide6.QtGui import QBrush, QPainter
from PySide6.QtWidgets import QGraphicsScene, QGraphicsView

from explorer import style, theme
from explorer.panels.architecture.figure1 import Figure, TokenLines, draw_figure1, place_token_lines


class FigureView(QGraphicsView):
    """`on_click(key)`: a block or a layer's box clicked; `fill(figure)`: a drawing's per-input
    texts written (step keys, shapes), at each `show_figure` and after each new drawing."""

    MIN_SCALE, MAX_SCALE = 0.1, 6.0
    FIT_MAX = 1.25  # fitting never magnifies more (× the presentation scale): huge text helps nobody

    def __init__(self, parent=None, on_click: Callable[[str], None] | None = None,
                 fill: Callable[[Figure], None] | None = None):
        super().__init__(parent)
        self.setScene(QGraphicsScene(self))
        self.setRenderHints(QPainter.Antialiasing | QPainter.TextAntialiasing | QPainter.SmoothPixmapTransform)
        self.setDragMode(QGraphicsView.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.AnchorUnderMouse)
        self.setResizeAnchor(QGraphicsView.AnchorViewCenter)
        self.on_click, self.fill = on_click, fill
        self.config, self.expanded, self.lines = None, False, {}
        self.figure = Figure()
        self.sizes: dict[tuple[bool, bool], QSizeF] = {}  # (inline, token lines beside): the figure's size
        self.measured: tuple | None = None  # what `sizes` were measured for
        self.arranged: tuple[bool, bool] | None = None
        self.auto_fit = True
        self.relayout = QTimer(self, singleShot=True, interval=0, timeout=self.arrange)
        self.restyle()
        theme.notifier().changed.connect(self.restyle)

    def restyle(self, *_) -> None:
        """The canvas and the figure's items in the current palette, the user's zoom kept."""
        self.setBackgroundBrush(QBrush(style.colour("canvas")))
        self.arrange(redraw=True)

    def show_figure(self, config, expanded: bool = False, lines: TokenLines | None = None) -> None:
        """Figure 1 of `config` (every layer where `expanded`) with these token lines, drawn again
        where the config, the expansion or the best arrangement changed."""
        redraw = (config, expanded) != (self.config, self.expanded)
        self.config, self.expanded, self.lines = config, expanded, lines or {}
        measured = (id(config), expanded, repr(self.lines))
        if measured != self.measured:
            self.measured, self.sizes = measured, self._measure()
        self.arrange(redraw=redraw, fill=True)

    def _measure(self) -> dict[tuple[bool, bool], QSizeF]:
        """The figure's size in each arrangement: shapes under or beside the names (`inline`),
        token lines under or beside their labels."""
        sizes = {}
        for inline in (False, True):
            scene = QGraphicsScene()
            figure = draw_figure1(scene, self.config, self.expanded, inline)
            for beside in (False, True) if inline else (False,):
                place_token_lines(figure, self.lines, beside)
                sizes[inline, beside] = scene.itemsBoundingRect().size()
        return sizes

    def arrange(self, redraw: bool = False, fill: bool = False) -> None:
        """Draw the arrangement the view shows largest (the one shown wins ties within 2 %: no flapping)."""
        if self.config is None or not self.sizes:
            return
        room = self.viewport().size()

        def scale(arrangement: tuple[bool, bool]) -> float:
            size = self.sizes[arrangement]
            fit = min(room.width() / max(size.width(), 1.0), room.height() / max(size.height(), 1.0))
            return fit * (1.02 if arrangement == self.arranged else 1.0)
        self.arranged = inline, beside = max(self.sizes, key=scale)
        if redraw or inline != self.figure.inline or not self.figure.elements:
            self.scene().clear()
            self.figure = draw_figure1(self.scene(), self.config, self.expanded, inline, self.on_click)
            fill = True
        if fill and self.fill is not None:
            self.fill(self.figure)
        place_token_lines(self.figure, self.lines, beside)
        if self.auto_fit:
            self.fit()

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
        self.relayout.start()  # (the arrangement chosen once the resize's events are done)
