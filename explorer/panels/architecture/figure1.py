"""Figure 1 drawn into a `QGraphicsScene`: the Qt-free layout (`model.inference.figure1_layout`) turned
into vector items (crisp at any zoom) — blocks, the ⊕ and ∿ symbols, layer boxes, arrows and texts —
and the bookkeeping the panel refreshes per input. Items know nothing of the session: a click calls
`on_click(key)`."""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPainterPath, QPen, QPolygonF
from PySide6.QtWidgets import QGraphicsItem, QGraphicsObject, QGraphicsPathItem, QGraphicsScene, QGraphicsSimpleTextItem

from explorer import style
from model.inference.figure1 import joined_characters
from model.inference.figure1_layout import PAD_X, Arrow, Element, Text, figure1_layout

# The figure is one drawing: its fonts are not multiplied by the presentation scale; the view
# scales text, boxes and arrows together. (point size, bold, mono) by the layout's font names.
FONTS = {"title": (18, True, False), "shape": (16, False, True), "label": (18, True, False),
         "small": (16, False, False), "small_bold": (16, True, False), "stack": (28, True, False),
         "tokens": (16, False, True)}
TOKENS_GAP = 14.0  # between "Inputs" and its tokens on one line
TokenLines = dict[str, tuple[list[str] | None, bool]]  # axis ("src", "tgt", "out"): pieces, character tokens?


def diagram_font(name: str) -> QFont:
    """A font of the drawing by its name in `FONTS`, at the drawing's own size (the view zooms it)."""
    point_size, bold, mono = FONTS[name]
    return QFont(style.MONO_FAMILY if mono else style.SANS_FAMILY, point_size, QFont.Bold if bold else QFont.Normal)


class FontMeasure:
    """Text sizes in the drawing's fonts, for the Qt-free layout (`figure1_layout.Measure`)."""

    def width(self, text: str, font: str) -> float:
        fm = QFontMetricsF(diagram_font(font))
        return max((fm.horizontalAdvance(line) for line in text.split("\n")), default=0.0)

    def height(self, font: str) -> float:
        return QFontMetricsF(diagram_font(font)).height()


def _styled_text(font: str, role: str, parent: QGraphicsItem | None = None) -> QGraphicsSimpleTextItem:
    """A text item in a font of the drawing, coloured by a palette role (the panel redraws the
    figure on a theme change)."""
    item = QGraphicsSimpleTextItem(parent)
    item.setFont(diagram_font(font))
    item.setBrush(QBrush(style.colour(role)))
    item.setAcceptedMouseButtons(Qt.NoButton)  # a click on a block's name is a click on the block
    return item


class Clickable:
    """Mixin: a diagram element that stands for a step prefix (`key`); a click calls `on_click(key)`."""

    key: str = ""
    on_click: Callable[[str], None] | None = None

    def mousePressEvent(self, event) -> None:  # noqa: N802 - Qt name
        if event.button() == Qt.LeftButton and self.on_click is not None and self.key:
            self.on_click(self.key)
            event.accept()
        else:
            event.ignore()


class BlockItem(Clickable, QGraphicsObject):
    """A rounded box with its name and the tensor shape flowing out of it, under each other or
    side by side (`inline`); framed for the current step, ringed where head surgery edited it.
    `template`, `shape_template`: the step it stands for, `{layer}` open in a collapsed figure."""

    def __init__(self, spec: Element):
        super().__init__()
        self.title, self.role, self.w, self.h, self.inline = spec.title, spec.role, spec.w, spec.h, spec.beside
        self.stack, self.template, self.shape_template = spec.stack, spec.template, spec.shape_template
        self.shape_text = ""
        self.highlighted = self.edited = False
        self.setCursor(Qt.PointingHandCursor)
        self.setAcceptHoverEvents(True)  # (Qt repaints on hover: `isUnderMouse` lightens the fill)
        self.setPos(spec.x, spec.y)
        self.title_item = _styled_text("small" if spec.kind == "wave" else "title", "block_text", self)
        self.title_item.setText(spec.title if spec.label is None else spec.label)
        self.shape_item = _styled_text("shape", "block_shape_text", self)
        self._place_texts()

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
        return self.rect().adjusted(-4, -4, 4, 4)

    def rect(self) -> QRectF:
        return QRectF(-self.w / 2, -self.h / 2, self.w, self.h)

    def set_shape_text(self, text: str) -> None:
        if text != self.shape_text:
            self.shape_text = text
            self.shape_item.setText(text)
            self._place_texts()

    def set_highlighted(self, on: bool) -> None:
        self.highlighted = on
        self.update()

    def set_edited(self, on: bool) -> None:
        self.edited = on
        self.update()

    def paint(self, painter: QPainter, option, widget=None) -> None:
        fill = QColor(style.current().blocks.get(self.role, style.current().canvas))
        painter.setPen(QPen(style.ACCENT, 4.0) if self.highlighted else QPen(style.colour("line"), 1.6))
        painter.setBrush(QBrush(fill.lighter(108) if self.isUnderMouse() else fill))
        painter.drawRoundedRect(self.rect(), 9, 9)
        if self.edited:  # heads changed by head surgery: a dashed ring just outside the box
            painter.setPen(QPen(style.colour("accent_text"), 2.5, Qt.PenStyle.DashLine))
            painter.setBrush(Qt.NoBrush)
            painter.drawRoundedRect(self.rect().adjusted(-3, -3, 3, 3), 11, 11)


class SymbolItem(BlockItem):
    """A round symbol of Figure 1, clicked on its circle only: the ⊕ with its shape beside it, or
    the positional ∿ with its short name under it (full name and shape in its tooltip)."""

    def __init__(self, spec: Element):
        self.kind, self.label_right = spec.kind, spec.label_right
        super().__init__(spec)

    def _place_texts(self) -> None:
        if self.kind == "wave":
            self.title_item.setPos(-self.title_item.boundingRect().width() / 2, self.h / 2 + 4)
            self.shape_item.setVisible(False)
            return
        width = self.shape_item.boundingRect().width()
        x = self.w / 2 + 8 if self.label_right else -self.w / 2 - 8 - width
        self.shape_item.setPos(x, -self.shape_item.boundingRect().height() / 2)
        self.shape_item.setVisible(bool(self.shape_text))

    def shape(self) -> QPainterPath:
        path = QPainterPath()
        path.addEllipse(self.rect().adjusted(-3, -3, 3, 3))
        return path

    def paint(self, painter: QPainter, option, widget=None) -> None:
        painter.setPen(QPen(style.ACCENT, 4.0) if self.highlighted else QPen(style.colour("line"), 1.8))
        painter.setBrush(QBrush(style.colour("hover_fill" if self.isUnderMouse() else "canvas")))
        painter.drawEllipse(self.rect())
        painter.setPen(QPen(style.colour("line"), 2.0))
        painter.setBrush(Qt.NoBrush)
        arm = self.w / 2 * 0.6
        if self.kind == "wave":
            sign = QPainterPath(QPointF(-14, 0))
            for i in range(1, 29):
                sign.lineTo(QPointF(-14 + i, -8 * math.sin(i / 28 * 2 * math.pi)))
        else:
            sign = QPainterPath(QPointF(-arm, 0))
            sign.lineTo(arm, 0)
            sign.moveTo(0, -arm)
            sign.lineTo(0, arm)
        painter.drawPath(sign)


class StackBox(Clickable, QGraphicsPathItem):
    """The grey rounded box around a layer; clicking it selects the layer (`template`, as a block's)."""

    def __init__(self, rect: QRectF, stack: str, template: str):
        super().__init__()
        self.stack, self.template = stack, template
        path = QPainterPath()
        path.addRoundedRect(rect, 16, 16)
        self.setPath(path)
        self.setBrush(QBrush(QColor(style.current().blocks["stack"])))
        self.setPen(QPen(style.colour("stack_edge"), 1.6))
        self.setZValue(-10)


@dataclass
class Figure:
    """What was drawn: elements and layer boxes to update, texts to refresh per input."""

    elements: list[BlockItem] = field(default_factory=list)
    boxes: list[StackBox] = field(default_factory=list)
    token_texts: dict[str, QGraphicsSimpleTextItem] = field(default_factory=dict)  # "src" | "tgt" | "out"
    token_labels: dict[str, QGraphicsSimpleTextItem] = field(default_factory=dict)  # "Inputs" … of each line
    layer_labels: dict[str, QGraphicsSimpleTextItem] = field(default_factory=dict)  # collapsed: "layer i/N"
    column_width: dict[str, float] = field(default_factory=dict)  # the blocks' width under each token line
    anchors: dict[str, tuple[float, float, float]] = field(default_factory=dict)  # name: x, y, stacked y
    inline: bool = False  # shapes beside names; token lines beside their labels


def draw_figure1(scene: QGraphicsScene, config, expanded: bool, inline: bool = False,
                 on_click: Callable[[str], None] | None = None) -> Figure:
    """Draw Figure 1 of `config` into `scene`; a click on a block or a layer's box calls `on_click(key)`."""
    plan = figure1_layout(config, expanded, inline, FontMeasure())
    fig = Figure(column_width=plan.column_width, inline=plan.inline)
    fig.elements = [(BlockItem if e.kind == "block" else SymbolItem)(e) for e in plan.elements]
    fig.boxes = [StackBox(QRectF(b.x, b.y, b.w, b.h), b.stack, b.template) for b in plan.boxes]
    for item in fig.elements + fig.boxes:
        item.on_click = on_click
        scene.addItem(item)
    for a in plan.arrows:
        scene.addItem(_arrow(a))
    named = {"tokens": fig.token_texts, "label": fig.token_labels, "layer": fig.layer_labels}
    for t in plan.texts:
        item = _text(t)
        scene.addItem(item)
        if t.name:
            kind, key = t.name.split(".")
            named[kind][key] = item
            fig.anchors[t.name] = (t.x, t.y, t.y if t.stacked_y is None else t.stacked_y)
    return fig


def _arrow(a: Arrow) -> QGraphicsPathItem:
    """A polyline in the palette role `a.colour`, with a filled head at its last point."""
    points = [QPointF(*p) for p in a.points]
    path = QPainterPath(points[0])
    for p in points[1:]:
        path.lineTo(p)
    colour = style.colour(a.colour)
    item = QGraphicsPathItem(path)
    item.setPen(QPen(colour, 1.8, Qt.SolidLine, Qt.RoundCap, Qt.RoundJoin))
    item.setZValue(-5)
    if a.head:
        b, angle = points[-1], math.atan2(points[-1].y() - points[-2].y(), points[-1].x() - points[-2].x())
        corners = [QPointF(b.x() - 10 * math.cos(angle + d), b.y() - 10 * math.sin(angle + d)) for d in (-0.45, 0.45)]
        tip = QPainterPath()
        tip.addPolygon(QPolygonF([b, *corners, b]))
        head = QGraphicsPathItem(tip, item)
        head.setBrush(QBrush(colour))
        head.setPen(QPen(colour, 1))
    return item


def _text(t: Text) -> QGraphicsSimpleTextItem:
    """A text item anchored at its centre, or its left or right edge, in its palette role."""
    item = _styled_text(t.font, t.colour)
    item.setText(t.value)
    br = item.boundingRect()
    x = {"left": t.x, "right": t.x - br.width()}.get(t.align, t.x - br.width() / 2)
    item.setPos(x, t.y - br.height() / 2)
    return item


def tokens_line(pieces: list[str] | None, font, width: float, characters: bool = False) -> str:
    """The tokens separated by spaces, in `width`; too wide for a character tokenizer, its letters
    stand together ("<bos> 2026-11-22"); only then is the line elided."""
    if not pieces:
        return ""
    metrics = QFontMetricsF(font)
    line = " ".join(pieces)
    if characters and metrics.horizontalAdvance(line) > width:
        line = joined_characters(pieces)
    return metrics.elidedText(line, Qt.ElideRight, width)


def place_token_lines(fig: Figure, lines: TokenLines, beside: bool) -> None:
    """Each token line of the figure beside its label where `beside` and it fits whole, else under
    (inputs) or over (outputs) it; a line with nothing beside it gets twice the room."""
    for axis, item in fig.token_texts.items():
        pieces, characters = lines.get(axis, (None, False))
        label = fig.token_labels[axis]
        item.setToolTip(" ".join(pieces or []))
        x, _, stacked_y = fig.anchors[f"tokens.{axis}"]
        label_x, label_y, label_stacked_y = fig.anchors[f"label.{axis}"]
        column = fig.column_width.get(axis) or max(fig.column_width.values())
        room = (2 if axis == "out" or len(fig.column_width) == 2 else 1) * column
        if beside:
            item.setText(tokens_line(pieces, item.font(), room - label.boundingRect().width() - TOKENS_GAP, characters))
            if not item.text().endswith("…"):  # "Inputs  a t t e n t i o n" on one line
                both = label.boundingRect().width() + (TOKENS_GAP + item.boundingRect().width() if item.text() else 0)
                _centre_at(label, label_x - both / 2 + label.boundingRect().width() / 2, label_y)
                _centre_at(item, label_x + both / 2 - item.boundingRect().width() / 2, label_y)
                continue
        item.setText(tokens_line(pieces, item.font(), room, characters))
        _centre_at(item, x, stacked_y)
        _centre_at(label, label_x, label_stacked_y)


def _centre_at(item: QGraphicsSimpleTextItem, x: float, y: float) -> None:
    rect = item.boundingRect()
    item.setPos(x - rect.width() / 2, y - rect.height() / 2)
