"""`SpearmanTable`: the methods' Spearman rank correlations, as a small read-only table."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QStyle, QTableWidget, QTableWidgetItem

from explorer import style
from explorer.drawing import plot_style as st
from explorer.theme import set_sheet


def short_rho(value: float) -> str:
    """ρ in 4 characters, as tables in papers print it: ".93", "−.21", "1"."""
    if abs(value) > 0.995:
        return "1" if value > 0 else "-1"
    return f"{value:.2f}".replace("0.", ".")  # ASCII "-": the narrow minus fits a narrow cell


MIN_HEADER_PT = 8  # before the presentation scale


class SpearmanTable(QTableWidget):
    def __init__(self, parent=None):
        super().__init__(parent, editTriggers=QAbstractItemView.EditTrigger.NoEditTriggers,
                         selectionMode=QAbstractItemView.SelectionMode.NoSelection, focusPolicy=Qt.FocusPolicy.NoFocus,
                         textElideMode=Qt.TextElideMode.ElideNone,  # "-.21" whole, never "-…"
                         verticalScrollBarPolicy=Qt.ScrollBarPolicy.ScrollBarAlwaysOff,
                         horizontalScrollBarPolicy=Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.horizontalHeader().setMinimumSectionSize(8)
        self.setToolTip("Spearman's ρ between two methods' scores over the input tokens: 1 = the same "
                        "ranking, 0 = unrelated, −1 = reversed. Blank: undefined (a method gave every "
                        "token the same score, or there is one token).")
        set_sheet(self, "QTableWidget::item {{ padding: 0px; }} QHeaderView::section {{ padding: 0px 1px; }}")
        self.restyle()

    def restyle(self) -> None:
        self.setFont(style.font(style.BASE_POINT_SIZE))
        self.verticalHeader().setFont(style.font(style.SMALL_POINT_SIZE, bold=True))
        self._fit_header()

    def _fit_header(self) -> None:
        """The column names at the largest size (down to 8 pt) at which each fits its column."""
        names = [self.horizontalHeaderItem(i).text() for i in range(self.columnCount()) if self.horizontalHeaderItem(i)]
        header = self.horizontalHeader()
        sections = [header.sectionSize(i) for i in range(self.columnCount())] or [self.viewport().width()]
        margin = 2 * self.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None, header) + 2
        room = min(sections) - margin
        for pt in range(style.SMALL_POINT_SIZE, MIN_HEADER_PT - 1, -1):
            font = style.font(pt, bold=True)
            if not names or max(QFontMetricsF(font).horizontalAdvance(n) for n in names) <= room:
                break
        self.horizontalHeader().setFont(font)
        for i in range(self.columnCount()):  # (an item's own font, set or not, is what the header draws)
            item = self.horizontalHeaderItem(i)
            if item is not None:
                item.setFont(font)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._fit_header()

    def set_data(self, short_names: list[str], rho: np.ndarray) -> None:
        n = len(short_names)
        self.setRowCount(n)
        self.setColumnCount(n)
        self.setHorizontalHeaderLabels(short_names)
        self.setVerticalHeaderLabels(short_names)
        self._fit_header()
        for i in range(n):
            for j in range(n):
                value = rho[i, j]
                item = QTableWidgetItem("" if np.isnan(value) else short_rho(value))
                item.setToolTip("" if np.isnan(value) else f"ρ({short_names[i]}, {short_names[j]}) = {value:.4f}")
                item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                item.setFont(style.font(style.SMALL_POINT_SIZE))
                if i == j:
                    item.setForeground(st.colour("muted"))
                self.setItem(i, j, item)

    def value(self, i: int, j: int) -> str:
        item = self.item(i, j)
        return item.text() if item is not None else ""
