"""`DeferredPages`: a tab widget's pages built when they are needed, not all with their panel.

A panel with several views in tabs shows one of them; building every view's plots with the
panel makes its first appearance one long turn of the event loop, and building the hidden ones
later, unasked, only moves that work into turns where the user does something else. Here each
page starts as an empty placeholder and is built when its tab becomes current or code asks for
it (`page(name)`); a view nobody opens costs nothing. `on_built(name, widget)` lets the panel
draw its current data into a page that comes late; the panel draws only the pages
`built_pages()` lists.
"""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QTabWidget, QVBoxLayout, QWidget


class DeferredPages(QObject):
    """Pages of `tabs` by name, each made by its factory the first time it is needed."""

    def __init__(self, tabs: QTabWidget, on_built: Callable[[str, QWidget], None] | None = None):
        super().__init__(tabs)  # (dies with the tabs)
        self.tabs = tabs
        self.on_built = on_built
        self._factories: dict[str, Callable[[], QWidget]] = {}
        self._holders: dict[str, QWidget] = {}
        self._built: dict[str, QWidget] = {}
        tabs.currentChanged.connect(self._on_current)

    def add(self, name: str, title: str, factory: Callable[[], QWidget]) -> None:
        """A page called `name`, titled `title` on its tab, built by `factory()` when needed."""
        holder = QWidget()
        layout = QVBoxLayout(holder)
        layout.setContentsMargins(0, 0, 0, 0)
        self._factories[name], self._holders[name] = factory, holder
        self.tabs.addTab(holder, title)

    def start(self) -> None:
        """Build the current page (the others wait until shown or asked for)."""
        self._on_current(self.tabs.currentIndex())

    def build_all(self) -> list[QWidget]:
        """Every page, built now (a figure or a check that needs them all)."""
        return [self.page(name) for name in self._factories]

    def page(self, name: str) -> QWidget:
        """The page's widget, built now if it was not yet."""
        if name not in self._built:
            widget = self._factories[name]()
            self._built[name] = widget
            holder = self._holders[name]
            holder.layout().addWidget(widget)
            widget.show()  # (a layout shows a late child only in a later turn)
            holder.layout().activate()  # its geometry now, as a page added to the tabs would have
            if self.on_built is not None:
                self.on_built(name, widget)
        return self._built[name]

    def built_pages(self) -> dict[str, QWidget]:
        """name → widget of the pages built so far (the ones to draw now)."""
        return dict(self._built)

    def holder(self, name: str) -> QWidget:
        """The tab's own widget for `name` (what `QTabWidget.setCurrentWidget` takes)."""
        return self._holders[name]

    def name_of(self, index: int) -> str | None:
        widget = self.tabs.widget(index)
        return next((n for n, h in self._holders.items() if h is widget), None)

    def _on_current(self, index: int) -> None:
        name = self.name_of(index)
        if name is not None:
            self.page(name)


__all__ = ["DeferredPages"]
