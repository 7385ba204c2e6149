"""`LazyPanels`: the window's panels by name, each built the first time its dock is shown or code
asks for it; a panel draws the session's current state when built, so a late one shows the same
picture an early one would, and start-up does not pay for eleven panels.

A dock shown by a scene or a restored layout asks for its panel with `build_soon`: the panels
so asked are built one per event-loop turn, after the turn that showed them, so a scene that
reveals three panels is four short turns (the input stays live between them), not one long one.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QWidget


class LazyPanels(Mapping):
    """name → panel; `built(name)` peeks without building, `build_all()` builds every one,
    `build_soon(name)` builds it in a later event-loop turn (one panel a turn)."""

    def __init__(self, names: Iterable[str], build: Callable[[str], QWidget], parent: QObject | None = None,
                 still_wanted: Callable[[str], bool] = lambda _name: True):
        self._names = list(names)
        self._build = build
        self._built: dict[str, QWidget] = {}
        self._soon: list[str] = []  # asked for by build_soon, oldest first
        self._still_wanted = still_wanted  # checked when its turn comes (a dock hidden again: not built)
        self._timer = QTimer(parent, singleShot=True, interval=0)  # (a child of the window: dies with it)
        self._timer.timeout.connect(self._build_next)

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

    def build_soon(self, name: str) -> None:
        """Build `name` in a later turn of the event loop (asking again for a queued one keeps its place)."""
        if name in self._names and name not in self._built and name not in self._soon:
            self._soon.append(name)
            self._timer.start()

    @property
    def pending(self) -> list[str]:
        """The panels asked for by `build_soon` and not built yet, in the order they will be."""
        return [name for name in self._soon if name not in self._built]

    def _build_next(self) -> None:
        """One panel this turn; a timer (not a posted event) for the next, so the event loop's
        timers and input run between two builds."""
        while self._soon:
            name = self._soon.pop(0)
            if name not in self._built and self._still_wanted(name):
                self[name]
                break
        if self._soon:
            self._timer.start()
