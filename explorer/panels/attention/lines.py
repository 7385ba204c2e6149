"""The line view (as BertViz's head view): query tokens in one column, key tokens in another, a
line from each query to each key whose opacity is the weight. Hovering a token keeps only its
lines and writes their weights beside them: "what does this word look at?"."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QPainter, QPen
from PySide6.QtWidgets import QWidget

from explorer.drawing import plot_style as st
from model.interpret.attention_lines import drawn_lines, hover_marks, line_hover_text

LINE_ROLE, FOCUS_ROLE = "accent", "chosen"  # theme roles: every line, the hovered token's lines
RIGHT, LEFT = (Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
               Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)


class LineView(QWidget):
    """Signals: hovered(text). `drawn_lines()` is exactly what `paintEvent` draws."""

    hovered = Signal(str)
    ROW_MIN, ROW_MAX, HEADER = 26, 90, 64

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setMouseTracking(True)
        self.setMinimumSize(420, 200)
        self.weights: np.ndarray | None = None
        self.allowed: np.ndarray | None = None  # (set_map: a map's weights and its mask)
        self.q_labels, self.k_labels, self.title = [], [], ""
        self.q_name, self.k_name = "query", "key"
        self.hover: tuple[str, int] | None = None  # ("q" | "k", index)

    def set_map(self, weights: np.ndarray, allowed: np.ndarray, q_labels, k_labels, title: str = "",
                names: tuple[str, str] = ("query", "key")) -> None:
        self.weights, self.allowed = np.asarray(weights, dtype=np.float32), np.asarray(allowed, dtype=bool)
        self.q_labels, self.k_labels, self.title = list(q_labels), list(k_labels), title
        self.q_name, self.k_name = names
        if self.hover is not None:
            side, i = self.hover
            if i >= (len(self.q_labels) if side == "q" else len(self.k_labels)):
                self.hover = None
        self.setMinimumHeight(self.HEADER + self.ROW_MIN * max(len(self.q_labels), len(self.k_labels)) + 10)
        self.update()

    def _row_height(self) -> float:
        n = max(len(self.q_labels), len(self.k_labels), 1)
        return max(self.ROW_MIN, min(self.ROW_MAX, (self.height() - self.HEADER - 10) / n))  # fill the panel

    def _columns(self) -> tuple[float, float]:
        w = self.width()
        return w * 0.3, w * 0.7  # x where lines start (query side) and end (key side)

    def token_rect(self, side: str, index: int) -> QRectF:
        """Where a token's label is drawn (and where hovering picks it)."""
        row = self._row_height()
        xq, xk = self._columns()
        return QRectF(xq - 190 if side == "q" else xk + 8, self.HEADER + index * row, 182, row)

    def _anchor(self, side: str, index: int) -> QPointF:
        xq, xk = self._columns()
        return QPointF(xq if side == "q" else xk, self.HEADER + (index + 0.5) * self._row_height())

    def drawn_lines(self) -> list[tuple[int, int, float]]:
        """(query, key, weight) of every line on screen: all of them, or only the hovered token's."""
        return drawn_lines(self.weights, self.allowed, self.hover) if self.weights is not None else []

    def set_hover(self, hover: tuple[str, int] | None) -> None:
        if hover == self.hover:
            return
        self.hover = hover
        self.update()
        self.hovered.emit("" if hover is None or self.weights is None else
                          line_hover_text(self.weights, self.allowed, self.q_labels, self.k_labels, hover))

    def mouseMoveEvent(self, event):  # noqa: N802
        pos = event.position()
        self.set_hover(next(((side, i) for side, labels in (("q", self.q_labels), ("k", self.k_labels))
                             for i in range(len(labels)) if self.token_rect(side, i).contains(pos)), None))

    def leaveEvent(self, event):  # noqa: N802
        self.set_hover(None)

    def paintEvent(self, event):  # noqa: N802
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.fillRect(self.rect(), st.colour("canvas"))
        xq, xk = self._columns()
        p.setPen(st.colour("text"))
        p.setFont(st.font(st.TITLE_PT, bold=True))
        p.drawText(QRectF(0, 4, self.width(), 28), Qt.AlignmentFlag.AlignCenter, self.title)
        p.setFont(st.font(st.LABEL_PT))
        p.setPen(st.colour("muted"))
        p.drawText(QRectF(xq - 260, 32, 252, 26), RIGHT, self.q_name)
        p.drawText(QRectF(xk + 8, 32, 260, 26), LEFT, self.k_name)
        if self.weights is None:
            return
        focus = self.hover is not None
        for q, k, w in self.drawn_lines():
            color = st.colour(FOCUS_ROLE if focus else LINE_ROLE)
            color.setAlphaF(min(1.0, max(0.15, w)))  # opacity = weight on 0–1; faint lines stay visible
            pen = QPen(color)
            pen.setWidthF(2.0 + 4.0 * w)
            p.setPen(pen)
            p.drawLine(self._anchor("q", q), self._anchor("k", k))
        self._paint_tokens(p)

    def _paint_tokens(self, p: QPainter) -> None:
        p.setFont(st.font(st.LABEL_PT))
        weights_shown, hidden = hover_marks(self.weights, self.allowed, self.hover)
        for side, labels in (("q", self.q_labels), ("k", self.k_labels)):
            align = RIGHT if side == "q" else LEFT
            for i, text in enumerate(labels):
                rect = self.token_rect(side, i)
                blocked = (side, i) in hidden
                if self.hover == (side, i):
                    p.fillRect(rect, st.colour("hover_fill"))
                p.setPen(st.colour("masked") if blocked else st.colour("text"))
                p.drawText(rect.adjusted(4, 0, -4, 0), align, text + ("  (masked)" if blocked and side == "k" else ""))
                if (side, i) in weights_shown:  # the weight beside the token, away from the lines
                    p.setPen(st.colour("chosen_text"))
                    advance = p.fontMetrics().horizontalAdvance(text)
                    left = rect.left() + advance + 16 if side == "k" else rect.right() - advance - 96
                    p.drawText(QRectF(left, rect.top(), 80, rect.height()), align, f"{weights_shown[(side, i)]:.2f}")
