"""`CellGrid`: a matrix of labelled cells, each with a colour and a line or two of text.

Used where every cell carries words, not only a colour (the logit lens's top token and its
probability per layer × position; a similarity matrix between sentences), so it is painted
with QPainter: the text is sized to the cell (never below a legible floor, elided with …
rather than overflowing), and a cell's text is dark on a bright colour and light on a dark one.
Colours: the theme's sequential map for values in [0, 1] and the palette's roles. It reads
`style.font` and `theme.current()` when it paints, so presentation scale and theme follow.
"""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRectF, QSize, Qt, Signal
from PySide6.QtGui import QFont, QColor, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from explorer import style
from explorer.theme import SEQUENTIAL, current, notifier

MIN_TEXT_PT = 7  # smallest cell and column text (before the presentation scale: 10.5 pt when presenting)


PUNCTUATION_SCALE = 2.0  # "," and "." at the words' size were specks in their cells on a projector
SMALL_MARKS = set(",.;:'\"`!?")  # the marks that are specks (not "—", "%", "€": already word-sized)


def _punctuation_font(font: QFont, text: str, box: QRectF) -> QFont:
    """A lone punctuation mark's font: up to PUNCTUATION_SCALE times larger, as far as its line fits."""
    if len(text) != 1 or text not in SMALL_MARKS:
        return font
    big = QFont(font)
    pt = font.pointSizeF() * PUNCTUATION_SCALE
    while pt > font.pointSizeF():
        big.setPointSizeF(pt)
        metrics = QFontMetricsF(big)
        if metrics.height() <= box.height() and metrics.horizontalAdvance(text) <= box.width():
            return big
        pt -= 1
    return font


def _readable_on(colour: QColor) -> QColor:
    """The palette's text colour for a cell of this colour (relative luminance, WCAG)."""
    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    lum = 0.2126 * channel(colour.redF()) + 0.7152 * channel(colour.greenF()) + 0.0722 * channel(colour.blueF())
    return current().q("on_bright_cell" if lum > 0.22 else "on_dark_cell")


class CellGrid(QWidget):
    """Rows × columns of cells: `set_cells(values, texts, row_labels, col_labels)`; a click
    emits `cellClicked(row, col)`. `values` in [0, 1] pick the colour; `texts[r][c]` is a
    list of lines (the first is drawn bold)."""

    cellClicked = Signal(int, int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.values = np.zeros((0, 0))
        self.texts: list[list[list[str]]] = []
        self.row_labels: list[str] = []
        self.col_labels: list[str] = []
        self.marked_cols: set[int] = set()
        self.selected: tuple[int, int] | None = None
        self.corner = ""  # the axes' names, drawn in the top-left corner
        self._cmap = style.colormap(SEQUENTIAL)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)
        self.setMouseTracking(False)
        notifier().changed.connect(self.update)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(640, 320)

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        return QSize(200, 120)

    # -- data ---------------------------------------------------------------------------------
    def set_cells(self, values: np.ndarray, texts: list[list[list[str]]], row_labels: list[str],
                  col_labels: list[str], marked_cols=(), selected: tuple[int, int] | None = None,
                  corner: str = "") -> None:
        self.values = np.asarray(values, dtype=float)
        self.texts, self.row_labels, self.col_labels = texts, list(row_labels), list(col_labels)
        self.marked_cols, self.selected, self.corner = set(marked_cols), selected, corner
        self.update()

    def clear_data(self) -> None:
        self.set_cells(np.zeros((0, 0)), [], [], [])

    def select(self, cell: tuple[int, int] | None) -> None:
        self.selected = cell
        self.update()

    # -- geometry -------------------------------------------------------------------------------
    def _label_font(self):
        return style.font(style.BASE_POINT_SIZE, bold=True)

    def _margins(self) -> tuple[float, float]:
        """(left, top): room for the row labels and the column labels."""
        fm = QFontMetricsF(self._label_font())
        left = max([fm.horizontalAdvance(t) for t in self.row_labels + [self.corner]] + [0]) + 12
        return min(left, self.width() * 0.3), fm.height() * 1.6

    def _cell_rect(self, r: int, c: int) -> QRectF:
        left, top = self._margins()
        rows, cols = self.values.shape
        w, h = (self.width() - left - 2) / max(cols, 1), (self.height() - top - 2) / max(rows, 1)
        return QRectF(left + c * w, top + r * h, w, h)

    def cell_at(self, x: float, y: float) -> tuple[int, int] | None:
        rows, cols = self.values.shape
        for r in range(rows):
            for c in range(cols):
                if self._cell_rect(r, c).contains(x, y):
                    return r, c
        return None

    def mousePressEvent(self, event) -> None:  # noqa: N802
        cell = self.cell_at(event.position().x(), event.position().y())
        if cell is not None:
            self.cellClicked.emit(*cell)
        super().mousePressEvent(event)

    # -- painting ---------------------------------------------------------------------------------
    def paintEvent(self, _event) -> None:  # noqa: N802
        rows, cols = self.values.shape
        if not rows or not cols:
            return
        p = QPainter(self)
        p.setRenderHint(QPainter.Antialiasing)
        pal = current()
        left, top = self._margins()
        label_font = self._label_font()
        p.setFont(label_font)
        fm = QFontMetricsF(label_font)
        p.setPen(pal.q("muted"))
        p.drawText(QRectF(0, 0, left - 6, top), Qt.AlignLeft | Qt.AlignVCenter, fm.elidedText(self.corner, Qt.ElideRight, left - 6))
        col_font = self._column_font(self._cell_rect(0, 0).width() - 2)
        p.setFont(col_font)
        fm = QFontMetricsF(col_font)
        for c, label in enumerate(self.col_labels):
            rect = self._cell_rect(0, c)
            head = QRectF(rect.left(), 0, rect.width(), top)
            p.setPen(pal.q("accent_text" if c in self.marked_cols else "text"))
            shown = _punctuation_font(col_font, label, head)
            p.setFont(shown)
            p.drawText(head, Qt.AlignCenter, QFontMetricsF(shown).elidedText(label, Qt.ElideRight, rect.width() - 2))
        p.setFont(label_font)
        fm = QFontMetricsF(label_font)
        p.setPen(pal.q("text"))
        for r, label in enumerate(self.row_labels):
            rect = self._cell_rect(r, 0)
            p.drawText(QRectF(0, rect.top(), left - 6, rect.height()), Qt.AlignRight | Qt.AlignVCenter,
                       fm.elidedText(label, Qt.ElideRight, left - 6))
        cell_font = self._grid_font(self._cell_rect(0, 0))
        for r in range(rows):
            for c in range(cols):
                self._paint_cell(p, r, c, cell_font)
        for c in sorted(self.marked_cols):  # a marked column ([MASK]) framed top to bottom
            if 0 <= c < cols:
                rect = self._cell_rect(0, c).united(self._cell_rect(rows - 1, c))
                p.setPen(QPen(pal.q("mask_blank"), max(2.0, 2 * style.scale()), Qt.DashLine))
                p.setBrush(Qt.NoBrush)
                p.drawRect(rect.adjusted(1, 1, -1, -1))
        if self.selected is not None and self.selected[0] < rows and self.selected[1] < cols:
            p.setPen(QPen(pal.q("selected"), max(3.0, 3 * style.scale())))
            p.setBrush(Qt.NoBrush)
            p.drawRect(self._cell_rect(*self.selected).adjusted(1.5, 1.5, -1.5, -1.5))
        p.end()

    def _paint_cell(self, p: QPainter, r: int, c: int, font=None) -> None:
        rect = self._cell_rect(r, c)
        value = float(np.clip(self.values[r, c], 0.0, 1.0))
        colour = self._cmap.map(value, mode="qcolor")
        p.fillRect(rect.adjusted(0.5, 0.5, -0.5, -0.5), colour)
        lines = self.texts[r][c] if r < len(self.texts) and c < len(self.texts[r]) else []
        if not lines:
            return
        font = QFont(font) if font is not None and len(lines) <= self._most_lines() else self._fitting_font(rect, len(lines))
        if font is None:
            return  # not even the smallest legible text fits: colour only (the click shows it)
        p.setPen(_readable_on(colour))
        line_h = rect.height() / len(lines)
        for i, line in enumerate(lines):
            font.setBold(i == 0)
            box = QRectF(rect.left() + 2, rect.top() + i * line_h, rect.width() - 4, line_h)
            shown = _punctuation_font(font, line, box) if i == 0 else font
            p.setFont(shown)
            fm = QFontMetricsF(shown)
            p.drawText(box, Qt.AlignCenter, fm.elidedText(line, Qt.ElideRight, box.width()))

    def _column_font(self, width: float):
        """The largest bold font (base size down to MIN_TEXT_PT) in which every column label fits `width`."""
        for pt in range(style.BASE_POINT_SIZE, MIN_TEXT_PT, -1):
            font = style.font(pt, bold=True)
            fm = QFontMetricsF(font)
            if all(fm.horizontalAdvance(label) <= width for label in self.col_labels):
                return font
        return style.font(MIN_TEXT_PT, bold=True)

    def _most_lines(self) -> int:
        return max((len(lines) for row in self.texts for lines in row), default=0)

    def _grid_font(self, rect: QRectF):
        """One font for every cell: the largest whose lines fit a cell's height and in which every
        cell's first line (its token, bold) fits whole — the lens cut "quack" to "qu…" at 1024 px
        while a smaller size held it — else the largest that fits the height (then elided)."""
        n = self._most_lines()
        if not n:
            return None
        firsts = {lines[0] for row in self.texts for lines in row if lines}
        fallback = None
        for pt in range(style.BASE_POINT_SIZE, MIN_TEXT_PT - 1, -1):
            font = style.font(pt)
            fm = QFontMetricsF(font)
            if fm.height() * n > rect.height() - 2 or fm.horizontalAdvance("ab…") > rect.width() - 4:
                continue
            fallback = fallback or font
            bold = QFont(font)
            bold.setBold(True)
            wide = QFontMetricsF(bold)
            if all(wide.horizontalAdvance(text) <= rect.width() - 4 for text in firsts):
                return font
        return fallback

    def _fitting_font(self, rect: QRectF, n_lines: int):
        """The largest font from the base size down to MIN_TEXT_PT whose lines fit the cell's height
        (widths are elided), or None."""
        for pt in range(style.BASE_POINT_SIZE, MIN_TEXT_PT - 1, -1):
            font = style.font(pt)
            fm = QFontMetricsF(font)
            if fm.height() * n_lines <= rect.height() - 2 and fm.horizontalAdvance("ab…") <= rect.width() - 4:
                return font
        return None
