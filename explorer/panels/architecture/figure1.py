"""Draws Figure 1 into a `QGraphicsScene`: the Qt-free layout (`model.inference.figure1_layout`)
turned into graphics items, and the bookkeeping the panel needs to refresh them per input."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QPainterPath, QPen, QPolygonF
from PySide6.QtWidgets import QGraphicsPathItem, QGraphicsScene, QGraphicsSimpleTextItem

from explorer import style
from explorer.panels.architecture.diagram_items import (
    THEME_ROLE,
    BlockItem,
    FontMeasure,
    StackBox,
    SymbolItem,
    diagram_font,
)
from model.inference.figure1_layout import Arrow, Text, figure1_layout


@dataclass
class Placed:
    """A drawn clickable item and what it stands for (`{layer}` open in a collapsed figure)."""

    item: BlockItem
    stack: str
    template: str
    shape_template: str


@dataclass
class Figure:
    """What was drawn: elements and layer boxes to update, texts to refresh per input."""

    elements: list[Placed] = field(default_factory=list)
    boxes: list[tuple[StackBox, str, str]] = field(default_factory=list)  # (box, stack, template)
    token_texts: dict[str, QGraphicsSimpleTextItem] = field(default_factory=dict)  # "src" | "tgt" | "out"
    token_labels: dict[str, QGraphicsSimpleTextItem] = field(default_factory=dict)  # "Inputs" … of each line
    layer_labels: dict[str, QGraphicsSimpleTextItem] = field(default_factory=dict)  # collapsed: "layer i/N"
    column_width: dict[str, float] = field(default_factory=dict)  # the blocks' width under each token line
    inline: bool = False  # shapes beside names; token lines beside their labels


class Figure1Builder:
    """Draws Figure 1 of `config` into `scene`; `build()` returns the `Figure` bookkeeping."""

    def __init__(self, scene: QGraphicsScene, config, expanded: bool, inline: bool = False):
        self.scene, self.config, self.expanded, self.inline = scene, config, expanded, inline

    def build(self) -> Figure:
        plan = figure1_layout(self.config, self.expanded, self.inline, FontMeasure())
        fig = Figure(column_width=plan.column_width, inline=plan.inline)
        for e in plan.elements:
            item = (BlockItem if e.kind == "block" else SymbolItem)(e, self.inline)
            self.scene.addItem(item)
            fig.elements.append(Placed(item, e.stack, e.template, e.shape_template))
        for b in plan.boxes:
            box = StackBox(QRectF(b.x, b.y, b.w, b.h))
            self.scene.addItem(box)
            fig.boxes.append((box, b.stack, b.template))
        for a in plan.arrows:
            self._arrow(a)
        named = {"tokens": fig.token_texts, "label": fig.token_labels, "layer": fig.layer_labels}
        for t in plan.texts:
            item = self._text(t)
            if t.name:
                kind, key = t.name.split(".")
                named[kind][key] = item
        return fig

    def _arrow(self, a: Arrow) -> None:
        """A polyline in the palette role `a.colour`, with a filled head at its last point."""
        points = [QPointF(*p) for p in a.points]
        path = QPainterPath(points[0])
        for p in points[1:]:
            path.lineTo(p)
        colour = style.colour(a.colour)
        item = QGraphicsPathItem(path)
        item.setData(THEME_ROLE, a.colour)
        item.setPen(QPen(colour, 1.8, Qt.SolidLine, Qt.RoundCap, Qt.RoundJoin))
        item.setZValue(-5)
        self.scene.addItem(item)
        if a.head:
            b, angle = points[-1], math.atan2(points[-1].y() - points[-2].y(), points[-1].x() - points[-2].x())
            corners = [QPointF(b.x() - 10 * math.cos(angle + d), b.y() - 10 * math.sin(angle + d)) for d in (-0.45, 0.45)]
            tip = QPainterPath()
            tip.addPolygon(QPolygonF([b, *corners, b]))
            head = QGraphicsPathItem(tip, item)
            head.setData(THEME_ROLE, a.colour)
            head.setBrush(QBrush(colour))
            head.setPen(QPen(colour, 1))

    def _text(self, t: Text) -> QGraphicsSimpleTextItem:
        """A text item anchored at its centre, or its left or right edge, in its palette role."""
        item = QGraphicsSimpleTextItem(t.value)
        item.setFont(diagram_font(t.font))
        item.setData(THEME_ROLE, t.colour)
        item.setBrush(QBrush(style.colour(t.colour)))
        self.scene.addItem(item)
        br = item.boundingRect()
        x = {"left": t.x, "right": t.x - br.width()}.get(t.align, t.x - br.width() / 2)
        item.setPos(x, t.y - br.height() / 2)
        return item
