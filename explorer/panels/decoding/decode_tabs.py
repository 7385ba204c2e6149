"""`DecodeTabs`: the decoding panel's views in tabs: the step's plots grouped as each screen class
declares (STEP_PAGES), then the parallel pass and the beam tree; side by side, the step's pages in
tabs of their own on the left. A page scrolls rather than shrink a plot below its least size."""
from __future__ import annotations

from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import QFrame, QGridLayout, QScrollArea, QSplitter, QTabWidget, QWidget

from explorer.screen import ScreenClass

MAP_LEAST = (230, 200)   # a map's widget: its title, token axes and a ≥ 160 × 120 plot area
BARS_LEAST_HEIGHT = 200  # the bars' widget: caption, token labels and a ≥ 120 px high plot area
VIEW_TITLES = {"mask": "Mask", "self": "Self-attention", "cross": "Cross-attention", "bars": "Next token"}
# class → the step's pages: (tab name, rows of views, the rows' stretch)
STEP_PAGES = {
    ScreenClass.WIDE: (("Step by step (autoregressive)", (("mask", "self", "cross"), ("bars",)), (3, 2)),),
    ScreenClass.PROJECTOR: (("Self | cross attention", (("self", "cross"),), (1,)),
                            ("Mask | next token", (("mask", "bars"),), (1,))),
    ScreenClass.NARROW: tuple((name, ((key,),), (1,)) for key, name in VIEW_TITLES.items()),
}
OTHER_PAGES = (("parallel", "Masked vs. unmasked"), ("beam", "Beam tree"))  # (view, tab name): whole pages


class DecodeTabs(QSplitter):
    """`views` (mask, self, cross, bars, parallel, beam → widget) in `tabs`, or the step's pages in
    `step_tabs` beside them; `viewChosen` names the session's view of a tab the user picks."""

    viewChosen = Signal(str)  # "steps" | "parallel" | "beam"

    def __init__(self, views: dict[str, QWidget], parent=None):
        super().__init__(Qt.Horizontal, parent)
        self.views = views
        for key in ("mask", "self", "cross"):
            views[key].setMinimumSize(*MAP_LEAST)
        views["bars"].setMinimumHeight(BARS_LEAST_HEIGHT)
        self.step_tabs, self.tabs = QTabWidget(), QTabWidget()
        for tabs in (self.step_tabs, self.tabs):
            self.addWidget(tabs)
        self.setStretchFactor(0, 11)
        self.setStretchFactor(1, 9)
        self.setSizes([1100, 900])
        self.step_pages: list[tuple[QWidget, tuple[str, ...]]] = []  # (page, its views)
        self.left_out: set[str] = set()  # views the panel has nothing for (`set_shown`)
        self.screen_class, self.side_by_side = None, False
        self.tabs.currentChanged.connect(lambda i: self.viewChosen.emit(self.view_of(self.tabs.widget(i))))
        self.arrange(ScreenClass.PROJECTOR, True)

    def arrange(self, cls: ScreenClass, side_by_side: bool, view: str | None = None) -> None:
        """Move the views into the pages `cls` declares, the step's beside the rest or among them
        (nothing moves when neither changed; moving tabs is no choice of the user's), `view` in front."""
        if (cls, side_by_side) == (self.screen_class, self.side_by_side):
            return
        self.screen_class, self.side_by_side = cls, side_by_side
        old = [page for page, _views in self.step_pages]
        with QSignalBlocker(self.tabs):
            for tabs in (self.step_tabs, self.tabs):
                tabs.clear()
            self.step_pages = [(self._page(rows, stretch), sum(rows, ())) for _name, rows, stretch in STEP_PAGES[cls]]
            for (page, _views), (name, _rows, _stretch) in zip(self.step_pages, STEP_PAGES[cls]):
                (self.step_tabs if side_by_side else self.tabs).addTab(page, name)
            for key, name in OTHER_PAGES:
                self.tabs.addTab(self.views[key], name)
        for page in old:  # (emptied: its views live in the new pages)
            page.deleteLater()
        self.step_tabs.setVisible(side_by_side)
        self._show()
        self.show_view(view or "steps")

    def _page(self, rows, stretch) -> QWidget:
        """A scrolling page of `rows` of views (a lone view in a row spans it)."""
        page = QWidget()
        grid = QGridLayout(page)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setSpacing(6)
        width = max(len(row) for row in rows)
        for r, row in enumerate(rows):
            grid.setRowStretch(r, stretch[r])
            for c, key in enumerate(row):
                grid.addWidget(self.views[key], r, c, 1, width if len(row) == 1 else 1)
        scroll = QScrollArea(widgetResizable=True, frameShape=QFrame.Shape.NoFrame)
        scroll.setWidget(page)
        return scroll

    def set_shown(self, key: str, on: bool) -> None:
        """Show or leave out a view (a model without cross-attention has no cross map); a page is
        offered while any of its views is."""
        (self.left_out.discard if on else self.left_out.add)(key)
        self._show()

    def _show(self) -> None:
        """Each page's views shown or left out; a page left with one view is named after it."""
        tabs = self.step_tabs if self.side_by_side else self.tabs
        for (page, keys), (name, _rows, _stretch) in zip(self.step_pages, STEP_PAGES[self.screen_class]):
            shown = [key for key in keys if key not in self.left_out]
            for key in keys:
                self.views[key].setVisible(key in shown)
            tabs.setTabVisible(tabs.indexOf(page), bool(shown))
            tabs.setTabText(tabs.indexOf(page), VIEW_TITLES[shown[0]] if len(shown) == 1 < len(keys) else name)

    def view_of(self, page: QWidget | None) -> str:
        """The session's view a page shows: "steps" for the step's pages."""
        return next((key for key, name in OTHER_PAGES if self.views[key] is page), "steps")

    def show_view(self, view: str) -> None:
        """Bring the view forward (a step page already in front stays); side by side, "steps" shows
        the parallel pass beside the steps."""
        view = "parallel" if view == "steps" and self.side_by_side else view
        if self.view_of(self.tabs.currentWidget()) != view:
            with QSignalBlocker(self.tabs):
                self.tabs.setCurrentWidget(self.views[view] if view != "steps" else self.step_pages[0][0])
