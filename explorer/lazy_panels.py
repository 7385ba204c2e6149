"""`LazyPanels`: the window's panels by name, each built the first time its dock is shown or code
asks for it; a panel draws the session's current state when built, so a late one shows the same
picture an early one would, and start-up does not pay for eleven panels.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from PySide6.QtWidgets import QWidget


class LazyPanels(Mapping):
    """name → panel; `built(name)` peeks without building, `build_all()` builds every one."""

    def __init__(self, names: Iterable[str], build: Callable[[str], QWidget]):
        self._names = list(names)
        self._build = build
        self._built: dict[str, QWidget] = {}

    def __getitem__(self, name: str) -> QWidget:
        if name not in self._names:
            raise KeyError(name)
        if name not in self._built:
            self._built[name] = self._build(name)
        return self._built[name]

    def __contains__(self, name) -> bool:
        return name in self._names

    def __iter__(self):
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def built(self, name: str) -> QWidget | None:
        """The panel if it has been built, else None (shutting down need not build one)."""
        return self._built.get(name)

    def build_all(self) -> list[QWidget]:
        return [self[name] for name in self._names]
