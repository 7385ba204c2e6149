"""`PlotGrid`: a decoding step's three attention maps and its next-token bars, in tabs of rows of
plots as each screen class declares it (`explorer.screen`): WIDE one page, the maps in a row over
the bars; PROJECTOR two tabs of two plots side by side, each the tab's whole height; NARROW a tab
per plot. A page scrolls rather than shrink a plot below its least size."""
from __future__ import annotations

from PySide6.QtWidgets import QFrame, QGridLayout, QScrollArea, QTabWidget, QWidget

from explorer.screen import ScreenClass

MAP_LEAST = (230, 200)   # a map's widget: its title, token axes and a ≥ 160 × 120 plot area
BARS_LEAST_HEIGHT = 200  # the bars' widget: caption, token labels and a ≥ 120 px high plot area
# class → its tabs: (name, rows of plots as indices of mask, self, cross, bars, the rows' stretch)
PAGES = {
    ScreenClass.WIDE: (("Step", ((0, 1, 2), (3,)), (3, 2)),),
    ScreenClass.PROJECTOR: (("Self | cross attention", ((1, 2),), (1,)), ("Mask | next token", ((0, 3),), (1,))),
    ScreenClass.NARROW: tuple((name, ((i,),), (1,)) for i, name in
                              enumerate(("Mask", "Self-attention", "Cross-attention", "Next token"))),
}


class PlotGrid(QTabWidget):
    """`maps` and `bars` arranged as the screen class declares; the tab bar only with two tabs or more."""

    def __init__(self, maps: list[QWidget], bars: QWidget, parent=None):
        super().__init__(parent)
        self.plots = [*maps, bars]
        self.screen_class: ScreenClass | None = None
        self.left_out: set[int] = set()  # plots the panel has nothing for (`set_shown`)
        for heatmap in maps:
            heatmap.setMinimumSize(*MAP_LEAST)
        bars.setMinimumHeight(BARS_LEAST_HEIGHT)
        self.setTabBarAutoHide(True)
        self.apply_screen_class(ScreenClass.PROJECTOR)

    def set_shown(self, widget: QWidget, on: bool) -> None:
        """Show or leave out a plot (a model without cross-attention has no cross map); a tab is
        offered while any of its plots is."""
        (self.left_out.discard if on else self.left_out.add)(self.plots.index(widget))
        self._show()

    def _show(self) -> None:
        for i, (_name, rows, _stretch) in enumerate(PAGES[self.screen_class]):
            for j in (j for row in rows for j in row):
                self.plots[j].setVisible(j not in self.left_out)
            self.setTabVisible(i, any(j not in self.left_out for row in rows for j in row))

    def apply_screen_class(self, cls: ScreenClass) -> None:
        """Move the plots into the tabs `cls` declares (nothing moves when it is unchanged)."""
        if cls == self.screen_class:
            return
        self.screen_class = cls
        old = [self.widget(i) for i in range(self.count())]
        self.clear()
        for name, rows, stretch in PAGES[cls]:
            page = QWidget()
            grid = QGridLayout(page)
            grid.setContentsMargins(0, 0, 0, 0)
            grid.setSpacing(6)
            width = max(len(row) for row in rows)
            for r, row in enumerate(rows):
                grid.setRowStretch(r, stretch[r])
                for c, j in enumerate(row):  # a lone plot in a row spans it
                    grid.addWidget(self.plots[j], r, c, 1, width if len(row) == 1 else 1)
            scroll = QScrollArea(widgetResizable=True, frameShape=QFrame.Shape.NoFrame)
            scroll.setWidget(page)
            self.addTab(scroll, name)
        for page in old:
            page.deleteLater()
        self._show()

    def tab_of(self, widget: QWidget) -> int:
        """The index of the tab showing `widget`."""
        return next(i for i in range(self.count()) if self.widget(i).isAncestorOf(widget))
