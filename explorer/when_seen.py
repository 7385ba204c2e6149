"""`WhenSeen`: a widget's session handlers run at once while it can be seen, and otherwise once,
with the latest value of each, when it is shown. A panel tabbed away or closed in a shown window
draws no frame that nobody sees; a widget outside any shown window (a test, a figure still being
built) draws every value at once, as before."""
from __future__ import annotations

import itertools
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QWidget


def unseen(widget: QWidget) -> bool:
    """In a shown window but not shown itself (a hidden tab, a closed dock)."""
    window = widget.window()
    return window is not widget and window.isVisible() and not widget.isVisible()


class _Relay(QObject):
    """One signal's handler: a QObject child, so Qt drops the connection with the widget."""

    def __init__(self, gate: WhenSeen, handler: Callable, current: Callable[[], object] | None):
        super().__init__(gate)
        self.gate = gate
        self.handler = handler
        self.current = current

    def receive(self, *values) -> None:
        self.gate.deliver(self, values)

    def catch_up(self, values: tuple | None) -> None:
        """Draw what was held back: the session's value now where there is a `current`."""
        if self.current is None:
            self.handler(*values)
        elif (value := self.current()) is not None:
            self.handler(value)


class WhenSeen(QObject):
    """Holds back the session's changes while `watched` cannot be seen; draws the latest of each,
    in the order they came, when it is shown (or `draw_now` is called)."""

    def __init__(self, watched: QWidget):
        super().__init__(watched)
        self.watched = watched
        self.pending: dict[int, tuple[int, _Relay, tuple | None]] = {}  # relay id → (arrival, relay, values)
        self.arrivals = itertools.count()
        watched.installEventFilter(self)

    def follow(self, signal, handler: Callable, current: Callable[[], object] | None = None) -> None:
        """Call `handler(*values)` for what `signal` sends, when the widget can be seen. With
        `current` (the session's value now), a change held back is drawn with `current()`, so
        nothing held keeps an old value (a replaced model's frame) alive."""
        relay = _Relay(self, handler, current)
        signal.connect(relay.receive)

    def unseen(self) -> bool:
        return unseen(self.watched)

    def deliver(self, relay: _Relay, values: tuple) -> None:
        if self.unseen():
            self.pending[id(relay)] = (next(self.arrivals), relay, values if relay.current is None else None)
            return
        self.pending.pop(id(relay), None)
        relay.handler(*values)

    def draw_now(self) -> None:
        """Draw what was held back (a figure or a test reading a hidden panel)."""
        held = sorted(self.pending.values(), key=lambda entry: entry[0])
        self.pending.clear()
        for _arrival, relay, values in held:
            relay.catch_up(values)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt's name
        if watched is self.watched and event.type() == QEvent.Type.Show and self.pending:
            self.draw_now()
        return False
