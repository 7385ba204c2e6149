"""`SplitPages`: a panel's pages side by side in one row, or a tab each where the room is short
(the panel decides by its screen class or its dock's width); pages that always stand alone follow
as tabs of their own. A single tab shows no tab bar."""
from __future__ import annotations

from PySide6.QtWidgets import QTabWidget, QWidget

from explorer.panels.layouts import row


class SplitPages(QTabWidget):
    def __init__(self, pages: list[tuple[QWidget, str, int]], together: str = "",
                 alone: tuple[tuple[QWidget, str], ...] = (), parent=None, **options):
        """`pages`: (page, its tab's title, its share of the row); `together`: the row's tab title;
        `options`: QTabWidget's properties."""
        super().__init__(parent, tabBarAutoHide=True, **options)
        self.pages, self.together, self.alone = list(pages), together, alone
        self.row_page = QWidget(autoFillBackground=True)  # the window's colour, not the style's tab pane
        self.row = row(parent=self.row_page, margins=0)
        self.apart: bool | None = None
        self.set_apart(False)

    def set_apart(self, apart: bool) -> None:
        """A tab each (True) or side by side (False); a standalone page that was chosen stays chosen."""
        if apart == self.apart:
            return
        self.apart = apart
        chosen = self.currentWidget()
        self.clear()
        for page, title, stretch in self.pages:
            if apart:
                self.addTab(page, title)
            else:
                self.row.addWidget(page, stretch)
                page.setVisible(True)  # (a tab widget hides the pages it does not show)
        if not apart:
            self.addTab(self.row_page, self.together)
        for page, title in self.alone:
            self.addTab(page, title)
        self.setCurrentWidget(chosen if chosen in (page for page, _ in self.alone) else self.widget(0))

    def share_row(self, stretches: list[int]) -> None:
        """Each page's share of the row when side by side (kept for the next time, when apart)."""
        self.pages = [(page, title, share) for (page, title, _), share in zip(self.pages, stretches)]
        for page, _, share in self.pages:
            self.row.setStretchFactor(page, share)
