"""`PlotGrid`: the decoding step's three attention maps and its next-token bars, laid out as
each screen class declares it (`explorer.screen`).

WIDE: the maps in one row, the bars under them; it scrolls rather than shrink a plot below its
least size. PROJECTOR (a low page, few pixels): two tabs of two plots side by side, each plot
half the width and the whole height: the self- and cross-attention maps, then the mask and
the next-token bars. NARROW: one tab per plot.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QGridLayout, QHBoxLayout, QScrollArea, QTabWidget, QVBoxLayout, QWidget

from explorer.screen import ScreenClass

MAP_LEAST = (230, 200)   # a map's widget: its title, token axes and a ≥ 160 × 120 plot area
BARS_LEAST_HEIGHT = 200  # the bars' widget: caption, token labels and a ≥ 120 px high plot area
# Each class's cells (row, column, row span, column span) for mask, self, cross, bars, and the
# stretch of its rows and columns.
GRIDS = {
    ScreenClass.WIDE: {"cells": [(0, 0, 1, 1), (0, 1, 1, 1), (0, 2, 1, 1), (1, 0, 1, 3)],
                       "rows": (3, 2), "columns": (1, 1, 1)},
}
# PROJECTOR's tabs: (name, the plots side by side on it, as indices of mask, self, cross, bars)
PAGES = (("Self | cross attention", (1, 2)), ("Mask | next token", (0, 3)))
TAB_NAMES = ("Mask", "Self-attention", "Cross-attention", "Next token")


class PlotGrid(QWidget):
    """`maps` in a row over `bars` (WIDE), two plots a tab (PROJECTOR) or one tab each (NARROW)."""

    def __init__(self, maps: list[QWidget], bars: QWidget, parent=None):
        super().__init__(parent)
        self.maps, self.bars = list(maps), bars
        self.screen_class: ScreenClass | None = None
        self.left_out: set[int] = set()  # indices of plots the panel has nothing for (`set_shown`)
        for heatmap in self.maps:
            heatmap.setMinimumSize(*MAP_LEAST)
        bars.setMinimumHeight(BARS_LEAST_HEIGHT)
        self.grid_page = QWidget()
        self.grid = QGridLayout(self.grid_page)
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.grid.setSpacing(6)
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.NoFrame)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAsNeeded)
        self.scroll.setWidget(self.grid_page)
        self.tabs = QTabWidget()
        self.pages = []  # PROJECTOR's tabs, each a row of two plots
        for _name, _indices in PAGES:
            page = QWidget()
            row = QHBoxLayout(page)
            row.setContentsMargins(0, 0, 0, 0)
            row.setSpacing(6)
            self.pages.append(page)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.scroll)
        outer.addWidget(self.tabs)
        self.apply_screen_class(ScreenClass.PROJECTOR)

    def plots(self) -> list[QWidget]:
        return [*self.maps, self.bars]

    def set_shown(self, widget: QWidget, on: bool) -> None:
        """Show or leave out a plot (a model without cross-attention has no cross map)."""
        i = self.plots().index(widget)
        (self.left_out.discard if on else self.left_out.add)(i)
        if self.screen_class == ScreenClass.NARROW:
            self.tabs.setTabVisible(self.tabs.indexOf(widget), on)
            return
        widget.setVisible(on)
        if self.screen_class == ScreenClass.PROJECTOR:
            self._show_pages()

    def _show_pages(self) -> None:
        """A PROJECTOR tab is offered while any of its plots is."""
        for i, (_name, indices) in enumerate(PAGES):
            self.tabs.setTabVisible(i, any(j not in self.left_out for j in indices))

    def apply_screen_class(self, cls: ScreenClass) -> None:
        """Move the plots into the arrangement `cls` declares (nothing moves when it is unchanged)."""
        if cls == self.screen_class:
            return
        self.screen_class = cls
        while self.tabs.count():
            self.tabs.removeTab(0)
        for widget in self.plots():
            self.grid.removeWidget(widget)
            for page in self.pages:
                page.layout().removeWidget(widget)
        if cls == ScreenClass.PROJECTOR:
            plots = self.plots()
            for page, (name, indices) in zip(self.pages, PAGES):
                for j in indices:
                    page.layout().addWidget(plots[j], 1)
                    plots[j].setVisible(j not in self.left_out)
                self.tabs.addTab(page, name)
            self._show_pages()
            self.scroll.hide()
            self.tabs.show()
            return
        if cls == ScreenClass.NARROW:
            for i, (widget, name) in enumerate(zip(self.plots(), TAB_NAMES)):
                self.tabs.addTab(widget, name)
                self.tabs.setTabVisible(i, i not in self.left_out)
            self.scroll.hide()
            self.tabs.show()
            return
        grid = GRIDS[cls]
        for i, (widget, cell) in enumerate(zip(self.plots(), grid["cells"])):
            self.grid.addWidget(widget, *cell)
            widget.setVisible(i not in self.left_out)
        for i in range(max(self.grid.rowCount(), self.grid.columnCount())):
            self.grid.setRowStretch(i, grid["rows"][i] if i < len(grid["rows"]) else 0)
            self.grid.setColumnStretch(i, grid["columns"][i] if i < len(grid["columns"]) else 0)
        self.tabs.hide()
        self.scroll.show()
