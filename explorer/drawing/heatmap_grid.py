"""`HeatmapGrid`: sections of titled `Heatmap`s in the columns that make them largest, with one
shared colour bar; below the size where `MIN_LABELLED` labels fit, the grid scrolls instead."""
from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import (
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QWidget,
)

from explorer import style
from explorer.drawing.heatmap import Heatmap, colour_bar_canvas
from explorer.drawing.label_axis import label_font
from model.inference.labels import LINE_SHARE, STACK_GAP_PX, grid_layout

MIN_LABELLED = 6  # labels a map of the grid can always draw side by side, at the label font
MIN_VIEW = 168  # px: the least map area a back row reads (the layout sweep's floor is 160)


def least_side() -> int:
    """The smallest map side (px): MIN_LABELLED labels stacked, the column labels and the title."""
    line = QFontMetricsF(label_font()).height()
    return int(max(MIN_LABELLED * (LINE_SHARE * line + STACK_GAP_PX), MIN_VIEW) + 3 * line)


class HeatmapGrid(QWidget):
    """`set_sections([(heading, [title, …]), …])` → the maps, section by section. Signals:
    hovered(text) of the map under the mouse; mapClicked(section, index) of a clicked map."""

    hovered = Signal(str)
    mapClicked = Signal(int, int)

    def __init__(self, colormap: pg.ColorMap | None = None, levels: tuple[float, float] = (0.0, 1.0),
                 scale_note: str = "", parent=None):
        super().__init__(parent)
        self.cmap = colormap or style.colormap(style.SEQUENTIAL)
        self.levels = levels
        self.scroll_area = QScrollArea()
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # PageUp / PageDown stay the lecture's keys
        self.scroll_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.body = QWidget()
        self.grid = QGridLayout(self.body)
        self.grid.setContentsMargins(2, 2, 2, 2)
        self.grid.setSpacing(6)
        self.scroll_area.setWidget(self.body)
        self.bar_canvas, self.colorbar = colour_bar_canvas(self.cmap, levels)
        self.bar_canvas.setToolTip(scale_note)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.scroll_area, 1)
        row.addWidget(self.bar_canvas)
        self.headings: list[QLabel] = []
        self.maps: list[list[Heatmap]] = []
        self.pool: list[Heatmap] = []  # every map made so far, reused by later sections
        self._columns = 0

    def set_sections(self, sections: list[tuple[str, list[str]]]) -> list[list[Heatmap]]:
        """Lay out one heading and its titled maps per section (maps are reused, never remade)."""
        wanted = sum(len(titles) for _h, titles in sections)
        while len(self.pool) < wanted:
            m = Heatmap(colormap=self.cmap, levels=self.levels)
            m.hovered.connect(self.hovered)
            m.cellClicked.connect(lambda _r, _c, m=m: self._clicked(m))
            self.pool.append(m)
        while len(self.headings) < len(sections):
            self.headings.append(QLabel(font=style.font(style.BASE_POINT_SIZE, bold=True)))
        used, self.maps = 0, []
        for (heading, titles), label in zip(sections, self.headings):
            label.setText(heading)
            maps = self.pool[used:used + len(titles)]
            for m, title in zip(maps, titles):
                m.set_title(title)
            self.maps.append(maps)
            used += len(titles)
        self._columns = 0  # placed again
        self._place()
        return self.maps

    def _clicked(self, m: Heatmap) -> None:
        for section, maps in enumerate(self.maps):
            if m in maps:
                self.mapClicked.emit(section, maps.index(m))

    def _place(self) -> None:
        """Columns for the room the scroll area has; each map square, at least `least_side`."""
        view, least = self.scroll_area.viewport().size(), least_side()
        heading = QFontMetricsF(style.font(style.BASE_POINT_SIZE, bold=True)).height() + 6
        cols, side = grid_layout([len(maps) for maps in self.maps], view.width(), view.height(), heading, least,
                                 self.grid.spacing())
        if cols == self._columns and side == getattr(self, "_side", 0):
            return
        self._columns, self._side = cols, side
        while self.grid.count():
            self.grid.takeAt(0)
        for m in self.pool:
            m.hide()
        for label in self.headings:
            label.hide()
        row = 0
        for label, maps in zip(self.headings, self.maps):
            if len(self.maps) > 1 or label.text():
                self.grid.addWidget(label, row, 0, 1, cols)
                label.show()
                row += 1
            for i, m in enumerate(maps):
                m.setFixedHeight(side)
                m.setMinimumWidth(least)
                self.grid.addWidget(m, row + i // cols, i % cols)
                m.show()
            row += math.ceil(len(maps) / cols)
        self.grid.setRowStretch(row, 1)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._place()
