"""`HeatmapGrid`: sections of titled `Heatmap`s in the columns that make them largest, one shared
colour bar; below the size where `MIN_LABELLED` labels fit, the grid scrolls. Maps are made a few a
turn of the event loop (`at_most_new`; then `mapsMade`), or all at once (`make_all_maps`)."""
from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QGridLayout, QLabel, QScrollArea, QWidget

from explorer import style
from explorer.drawing.heatmap import Heatmap, colour_bar_canvas
from explorer.drawing.label_axis import label_font
from explorer.panels.layouts import row
from model.inference.labels import LINE_SHARE, STACK_GAP_PX, grid_layout

MIN_LABELLED = 6  # labels a map of the grid can always draw side by side, at the label font
MIN_VIEW = 168  # px: the least map area a back row reads (the layout sweep's floor is 160)
MAPS_PER_TURN = 3  # maps made in one turn of the event loop (each ~20 ms to build, more to lay out)


def least_side() -> int:
    """The smallest map side (px): MIN_LABELLED labels stacked, the column labels and the title."""
    line = QFontMetricsF(label_font()).height()
    return int(max(MIN_LABELLED * (LINE_SHARE * line + STACK_GAP_PX), MIN_VIEW) + 3 * line)


class HeatmapGrid(QWidget):
    """`set_sections([(heading, [title, …]), …])` → the maps, section by section. Signals:
    hovered(text) of the map under the mouse; mapClicked(section, index) of a clicked map."""

    hovered = Signal(str)
    mapClicked = Signal(int, int)
    mapsMade = Signal()  # the maps a `set_sections` lacked are made: draw again

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
        row((self.scroll_area, 1), self.bar_canvas, parent=self, margins=0)
        self.headings: list[QLabel] = []
        self.maps: list[list[Heatmap]] = []
        self.pool: list[Heatmap] = []  # every map made so far, reused by later sections
        self.wanted = 0  # maps the last sections asked for (the pool grows to this many)
        self._making = QTimer(self, singleShot=True, interval=0)
        self._making.timeout.connect(self._make_some)
        self._placed = (0, 0, 0)  # (columns, least side, height) of the maps as placed

    def set_sections(self, sections: list[tuple[str, list[str]]],
                     at_most_new: int | None = None) -> list[list[Heatmap]]:
        """One heading and its titled maps per section (maps reused). `at_most_new`: make at most this
        many now; a section then has only its first maps until the rest are made (`mapsMade`)."""
        self.wanted = sum(len(titles) for _h, titles in sections)
        self._make(self.wanted - len(self.pool) if at_most_new is None else at_most_new)
        if len(self.pool) < self.wanted:
            self._making.start()
        while len(self.headings) < len(sections):
            self.headings.append(style.set_font_role(QLabel(), "heading"))
        used, self.maps = 0, []
        for (heading, titles), label in zip(sections, self.headings):
            label.setText(heading)
            maps = self.pool[used:used + len(titles)]  # (fewer while the pool grows)
            for m, title in zip(maps, titles):
                m.set_title(title)
            self.maps.append(maps)
            used += len(titles)
        self._placed = (0, 0, 0)  # placed again
        self._place()
        return self.maps

    @property
    def complete(self) -> bool:
        return len(self.pool) >= self.wanted

    def make_all_maps(self) -> None:
        if not self.complete:
            self._making.stop()
            self._make(self.wanted - len(self.pool))
            self.mapsMade.emit()

    def _make_some(self) -> None:
        """MAPS_PER_TURN more maps this turn; the next ones in a later turn, or `mapsMade`."""
        self._make(MAPS_PER_TURN)
        if self.complete:
            self.mapsMade.emit()
        else:
            self._making.start()

    def _make(self, count: int) -> None:
        for _ in range(max(0, min(count, self.wanted - len(self.pool)))):
            m = Heatmap(colormap=self.cmap, levels=self.levels, square=False)  # (as tall as the room allows)
            m.hovered.connect(self.hovered)
            m.cellClicked.connect(lambda _r, _c, m=m: self._clicked(m))
            self.pool.append(m)

    def _clicked(self, m: Heatmap) -> None:
        for section, maps in enumerate(self.maps):
            if m in maps:
                self.mapClicked.emit(section, maps.index(m))

    def _place(self) -> None:
        """Columns for the room the scroll area has, each map at least `least_side` wide and the
        maps as tall as the rows share of the room (cells need not be square)."""
        view, least = self.scroll_area.viewport().size(), least_side()
        shown = [label for label in self.headings[:len(self.maps)] if len(self.maps) > 1 or label.text()]
        for label in shown:
            label.ensurePolished()  # (the presenting style sheet's font decides its height)
        spacing, margins = self.grid.spacing(), self.grid.contentsMargins()
        heading = max((label.sizeHint().height() for label in shown), default=0) + spacing
        cols, side = grid_layout([len(maps) for maps in self.maps], view.width(), view.height(), heading, least,
                                 spacing)
        rows = sum(math.ceil(len(maps) / cols) for maps in self.maps)
        room = view.height() - margins.top() - margins.bottom() - len(shown) * heading - (rows - 1) * spacing
        tall = max(side, int(room / max(rows, 1)))
        if (cols, side, tall) == self._placed:
            return
        self._placed = (cols, side, tall)
        while self.grid.count():
            self.grid.takeAt(0)
        for c in range(max(cols, self.grid.columnCount())):  # the columns alike: one label plan for every map
            self.grid.setColumnStretch(c, int(c < cols))
        for m in self.pool:
            m.hide()
        for label in self.headings:
            label.hide()
        line = 0
        for label, maps in zip(self.headings, self.maps):
            if len(self.maps) > 1 or label.text():
                self.grid.addWidget(label, line, 0, 1, cols)
                label.show()
                line += 1
            for i, m in enumerate(maps):
                m.setFixedHeight(tall)
                m.setMinimumWidth(least)
                self.grid.addWidget(m, line + i // cols, i % cols)
                m.show()
            line += math.ceil(len(maps) / cols)
        self.grid.setRowStretch(line, 1)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._place()
