"""`LabelAxis`: token labels at cell centres under the one label policy of every map: one readable
font (`label_font`); a column label wider than its column turned by 90°; then every k-th label,
counted (`drawn` of `in_view`: "k of n labels"), recomputed for the range in view."""
from __future__ import annotations

import html
import math

import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QFont, QFontMetricsF, QTextDocument, QTransform

from explorer import style
from explorer.drawing.plot_style import set_axis_pen
from model.inference.labels import LINE_SHARE, STACK_GAP_PX, nice_at_least, plan
from model.inference.labels import display_piece as display_piece  # (the maps' callers import it here)

TEXT_OFFSET_PX = 3  # between the axis and its labels


def label_font() -> QFont:
    """The one font of every token label: the "small" role's font at the current scale."""
    return style.role_font("small")


class LabelAxis(pg.AxisItem):
    """Token labels (or row names) for cells 0…n−1: label i at i + 0.5. After each paint, `drawn`
    and `in_view` say how many labels were drawn of the cells in view, and `counted` is emitted."""

    counted = Signal()

    def __init__(self, orientation: str):
        super().__init__(orientation)
        self.enableAutoSIPrefix(False)
        self.setStyle(tickLength=0, tickTextOffset=TEXT_OFFSET_PX, hideOverlappingLabels=10_000,
                      autoReduceTextSpace=False)
        self.tokens: list[str] = []
        self.measured: tuple[list[str] | None, str, list[float]] = (None, "", [])  # (tokens, font, widths)
        self.numeric = False  # position / dimension numbers: labelled every 1, 2, 5, 10, … cells
        self.origin = 0.0  # the view coordinate where cell 0 starts
        self.turned = False
        self.sizes_itself = True  # takes the height its turned labels need (a Heatmap sizes its axes)
        self.drawn = 0
        self.in_view = 0
        self.painted: list[tuple[str, QRectF]] = []  # each label drawn last, and its box in the axis' coordinates
        self.setTickFont(label_font())
        self.setTextPen(style.current().text)
        set_axis_pen(self, pg.mkPen(None))
        self.name = ""  # the axis title without its count (`name_with_count`)

    def name_with_count(self, name: str) -> None:
        """Title the axis `name` and "k of n labels" whenever the policy strides (outside a map,
        which says it in its header), after every paint."""
        self.name = name
        self.counted.connect(self._title_with_count, Qt.ConnectionType.QueuedConnection)
        self._title_with_count()

    def _title_with_count(self) -> None:
        """`name`, and "k of n labels" where not every label in view is drawn (n: the cells in view);
        "k/n" where the long form is longer than the axis."""
        strided = self.tokens and not self.numeric and 0 < self.drawn < self.in_view
        text = f"{self.name} · {self.drawn} of {self.in_view} labels" if strided else self.name
        if strided and not self._fits(text):
            text = f"{self.name} · {self.drawn}/{self.in_view}"
        if text != self.labelText:
            self.setLabel(text, **self.labelStyle)
            self.resizeEvent()  # (pyqtgraph centres its title on a resize only: a longer one grew to the right)

    def _fits(self, text: str) -> bool:
        """Whether `text` as the axis title (in its style) is no longer than the axis."""
        doc = QTextDocument()
        doc.setDefaultFont(self.label.font())
        css = "; ".join(f"{key}: {value}" for key, value in self.labelStyle.items())
        doc.setHtml(f"<span style='{css}'>{html.escape(text)}</span>")
        room = self.width() if self.horizontal else self.height()
        return room <= 0 or doc.idealWidth() <= room

    @property
    def horizontal(self) -> bool:
        return self.orientation in ("bottom", "top")

    def set_tokens(self, tokens: list[str], numeric: bool | None = None, origin: float = 0.0) -> None:
        """Label the cells with `tokens` (display text). `numeric` (default: whether they read 0, 1,
        2, …) strides at round numbers; `origin`: where cell 0 starts in view coordinates."""
        self.tokens = list(tokens)
        self.numeric = self.tokens == [str(i) for i in range(len(self.tokens))] if numeric is None else numeric
        self.origin = float(origin)
        self.picture = None  # (pyqtgraph's cached drawing of the labels)
        self.update()

    def metrics(self) -> QFontMetricsF:
        return QFontMetricsF(self.style["tickFont"] or label_font())

    def widths(self) -> list[float]:
        """Each label's width in the tick font, measured once per labels and font (every layout
        pass and paint asks, a map of a long text has hundreds)."""
        font_key = (self.style["tickFont"] or label_font()).key()
        if self.measured[0] is not self.tokens or self.measured[1] != font_key:
            m = self.metrics()
            self.measured = (self.tokens, font_key, [m.horizontalAdvance(t) for t in self.tokens])
        return self.measured[2]

    def extent(self, turned: bool) -> float:
        """Pixels the axis needs across the map: its widest label (turned, under the map), else a line."""
        m = self.metrics()
        widest = max(self.widths(), default=0.0)
        across = widest if not self.horizontal else max(widest, m.height()) if turned else m.height()
        title = m.height() + 4 if self.labelText and self.label.isVisible() else 0.0  # a name ("query")
        return math.ceil(across + 2 * TEXT_OFFSET_PX + 2 + title)  # air on both sides of the labels

    def min_cell_px(self) -> float:
        """Pixels per cell in which every label is drawn, stacked (a row axis, or turned)."""
        return LINE_SHARE * self.metrics().height() + STACK_GAP_PX

    def cells_in(self, lo: float, hi: float) -> range:
        """Indices of the cells whose centres lie in lo…hi (view coordinates)."""
        lo, hi = min(lo, hi) - self.origin, max(lo, hi) - self.origin
        return range(max(0, math.ceil(lo - 0.5)), min(len(self.tokens) - 1, math.floor(hi - 0.5)) + 1)

    def overhanging(self, lo: float, hi: float) -> set[int]:
        """The first and the last cell in view lo…hi whose label, upright, would end outside the canvas'
        layout (the room a map leaves beside its axis included)."""
        top, cells = self.topLevelWidget(), self.cells_in(lo, hi)  # (top: laid out in the axis' own pass)
        if top is None or not cells:
            return set()
        box, room = self.mapRectToScene(QRectF(0, 0, self.width(), self.height())), top.mapRectToScene(top.rect())
        x = {i: box.left() + (self.origin + i + 0.5 - lo) * box.width() / (hi - lo) for i in (cells[0], cells[-1])}
        return {i for i, centre in x.items()
                if not room.left() <= centre - self.widths()[i] / 2 <= centre + self.widths()[i] / 2 <= room.right()}

    def tickValues(self, minVal, maxVal, size):
        cells = self.cells_in(minVal, maxVal)
        if not self.tokens or size <= 0 or maxVal == minVal:
            return []
        cell_px = size / abs(maxVal - minVal)
        line = self.metrics().height()
        turned, stride = plan(self.widths(), line, cell_px, self.horizontal)
        upright_each = self.horizontal and not turned and stride == 1
        out = self.overhanging(min(minVal, maxVal), max(minVal, maxVal)) if upright_each else set()
        if out and (self.sizes_itself or self.height() >= self.extent(True)):  # turned where the axis has room
            turned, stride, out = True, plan(self.widths(), line, cell_px, False)[1], set()
        if turned != self.turned and self.sizes_itself and self.horizontal:
            self.setHeight(int(self.extent(True)) if turned else None)  # (pyqtgraph sizes for upright text)
        self.turned = turned
        if self.numeric and stride > 1:  # numbers at round steps: 0, 5, 10, … not 0, 3, 6, …
            stride = int(nice_at_least(stride))
        first = cells.start + (-cells.start) % stride  # every stride-th cell, counted from cell 0
        return [(1.0, [self.origin + i + 0.5 for i in range(first, cells.stop, stride) if i not in out])]

    def tickStrings(self, values, scale, spacing):
        n = len(self.tokens)
        cells = [math.floor(v - self.origin) for v in values]
        return [self.tokens[i] if 0 <= i < n else "" for i in cells]

    def drawPicture(self, p, axisSpec, tickSpecs, textSpecs):
        """pyqtgraph's drawing, column labels turned (ending at the axis) by the policy; counts them."""
        lo, hi = self.range
        self.in_view = len(self.cells_in(lo, hi)) if self.tokens else 0
        self.drawn = len(textSpecs) if self.tokens else 0
        super().drawPicture(p, axisSpec, tickSpecs, [])
        p.setFont(self.style["tickFont"])
        p.setPen(self.textPen())
        line = self.metrics().height()
        bottom = self.orientation == "bottom"
        self.painted = []
        for rect, flags, text in textSpecs:
            if not (self.turned and self.horizontal):
                p.drawText(rect, int(flags), text)
                self.painted.append((text, QRectF(rect)))
                continue
            width = self.metrics().horizontalAdvance(text) + 2
            turn = QTransform().translate(rect.center().x(), rect.top() if bottom else rect.bottom()).rotate(-90)
            box = QRectF(-width, -line / 2, width, line) if bottom else QRectF(0, -line / 2, width, line)
            align = Qt.AlignmentFlag.AlignRight if bottom else Qt.AlignmentFlag.AlignLeft
            p.save()
            p.setTransform(turn, True)
            p.drawText(box, int(align | Qt.AlignmentFlag.AlignVCenter), text)
            p.restore()
            self.painted.append((text, turn.mapRect(box)))
        self.counted.emit()
