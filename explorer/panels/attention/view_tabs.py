"""`ViewTabs`: a panel's view tabs in step with the session's view of the panel: choosing a tab
sets the view (a scene saves it); a view set elsewhere (a scene, a tour) shows its tab."""
from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QTabWidget


class ViewTabs(QObject):
    """`views[i]` names tab i of `tabs`; `current` is the one shown."""

    def __init__(self, tabs: QTabWidget, state, panel: str, views: tuple[str, ...]):
        super().__init__(tabs)  # (its connections go with the tabs)
        self.tabs, self.state, self.panel, self.views = tabs, state, panel, views
        self.show_view(panel, state.session.view(panel) or views[0])  # asked for before the panel was built
        tabs.currentChanged.connect(self.on_tab)
        state.viewChanged.connect(self.show_view)

    @property
    def current(self) -> str:
        return self.views[self.tabs.currentIndex()]

    def on_tab(self, index: int) -> None:
        if 0 <= index < len(self.views):
            self.state.set_view(self.panel, self.views[index])

    def show_view(self, panel: str, view: str) -> None:
        if panel == self.panel and view in self.views and self.current != view:
            self.tabs.setCurrentIndex(self.views.index(view))
