"""`DecodeTabs`: the decoding panel's views in tabs: the step's plots grouped as each screen class
declares (STEP_PAGES) out of those the model has, then the parallel pass and the beam tree; side by
side, the step's pages in tabs of their own on the left. A page scrolls rather than shrink a plot
below its least size."""
from __future__ import annotations

from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import QFrame, QGridLayout, QScrollArea, QSplitter, QTabWidget, QWidget

from explorer.screen import ScreenClass

MAP_LEAST = (230, 200)   # a map's widget: its title, token axes and a ≥ 160 × 120 plot area
BARS_LEAST_HEIGHT = 200  # the bars' widget: caption, token labels and a ≥ 120 px high plot area
VIEW_TITLES = {"mask": "Mask", "self": "Self-attention", "cross": "Cross-attention", "bars": "Next token"}
NEEDS = {"cross": "cross"}  # a view → the attention kind the model must have for it
# class → the step's pages: (tab name, rows of views, the rows' stretch)
STEP_PAGES = {
    ScreenClass.WIDE: (("Step by step (autoregressive)", (("mask", "self", "cross"), ("bars",)), (3, 2)),),
    ScreenClass.PROJECTOR: (("Self | cross attention", (("self", "cross"),), (1,)),
                            ("Mask | next token", (("mask", "bars"),), (1,))),
    ScreenClass.NARROW: tuple((name, ((key,),), (1,)) for key, name in VIEW_TITLES.items()),
}
OTHER_PAGES = (("parallel", "Masked vs. unmasked"), ("beam", "Beam tree"))  # (view, tab name): whole pages


def step_views(kinds) -> tuple[str, ...]:
    """The step's views a model with these attention kinds has (no cross map without cross-attention)."""
    return tuple(key for key in VIEW_TITLES if NEEDS.get(key, "decoder_self") in kinds)


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
        self.left_out = QWidget(self.tabs)  # holds the views no page shows (not a pane of the splitter)
        self.left_out.hide()
        self.step_pages: list[tuple[QWidget, tuple[str, ...]]] = []  # (page, its views)
        self.screen_class, self.side_by_side, self.shown = None, False, ()
        self.tabs.currentChanged.connect(lambda i: self.viewChosen.emit(self.view_of(self.tabs.widget(i))))
        self.arrange("steps", ScreenClass.PROJECTOR, True, step_views(("decoder_self", "cross")))

    def arrange(self, view: str | None, cls: ScreenClass | None = None, side_by_side: bool | None = None,
                shown: tuple[str, ...] | None = None) -> None:
        """Lay the `shown` step views out in the pages `cls` declares, beside the rest or among them,
        `view` in front (None keeps a setting; nothing moves when none changed: moving tabs is no
        choice of the user's). A page keeps only the views shown, is left out without any, and is
        named after its one view when only one is left."""
        wanted = (cls or self.screen_class, self.side_by_side if side_by_side is None else side_by_side,
                  self.shown if shown is None else shown)
        if wanted == (self.screen_class, self.side_by_side, self.shown):
            return
        cls, side_by_side, shown = wanted
        self.screen_class, self.side_by_side, self.shown = wanted
        old = [page for page, _views in self.step_pages]
        for key in ("mask", "self", "cross", "bars"):
            self.views[key].setParent(self.left_out)  # (a page that wants it takes it back)
        step_tabs = self.step_tabs if side_by_side else self.tabs
        with QSignalBlocker(self.tabs):
            for tabs in (self.step_tabs, self.tabs):
                tabs.clear()
            self.step_pages = []
            for name, rows, stretch in STEP_PAGES[cls]:
                kept = [(tuple(key for key in row if key in shown), share) for row, share in zip(rows, stretch)]
                kept = [(row, share) for row, share in kept if row]
                keys = sum((row for row, _share in kept), ())
                if keys:
                    self.step_pages.append((self._page(kept), keys))
                    step_tabs.addTab(self.step_pages[-1][0], VIEW_TITLES[keys[0]] if len(keys) == 1 else name)
            for key, name in OTHER_PAGES:
                self.tabs.addTab(self.views[key], name)
        for page in old:  # (emptied: its views live in the new pages)
            page.deleteLater()
        self.step_tabs.setVisible(side_by_side)
        self.show_view(view or "steps")

    def _page(self, rows) -> QWidget:
        """A scrolling page of (row of views, its stretch) pairs (a lone view in a row spans it)."""
        page = QWidget()
        grid = QGridLayout(page)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setSpacing(6)
        width = max(len(row) for row, _share in rows)
        for r, (row, share) in enumerate(rows):
            grid.setRowStretch(r, share)
            for c, key in enumerate(row):
                grid.addWidget(self.views[key], r, c, 1, width if len(row) == 1 else 1)
                self.views[key].show()
        scroll = QScrollArea(widgetResizable=True, frameShape=QFrame.Shape.NoFrame)
        scroll.setWidget(page)
        return scroll

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
