"""`DeferredPages`: a tab widget's pages, each built when its tab first becomes current or code
asks for it (`page(name)`), so a panel's first appearance builds one view, not all of them.
`on_built(name, widget)` lets the panel draw its current data into a page built late."""
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
        self._on_current(self.tabs.currentIndex())

    def build_all(self) -> list[QWidget]:
        return [self.page(name) for name in self._factories]

    def page(self, name: str) -> QWidget:
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
        return dict(self._built)

    def holder(self, name: str) -> QWidget:
        return self._holders[name]

    def name_of(self, index: int) -> str | None:
        widget = self.tabs.widget(index)
        return next((n for n, h in self._holders.items() if h is widget), None)

    def _on_current(self, index: int) -> None:
        name = self.name_of(index)
        if name is not None:
            self.page(name)

