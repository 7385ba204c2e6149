"""Graphics items of the architecture diagram: blocks, the ⊕ adder, the positional-encoding
wave and arrows (the zoomable view: `zoom_view`). Vector items in a `QGraphicsScene`, so the figure stays
crisp at any zoom and on any projector.

Items know nothing of the session state: a clicked block calls the `on_click(key)` callback
its panel gave it.
"""
from __future__ import annotations

import math
from collections.abc import Callable

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPainterPath, QPen, QPolygonF
from PySide6.QtWidgets import QGraphicsItem, QGraphicsObject, QGraphicsPathItem, QGraphicsScene, QGraphicsSimpleTextItem

from explorer import style

ADDER_R = 15.0
WAVE_R = 20.0
THEME_ROLE = 0  # QGraphicsItem.data key: the palette roles of an item's pen and brush
PAD_X, PAD_Y, TEXT_GAP = 10.0, 4.0, 14.0  # inside a block: around and between its texts

# The figure is one drawing: its fonts are NOT multiplied by the presentation scale
# (`style.scale()`); the view scales text, boxes and arrows together (fitInView).
TITLE_PT = 18  # block names
SHAPE_PT = 14  # tensor shapes (mono): secondary to the names, and the widest part of a wide figure
LABEL_PT = 18  # Inputs, Encoder, Output Probabilities (bold)
SMALL_PT = 15  # layer i/N, the positional symbol's name, token lines
STACK_PT = 28  # "N×"


def diagram_font(point_size: float, bold: bool = False, mono: bool = False) -> QFont:
    """A font of the drawing, at the drawing's own size (the view zooms it)."""
    f = QFont(style.MONO_FAMILY if mono else style.SANS_FAMILY)
    f.setPointSizeF(point_size)
    f.setBold(bold)
    return f


def title_font() -> QFont:
    return diagram_font(TITLE_PT, bold=True)


def shape_font() -> QFont:
    return diagram_font(SHAPE_PT, mono=True)


def text_width(value: str, font: QFont) -> float:
    """The width `value` takes in `font` (the widest line of a multi-line text)."""
    fm = QFontMetricsF(font)
    return max((fm.horizontalAdvance(line) for line in value.split("\n")), default=0.0)


def line_height(font: QFont) -> float:
    return QFontMetricsF(font).height()


def _child_text(parent: QGraphicsItem, font: QFont, role: str) -> QGraphicsSimpleTextItem:
    item = QGraphicsSimpleTextItem(parent)
    item.setFont(font)
    item.setData(THEME_ROLE, role)
    item.setBrush(QBrush(style.colour(role)))
    item.setAcceptedMouseButtons(Qt.NoButton)  # a click on the name is a click on the block
    return item


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


class BlockItem(Clickable, QGraphicsObject):
    """A rounded box with its name and the tensor shape flowing out of it: two text items,
    under each other (`inline=False`) or side by side, placed inside the box by their metrics."""

    def __init__(self, key: str, title: str, role: str, width: float, height: float, inline: bool = False,
                 label: str | None = None, label_font: QFont | None = None):
        """label: the name drawn (default `title`; a symbol's is shorter or none), in `label_font`."""
        super().__init__()
        self.key, self.title, self.role = key, title, role
        self.shape_text = ""
        self.w, self.h = width, height
        self.inline = inline
        self.highlighted = False
        self.edited = False  # an attention block with heads changed by head surgery (dashed outline)
        self.setCursor(Qt.PointingHandCursor)
        self.setAcceptHoverEvents(True)
        self._hover = False
        self.title_item = _child_text(self, label_font or title_font(), "block_text")
        self.title_item.setText(title if label is None else label)
        self.shape_item = _child_text(self, shape_font(), "block_shape_text")
        self._place_texts()

    @staticmethod
    def size_for(titles: list[str], shape_room: float, inline: bool) -> tuple[float, float]:
        """The (width, height) a block needs so that every title and a shape `shape_room` wide fit."""
        tw = max((text_width(t, title_font()) for t in titles), default=0.0)
        th, sh = line_height(title_font()), line_height(shape_font())
        if inline:
            return tw + TEXT_GAP + shape_room + 2 * PAD_X, max(th, sh) + 2 * PAD_Y
        return max(tw, shape_room) + 2 * PAD_X, th + sh + 2 * PAD_Y

    def texts(self) -> list[QGraphicsSimpleTextItem]:
        """The text items drawn inside the box (for layout checks)."""
        return [self.title_item] + ([self.shape_item] if self.shape_text else [])

    def _place_texts(self) -> None:
        r = self.rect()
        title, shape = self.title_item.boundingRect(), self.shape_item.boundingRect()
        self.shape_item.setVisible(bool(self.shape_text))
        if not self.shape_text:
            self.title_item.setPos(r.center().x() - title.width() / 2, r.center().y() - title.height() / 2)
        elif self.inline:
            self.title_item.setPos(r.left() + PAD_X, r.center().y() - title.height() / 2)
            self.shape_item.setPos(r.right() - PAD_X - shape.width(), r.center().y() - shape.height() / 2)
        else:
            top = r.center().y() - (title.height() + shape.height()) / 2
            self.title_item.setPos(r.center().x() - title.width() / 2, top)
            self.shape_item.setPos(r.center().x() - shape.width() / 2, top + title.height())

    def boundingRect(self) -> QRectF:  # noqa: N802
        return QRectF(-self.w / 2 - 4, -self.h / 2 - 4, self.w + 8, self.h + 8)

    def rect(self) -> QRectF:
        return QRectF(-self.w / 2, -self.h / 2, self.w, self.h)

    def set_shape_text(self, text: str) -> None:
        if text != self.shape_text:
            self.shape_text = text
            self.shape_item.setText(text)
            self._place_texts()

    def set_highlighted(self, on: bool) -> None:
        if on != self.highlighted:
            self.highlighted = on
            self.update()

    def set_edited(self, on: bool) -> None:
        if on != self.edited:
            self.edited = on
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
        if self.edited:  # heads changed by head surgery: a dashed ring just outside the box
            ring = QPen(style.colour("accent_text"), 2.5, Qt.PenStyle.DashLine)
            painter.setPen(ring)
            painter.setBrush(Qt.NoBrush)
            painter.drawRoundedRect(self.rect().adjusted(-3, -3, 3, 3), 11, 11)

    # attachment points for arrows
    def top(self) -> QPointF:
        return self.mapToScene(QPointF(0, -self.h / 2))

    def bottom(self) -> QPointF:
        return self.mapToScene(QPointF(0, self.h / 2))

    def side(self, right: bool) -> QPointF:
        return self.mapToScene(QPointF(self.w / 2 if right else -self.w / 2, 0))


class _Symbol(BlockItem):
    """A round symbol of Figure 1 (⊕, ∿) with its `sign()` path: clicked on its circle only."""

    def boundingRect(self) -> QRectF:  # noqa: N802
        return self.rect().adjusted(-4, -4, 4, 4)

    def shape(self) -> QPainterPath:
        path = QPainterPath()
        path.addEllipse(self.rect().adjusted(-3, -3, 3, 3))
        return path

    def paint(self, painter: QPainter, option, widget=None) -> None:
        painter.setPen(QPen(style.ACCENT, 4.0) if self.highlighted else QPen(style.colour("line"), 1.8))
        painter.setBrush(QBrush(style.colour("canvas" if not self._hover else "hover_fill")))
        painter.drawEllipse(self.rect())
        painter.setPen(QPen(style.colour("line"), 2.0))
        painter.setBrush(Qt.NoBrush)
        painter.drawPath(self.sign())


class AdderItem(_Symbol):
    """The ⊕ of Figure 1 (embedding + positions, or a pre-LN residual add), with its shape beside it."""

    def __init__(self, key: str, title: str = "Add", label_right: bool = True):
        self.label_right = label_right
        super().__init__(key, title, "add", 2 * ADDER_R, 2 * ADDER_R, label="")  # the symbol is its name

    def texts(self) -> list[QGraphicsSimpleTextItem]:
        return [self.shape_item] if self.shape_text else []

    def _place_texts(self) -> None:
        br = self.shape_item.boundingRect()
        x = ADDER_R + 8 if self.label_right else -ADDER_R - 8 - br.width()
        self.shape_item.setPos(x, -br.height() / 2)
        self.shape_item.setVisible(bool(self.shape_text))

    def sign(self) -> QPainterPath:
        arm = ADDER_R * 0.6
        plus = QPainterPath(QPointF(-arm, 0))
        plus.lineTo(arm, 0)
        plus.moveTo(0, -arm)
        plus.lineTo(0, arm)
        return plus


class WaveItem(_Symbol):
    """The positional-encoding symbol: a circle with a sine wave and a short name under it
    ("Positional enc."); the full name and the tensor's shape are in its tooltip, so nothing of it
    reaches down to the token line beside the embedding."""

    def __init__(self, key: str, title: str = "Positional\nEncoding", short: str = "Positional\nenc."):
        super().__init__(key, title, "positional", 2 * WAVE_R, 2 * WAVE_R, label=short,
                         label_font=diagram_font(SMALL_PT))

    def texts(self) -> list[QGraphicsSimpleTextItem]:
        return [self.title_item]

    def _place_texts(self) -> None:
        title = self.title_item.boundingRect()
        self.title_item.setPos(-title.width() / 2, WAVE_R + 4)
        self.shape_item.setVisible(False)  # the shape is in the tooltip

    def text_extent(self) -> float:
        """How far its texts reach to each side of the symbol's centre."""
        return max(self.title_item.boundingRect().width(), 1.0) / 2

    def sign(self) -> QPainterPath:
        wave = QPainterPath(QPointF(-14, 0))
        for i in range(1, 29):
            wave.lineTo(QPointF(-14 + i, -8 * math.sin(i / 28 * 2 * math.pi)))
        return wave


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


def text(scene: QGraphicsScene, value: str, pos: QPointF, point_size: float = SMALL_PT,
         bold: bool = False, mono: bool = False, colour: str = "text",
         align: Qt.AlignmentFlag = Qt.AlignHCenter) -> QGraphicsSimpleTextItem:
    """A text item anchored at `pos` (its centre, left or right edge by `align`), in the palette
    role `colour`."""
    item = QGraphicsSimpleTextItem(value)
    item.setFont(diagram_font(point_size, bold=bold, mono=mono))
    item.setData(THEME_ROLE, colour)
    item.setBrush(QBrush(style.colour(colour)))
    scene.addItem(item)
    br = item.boundingRect()
    x = pos.x() if align & Qt.AlignLeft else pos.x() - br.width() if align & Qt.AlignRight else pos.x() - br.width() / 2
    item.setPos(x, pos.y() - br.height() / 2)
    return item


__all__ = ["AdderItem", "BlockItem", "StackBox", "WaveItem", "arrow", "text"]
