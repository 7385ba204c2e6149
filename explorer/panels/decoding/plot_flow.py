"""`PlotFlow`: plots in as many columns as keep each one large — a row on a wide, low screen
(a 1280×720 beamer), a 2 × 2 grid in a squarer dock, a column in a narrow one.

A lecture must never show an 80-pixel map: the flow picks the number of columns whose cells
are largest (a map wants about as much height as width) among those that keep every cell at
least MIN_CELL. The plots themselves get no minimum size: a minimum would make the panel's
scroll area grow the flow and freeze its columns; the flow adapts to the room it is given.
"""
from __future__ import annotations

import math

from PySide6.QtCore import QEvent
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QGridLayout, QWidget

MIN_CELL = (230, 190)  # a map's widget: its title, axes and a ≥ 160 × 120 plot area
TITLE_MARGIN = 12


class PlotFlow(QWidget):
    """Lays `widgets` out in a grid whose number of columns follows the available size."""

    def __init__(self, widgets: list[QWidget], aspect: float = 1.15, parent=None):
        """aspect: the width / height a cell is best at (cells far from it count as smaller)."""
        super().__init__(parent)
        self.widgets = list(widgets)
        self.aspect = aspect
        self.grid = QGridLayout(self)
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.grid.setSpacing(6)
        self.columns = 0
        self._placed: list[QWidget] = []
        self.setMinimumSize(*MIN_CELL)
        for w in self.widgets:
            w.setParent(self)
            w.show()  # a child shown with its parent; only a plot its panel hides stays out of the flow
            w.installEventFilter(self)  # shown / hidden (a model without cross-attention) → reflow
        self.reflow()

    def shown_widgets(self) -> list[QWidget]:
        return [w for w in self.widgets if not w.isHidden()]

    def least_width(self, widget: QWidget) -> float:
        """MIN_CELL's width, or more when the plot's title (a TokenHeatmap's) needs it whole."""
        title = getattr(widget, "title", None)
        text = getattr(title, "full_text", None)
        if not text:
            return MIN_CELL[0]
        return max(MIN_CELL[0], QFontMetricsF(title.font()).horizontalAdvance(text) + TITLE_MARGIN)

    def best_columns(self, width: int, height: int, n: int) -> int:
        """The column count whose cells, clipped to the preferred aspect, are largest, among
        those where every title is whole, then those whose cells are all at least MIN_CELL."""
        if n == 0:
            return 1
        widest = max((self.least_width(w) for w in self.shown_widgets()), default=MIN_CELL[0])
        scored = []
        for c in range(1, n + 1):
            w, h = width / c, height / math.ceil(n / c)
            usable = min(w, h * self.aspect) * min(h, w / self.aspect)
            keep = c == self.columns  # a near tie keeps the current arrangement (no flapping)
            scored.append((w >= widest, h >= MIN_CELL[1], usable * (1.03 if keep else 1.0), c))
        return max(scored)[3]

    def reflow(self, force: bool = False) -> None:
        shown = self.shown_widgets()
        columns = self.best_columns(max(self.width(), 1), max(self.height(), 1), len(shown))
        if not force and columns == self.columns and shown == self._placed:
            return
        self.columns, self._placed = columns, shown
        for w in self.widgets:
            self.grid.removeWidget(w)
        for i in range(self.grid.columnCount()):
            self.grid.setColumnStretch(i, 0)
        for i in range(self.grid.rowCount()):
            self.grid.setRowStretch(i, 0)
        for i, w in enumerate(shown):
            row, col = divmod(i, columns)
            span = columns - col if i == len(shown) - 1 else 1  # the last plot takes the rest of its row
            self.grid.addWidget(w, row, col, 1, span)
        for c in range(columns):
            self.grid.setColumnStretch(c, 1)
        for r in range(math.ceil(len(shown) / columns) if shown else 0):
            self.grid.setRowStretch(r, 1)

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self.reflow()

    def eventFilter(self, obj, event) -> bool:  # noqa: N802
        if event.type() in (QEvent.ShowToParent, QEvent.HideToParent):
            self.reflow()
        return False
