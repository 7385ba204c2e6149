"""`DeferredPages`: a tab widget's pages, each built when its tab first becomes current or code
asks for it (`page(name)`), so a panel's first appearance builds one view, not all of them.
`on_built(name, widget)` lets the panel draw its current data into a page built late."""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QTabWidget, QVBoxLayout, QWidget

from explorer.panel_dock import LazyPanels


class DeferredPages(LazyPanels):
    """Pages of `tabs` by name, each made by its factory the first time it is needed."""

    def __init__(self, tabs: QTabWidget, on_built: Callable[[str, QWidget], None] | None = None):
        super().__init__([], self._build_page, tabs)
        self.tabs = tabs
        self.on_built = on_built
        self._factories: dict[str, Callable[[], QWidget]] = {}
        self._holders: dict[str, QWidget] = {}
        tabs.currentChanged.connect(self._on_current)

    def add(self, name: str, title: str, factory: Callable[[], QWidget]) -> None:
        """A page called `name`, titled `title` on its tab, built by `factory()` when needed."""
        holder = QWidget()
        QVBoxLayout(holder).setContentsMargins(0, 0, 0, 0)
        self._names.append(name)
        self._factories[name], self._holders[name] = factory, holder
        self.tabs.addTab(holder, title)

    def start(self) -> None:
        self._on_current(self.tabs.currentIndex())

    def page(self, name: str) -> QWidget:
        return self[name]

    def built_pages(self) -> dict[str, QWidget]:
        return dict(self._built)

    def holder(self, name: str) -> QWidget:
        return self._holders[name]

    def _build_page(self, name: str) -> QWidget:
        widget = self._built[name] = self._factories[name]()  # (known before `on_built` draws into it)
        layout = self._holders[name].layout()
        layout.addWidget(widget)
        widget.show()  # (a layout shows a late child only in a later turn)
        layout.activate()  # its geometry now, as a page added to the tabs would have
        if self.on_built is not None:
            self.on_built(name, widget)
        return widget

    def _on_current(self, index: int) -> None:
        """The page whose tab became current, built now."""
        for name, holder in self._holders.items():
            if holder is self.tabs.widget(index):
                self.page(name)
