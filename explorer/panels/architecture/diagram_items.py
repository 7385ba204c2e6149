"""Graphics items of the architecture diagram: blocks, the ⊕ adder, the positional-encoding
wave, arrows, and a zoomable view. Vector items in a `QGraphicsScene`, so the figure stays
crisp at any zoom and on any projector.

Items know nothing of the session state: a clicked block calls the `on_click(key)` callback
its panel gave it.
"""
from __future__ import annotations

import math
from typing import Callable

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPainterPath, QPen, QPolygonF
from PySide6.QtWidgets import (QGraphicsItem, QGraphicsObject, QGraphicsPathItem, QGraphicsScene,
                               QGraphicsSimpleTextItem, QGraphicsView)

from explorer import style, theme

BLOCK_W = 256.0
BLOCK_H = 54.0
ADDER_R = 15.0
THEME_ROLE = 0  # QGraphicsItem.data key: the palette roles of an item's pen and brush


class Clickable:
    """Mixin: a diagram element that stands for a step prefix (`key`) and can be highlighted."""

    key: str = ""
    on_click: Callable[[str], None] | None = None

    def mousePressEvent(self, event) -> None:  # noqa: N802 - Qt name
        if event.button() == Qt.LeftButton and self.on_click is not None and self.key:
            self.on_click(self.key)
            event.accept()
        else:
            event.ignore()


def fitted_font(title: str, width: float, point_size: int, minimum: int = 11) -> QFont:
    """The bold title font, shrunk a point at a time until `title` fits in `width`."""
    size = point_size
    while True:
        f = style.font(size, bold=True)
        if size <= minimum or QFontMetricsF(f).horizontalAdvance(title) <= width:
            return f
        size -= 1


class BlockItem(Clickable, QGraphicsObject):
    """A rounded box with a bold title and, under it, the tensor shape flowing out of it."""

    def __init__(self, key: str, title: str, role: str, width: float = BLOCK_W, height: float = BLOCK_H):
        super().__init__()
        self.key, self.title, self.role = key, title, role
        self.shape_text = ""
        self.w, self.h = width, height
        self.highlighted = False
        self.setCursor(Qt.PointingHandCursor)
        self.setAcceptHoverEvents(True)
        self._hover = False

    def boundingRect(self) -> QRectF:  # noqa: N802
        return QRectF(-self.w / 2 - 4, -self.h / 2 - 4, self.w + 8, self.h + 8)

    def rect(self) -> QRectF:
        return QRectF(-self.w / 2, -self.h / 2, self.w, self.h)

    def set_shape_text(self, text: str) -> None:
        if text != self.shape_text:
            self.shape_text = text
            self.update()

    def set_highlighted(self, on: bool) -> None:
        if on != self.highlighted:
            self.highlighted = on
            self.update()

    def hoverEnterEvent(self, event) -> None:  # noqa: N802
        self._hover = True
        self.update()

    def hoverLeaveEvent(self, event) -> None:  # noqa: N802
        self._hover = False
        self.update()

    def paint(self, painter: QPainter, option, widget=None) -> None:
        fill = QColor(style.current().blocks.get(self.role, style.current().canvas))
        if self._hover:
            fill = fill.lighter(108)
        pen = QPen(style.ACCENT, 4.0) if self.highlighted else QPen(style.colour("line"), 1.6)
        painter.setPen(pen)
        painter.setBrush(QBrush(fill))
        painter.drawRoundedRect(self.rect(), 9, 9)
        painter.setPen(style.colour("block_text"))
        r = self.rect()
        painter.setFont(fitted_font(self.title, r.width() - 12, style.TITLE_POINT_SIZE))
        if self.shape_text:
            painter.drawText(QRectF(r.left(), r.top() + 3, r.width(), r.height() / 2), Qt.AlignCenter, self.title)
            painter.setFont(style.font(style.BASE_POINT_SIZE + 1, mono=True))
            painter.setPen(style.colour("block_shape_text"))
            painter.drawText(QRectF(r.left(), r.center().y() - 1, r.width(), r.height() / 2 - 3), Qt.AlignCenter,
                             self.shape_text)
        else:
            painter.drawText(r, Qt.AlignCenter, self.title)

    # attachment points for arrows
    def top(self) -> QPointF:
        return self.mapToScene(QPointF(0, -self.h / 2))

    def bottom(self) -> QPointF:
        return self.mapToScene(QPointF(0, self.h / 2))

    def side(self, right: bool) -> QPointF:
        return self.mapToScene(QPointF(self.w / 2 if right else -self.w / 2, 0))


class AdderItem(BlockItem):
    """The ⊕ of Figure 1 (embedding + positions, or a pre-LN residual add), with its shape beside it."""

    def __init__(self, key: str, title: str = "Add", label_right: bool = True):
        super().__init__(key, title, "add", 2 * ADDER_R, 2 * ADDER_R)
        self.label_right = label_right

    def boundingRect(self) -> QRectF:  # noqa: N802
        return QRectF(-190, -ADDER_R - 4, 380, 2 * ADDER_R + 8)

    def shape(self) -> QPainterPath:  # clicks only on the circle, not on the text beside it
        path = QPainterPath()
        path.addEllipse(QPointF(0, 0), ADDER_R + 3, ADDER_R + 3)
        return path

    def paint(self, painter: QPainter, option, widget=None) -> None:
        pen = QPen(style.ACCENT, 4.0) if self.highlighted else QPen(style.colour("line"), 1.8)
        painter.setPen(pen)
        painter.setBrush(QBrush(style.colour("canvas" if not self._hover else "hover_fill")))
        painter.drawEllipse(QPointF(0, 0), ADDER_R, ADDER_R)
        painter.setPen(QPen(style.colour("line"), 2.2))
        painter.drawLine(QPointF(-ADDER_R * 0.6, 0), QPointF(ADDER_R * 0.6, 0))
        painter.drawLine(QPointF(0, -ADDER_R * 0.6), QPointF(0, ADDER_R * 0.6))
        if self.shape_text:
            painter.setPen(style.colour("block_shape_text"))
            painter.setFont(style.font(style.SMALL_POINT_SIZE + 1, mono=True))
            if self.label_right:
                painter.drawText(QRectF(ADDER_R + 8, -ADDER_R, 170, 2 * ADDER_R), Qt.AlignLeft | Qt.AlignVCenter,
                                 self.shape_text)
            else:
                painter.drawText(QRectF(-ADDER_R - 178, -ADDER_R, 170, 2 * ADDER_R),
                                 Qt.AlignRight | Qt.AlignVCenter, self.shape_text)


class WaveItem(BlockItem):
    """The positional-encoding symbol: a circle with a sine wave, its label and shape under it."""

    def __init__(self, key: str, label_right: bool = True, title: str = "Positional\nEncoding"):
        super().__init__(key, title, "positional", 40, 40)

    def boundingRect(self) -> QRectF:  # noqa: N802
        return QRectF(-70, -24, 140, 100)

    def shape(self) -> QPainterPath:
        path = QPainterPath()
        path.addEllipse(QPointF(0, 0), 23, 23)
        return path

    def paint(self, painter: QPainter, option, widget=None) -> None:
        pen = QPen(style.ACCENT, 4.0) if self.highlighted else QPen(style.colour("line"), 1.8)
        painter.setPen(pen)
        painter.setBrush(QBrush(style.colour("canvas" if not self._hover else "hover_fill")))
        painter.drawEllipse(QPointF(0, 0), 20, 20)
        wave = QPainterPath(QPointF(-14, 0))
        for i in range(1, 29):
            wave.lineTo(QPointF(-14 + i, -8 * math.sin(i / 28 * 2 * math.pi)))
        painter.setPen(QPen(style.colour("line"), 2.0))
        painter.setBrush(Qt.NoBrush)
        painter.drawPath(wave)
        painter.setPen(style.colour("block_text"))
        painter.setFont(style.font(style.SMALL_POINT_SIZE))
        painter.drawText(QRectF(-70, 22, 140, 36), Qt.AlignHCenter | Qt.AlignTop, self.title)
        if self.shape_text:
            painter.setFont(style.font(style.SMALL_POINT_SIZE, mono=True))
            painter.setPen(style.colour("block_shape_text"))
            painter.drawText(QRectF(-70, 56, 140, 20), Qt.AlignHCenter | Qt.AlignTop, self.shape_text)


class StackBox(Clickable, QGraphicsPathItem):
    """The grey rounded box around a layer (or the N× stack); clicking it selects the layer."""

    def __init__(self, key: str, rect: QRectF):
        super().__init__()
        self.key = key
        path = QPainterPath()
        path.addRoundedRect(rect, 16, 16)
        self.setPath(path)
        self.restyle()
        self.setZValue(-10)

    def restyle(self) -> None:
        """Fill and edge from the current palette (again after a theme switch)."""
        self.setBrush(QBrush(QColor(style.current().blocks["stack"])))
        self.setPen(QPen(style.colour("stack_edge"), 1.6))


def arrow(scene: QGraphicsScene, points: list[QPointF], head: bool = True, colour: str = "arrow",
          width: float = 1.8) -> QGraphicsPathItem:
    """A polyline through `points` with an arrow head at the last point, in the palette role `colour`."""
    path = QPainterPath(points[0])
    for p in points[1:]:
        path.lineTo(p)
    if head and len(points) >= 2:
        a, b = points[-2], points[-1]
        angle = math.atan2(b.y() - a.y(), b.x() - a.x())
        size = 10.0
        left = QPointF(b.x() - size * math.cos(angle - 0.45), b.y() - size * math.sin(angle - 0.45))
        right = QPointF(b.x() - size * math.cos(angle + 0.45), b.y() - size * math.sin(angle + 0.45))
    role, colour = colour, style.colour(colour)
    item = QGraphicsPathItem(path)
    item.setData(THEME_ROLE, role)
    item.setPen(QPen(colour, width, Qt.SolidLine, Qt.RoundCap, Qt.RoundJoin))
    item.setBrush(Qt.NoBrush)
    item.setZValue(-5)
    scene.addItem(item)
    if head and len(points) >= 2:  # fill the head only
        tip = QPainterPath()
        tip.addPolygon(QPolygonF([b, left, right, b]))
        head_item = QGraphicsPathItem(tip, item)
        head_item.setData(THEME_ROLE, role)
        head_item.setBrush(QBrush(colour))
        head_item.setPen(QPen(colour, 1))
    return item


def text(scene: QGraphicsScene, value: str, pos: QPointF, point_size: int = style.BASE_POINT_SIZE,
         bold: bool = False, mono: bool = False, colour: str = "text",
         align: Qt.AlignmentFlag = Qt.AlignHCenter) -> QGraphicsSimpleTextItem:
    """A text item anchored at `pos` (its centre, left or right edge by `align`), in the palette
    role `colour`."""
    item = QGraphicsSimpleTextItem(value)
    item.setFont(style.font(point_size, bold=bold, mono=mono))
    item.setData(THEME_ROLE, colour)
    item.setBrush(QBrush(style.colour(colour)))
    scene.addItem(item)
    place_text(item, pos, align)
    return item


def place_text(item: QGraphicsSimpleTextItem, pos: QPointF, align=Qt.AlignHCenter) -> None:
    br = item.boundingRect()
    if align & Qt.AlignLeft:
        x = pos.x()
    elif align & Qt.AlignRight:
        x = pos.x() - br.width()
    else:
        x = pos.x() - br.width() / 2
    item.setPos(x, pos.y() - br.height() / 2)


class ZoomView(QGraphicsView):
    """Wheel (with or without Ctrl) zooms around the cursor, dragging the background pans.

    Until the user zooms, the view keeps the whole figure fitted to its size."""

    MIN_SCALE, MAX_SCALE = 0.1, 6.0

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
        """The canvas and every item built with a palette role, in the current palette."""
        self.setBackgroundBrush(QBrush(style.colour("canvas")))
        scene = self.scene()
        for item in scene.items() if scene is not None else []:
            role = item.data(THEME_ROLE)
            if isinstance(item, StackBox):
                item.restyle()
            elif role and isinstance(item, QGraphicsSimpleTextItem):
                item.setBrush(QBrush(style.colour(role)))
            elif role and isinstance(item, QGraphicsPathItem):
                pen = item.pen()
                pen.setColor(style.colour(role))
                item.setPen(pen)
                if item.brush().style() != Qt.NoBrush:
                    item.setBrush(QBrush(style.colour(role)))
        self.viewport().update()

    def zoom(self, factor: float) -> None:
        current = self.transform().m11()
        factor = max(self.MIN_SCALE / current, min(self.MAX_SCALE / current, factor))
        self.auto_fit = False
        self.scale(factor, factor)

    def fit(self) -> None:
        """Fit the whole figure, but never magnify beyond 1.25× (huge text helps nobody)."""
        self.auto_fit = True
        rect = self.scene().itemsBoundingRect().adjusted(-16, -16, 16, 16)
        if rect.isEmpty():
            return
        self.setSceneRect(rect)
        self.fitInView(rect, Qt.KeepAspectRatio)
        if self.transform().m11() > 1.25:
            self.resetTransform()
            self.scale(1.25, 1.25)
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


__all__ = ["AdderItem", "BlockItem", "QGraphicsItem", "StackBox", "WaveItem", "ZoomView", "arrow", "text"]
