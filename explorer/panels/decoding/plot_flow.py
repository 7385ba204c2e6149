"""`PlotFlow`: plots in as many columns as keep each one large — a row on a wide, low screen
(a 1280×720 beamer), a 2 × 2 grid in a squarer dock, a column in a narrow one.

A lecture must never show an 80-pixel map, nor a map that drops token labels: the flow picks
the number of columns whose cells are largest (a map wants about as much height as width)
among those that give every map the room its labels need at the legible minimum
(`least_size()`), its title whole, and every cell at least MIN_CELL. When no arrangement
gives every map its labels' room (a long decode on a short screen), the `fold` plot (the
mask in force, which the self-attention map also draws as hatched cells) leaves the flow, so
the others keep every label. The plots themselves get no minimum size: a minimum would make
the panel's scroll area grow the flow (the panel scrolls) instead of the flow fitting the room.
"""
from __future__ import annotations

import math

from PySide6.QtCore import QEvent
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QGridLayout, QWidget

MIN_CELL = (230, 190)  # a map's widget: its title, axes and a ≥ 160 × 120 plot area
STRIP_SHARE = 0.36  # of the flow's height: a `strip` plot alone on the last row (the bars under the maps)
TITLE_MARGIN = 12
CHROME_LINES = (2.5, 4.0)  # text lines around a map: query labels beside it; title and key labels over and under it


class PlotFlow(QWidget):
    """Lays `widgets` out in a grid whose number of columns follows the available size."""

    def __init__(self, widgets: list[QWidget], aspect: float = 1.15, parent=None, fold: QWidget | None = None,
                 on_fold=None, strip: QWidget | None = None):
        """aspect: the width / height a cell is best at (cells far from it count as smaller).
        fold: the plot left out when the others need its room for their labels (`on_fold(bool)`
        is told when that changes: a title may then say where its content went).
        strip: a plot that reads as well low and wide (bars): alone on the last row it takes
        only STRIP_SHARE of the height, the maps' rows the rest (so three maps over the bars
        can each be larger than four maps in one row)."""
        super().__init__(parent)
        self.widgets = list(widgets)
        self.fold, self.on_fold, self.strip = fold, on_fold, strip
        self.folded = False
        self._folding = False
        self.aspect = aspect
        self.grid = QGridLayout(self)
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.grid.setSpacing(6)
        self.columns = 0
        self._placed: list[QWidget] = []
        self._stretch: tuple[list[int], list[int]] = ([], [])
        self.setMinimumSize(*MIN_CELL)
        for w in self.widgets:
            w.setParent(self)
            w.show()  # a child shown with its parent; only a plot its panel hides stays out of the flow
            w.installEventFilter(self)  # shown / hidden (a model without cross-attention) → reflow
        self.reflow()

    def shown_widgets(self) -> list[QWidget]:
        """The plots their panel shows (the fold plot counts even while the flow folds it)."""
        return [w for w in self.widgets if not w.isHidden() or (w is self.fold and self.folded)]

    @staticmethod
    def least_size(widget: QWidget, width: float | None = None) -> tuple[float, float]:
        """The room a plot's labels need in a cell `width` wide (a TokenHeatmap's `least_size()`:
        its title may take two lines there), at least MIN_CELL."""
        need = getattr(widget, "least_size", None)
        w, h = need(width=width) if need is not None else MIN_CELL
        return max(w, MIN_CELL[0]), max(h, MIN_CELL[1])

    def least_width(self, widget: QWidget) -> float:
        """MIN_CELL's width: a map's title elides to its cell, so it asks for no more."""
        return MIN_CELL[0]

    def _needs(self, plots: list[QWidget], columns: int, width: float | None = None) -> tuple[list[float], list[float]]:
        """Each column's and each row's least size when `plots` flow into `columns` columns of a
        flow `width` wide (None: the titles' lines as drawn now)."""
        cols, rows = [0.0] * columns, [0.0] * math.ceil(len(plots) / columns)
        cell = None if width is None else (width - self.grid.spacing() * (columns - 1)) / columns
        for i, w in enumerate(plots):
            r, c = divmod(i, columns)
            need_w, need_h = self.least_size(w, cell)
            cols[c], rows[r] = max(cols[c], need_w), max(rows[r], need_h)
        return cols, rows

    def row_heights(self, plots: list[QWidget], columns: int, height: float) -> list[float]:
        """The height each row of `plots` in `columns` columns is given: equal shares, but a
        `strip` plot alone on the last row only as much as STRIP_SHARE of the height (or its
        least height, if more), the rows of maps the rest."""
        n_rows = math.ceil(len(plots) / columns)
        room = height - self.grid.spacing() * (n_rows - 1)
        if n_rows > 1 and self.strip is not None and plots[-1] is self.strip and len(plots) % columns == 1:
            low = min(max(STRIP_SHARE * height, self.least_size(self.strip)[1]), room / n_rows)
            return [(room - low) / (n_rows - 1)] * (n_rows - 1) + [low]
        return [room / n_rows] * n_rows

    def _score(self, width: int, height: int, plots: list[QWidget]) -> tuple:
        """(every label has room, cells ≥ MIN_CELL, every title whole, usable area, columns) of
        the best column count for `plots`."""
        n = len(plots)
        if n == 0:
            return (True, True, True, 0.0, 1)
        widest = max(self.least_width(w) for w in plots)
        spacing = self.grid.spacing()
        line = QFontMetricsF(self.font()).height()  # (scaled while presenting, like the plots' text)
        chrome_w, chrome_h = CHROME_LINES[0] * line, CHROME_LINES[1] * line
        scored = []
        for c in range(1, n + 1):
            cols, rows = self._needs(plots, c, width)
            fits = sum(cols) + spacing * (c - 1) <= width and sum(rows) + spacing * (len(rows) - 1) <= height
            heights = self.row_heights(plots, c, height)
            w, h = (width - spacing * (c - 1)) / c, heights[0]  # (a map's row: the strip's may be lower)
            fits = fits and all(have >= need for have, need in zip(heights, rows))
            # the map inside a cell, less its title and token axes: a cell's own size would rank
            # wide, low cells above tall ones whose maps are in fact larger
            w_map, h_map = max(1.0, w - chrome_w), max(1.0, h - chrome_h)
            usable = min(w_map, h_map * self.aspect) * min(h_map, w_map / self.aspect)
            keep = c == self.columns  # a near tie keeps the current arrangement (no flapping)
            scored.append((fits, w >= MIN_CELL[0] and min(heights) >= MIN_CELL[1], w >= widest,
                           usable * (1.03 if keep else 1.0), c))
        return max(scored)

    def arrangement(self, width: int, height: int) -> tuple[int, bool]:
        """(columns, fold the fold plot?): fold only when the plots lack room for every label
        (then the others' cells grow: more of their labels are drawn, or all of them)."""
        shown = self.shown_widgets()
        best = self._score(width, height, shown)
        if not best[0] and self.fold in shown:
            return self._score(width, height, [w for w in shown if w is not self.fold])[-1], True
        return best[-1], False

    def reflow(self, force: bool = False) -> None:
        columns, folded = self.arrangement(max(self.width(), 1), max(self.height(), 1))
        if folded != self.folded:
            self.folded = folded
            if self.on_fold is not None:
                self.on_fold(folded)
        if self.fold is not None and self.fold.isHidden() != folded:
            self._folding = True  # (its hide / show event is this flow's own doing)
            try:
                self.fold.setVisible(not folded)
            finally:
                self._folding = False
        shown = [w for w in self.shown_widgets() if not (folded and w is self.fold)]
        cols, rows = self._needs(shown, columns, max(self.width(), 1)) if shown else ([], [])
        # Columns share the width as their labels need it (a map of 32 source tokens beside
        # the narrower bars); equal shares where nothing needs more than MIN_CELL.
        stretch = [max(1, round(x / 10)) for x in cols], [max(1, round(y / 10)) for y in rows]
        heights = self.row_heights(shown, columns, max(self.height(), 1)) if shown else []
        if len(set(round(h) for h in heights)) > 1:  # a low strip row under the maps: the heights it was scored with
            stretch = stretch[0], [max(1, round(h / 10)) for h in heights]
        if not force and columns == self.columns and shown == self._placed:
            if stretch != self._stretch:  # the same places, other shares (the strip row follows the height):
                self._stretch = stretch   # no widget is moved
                for c, k in enumerate(stretch[0]):
                    self.grid.setColumnStretch(c, k)
                for r, k in enumerate(stretch[1]):
                    self.grid.setRowStretch(r, k)
            return
        self.columns, self._placed, self._stretch = columns, shown, stretch
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
        for c, k in enumerate(stretch[0]):
            self.grid.setColumnStretch(c, k)
        for r, k in enumerate(stretch[1]):
            self.grid.setRowStretch(r, k)

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self.reflow()

    def eventFilter(self, obj, event) -> bool:  # noqa: N802
        if event.type() in (QEvent.ShowToParent, QEvent.HideToParent) and not (obj is self.fold and self._folding):
            self.reflow()
        return False
