"""`WhenSeen`: a widget's session handlers run at once while it can be seen, and otherwise once,
with the latest value of each, when it is shown. A panel tabbed away or closed in a shown window
draws no frame that nobody sees; a widget outside any shown window (a test, a figure still being
built) draws every value at once, as before."""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget


def unseen(widget: QWidget) -> bool:
    """In a shown window but not shown itself (a hidden tab, a closed dock)."""
    window = widget.window()
    return window is not widget and window.isVisible() and not widget.isVisible()


class _Relay(QObject):
    """One signal's `draw`: a QObject child, so Qt drops the connection with the widget."""

    def __init__(self, gate: WhenSeen, draw: Callable[[], bool]):
        super().__init__(gate)
        self.gate, self.draw = gate, draw

    def receive(self, *_values) -> None:
        """Drawn now (from the session's value, the one just sent), or held back."""
        if not self.gate.hold(self):
            self.draw()


class WhenSeen(QObject):
    """Holds back the session's changes while `watched` cannot be seen; draws the latest of each,
    in the order they came, when it is shown: the first with the show, each other one in a turn
    of the event loop of its own (a new model, then its frame: not one long turn). `draw_now`
    draws them all at once."""

    def __init__(self, watched: QWidget):
        super().__init__(watched)
        self.watched = watched
        self.pending: list[_Relay] = []  # in the order of their last change: no value is held
        self.next_turn = QTimer(self, singleShot=True, interval=0)
        self.next_turn.timeout.connect(self.catch_up_one)
        watched.installEventFilter(self)

    def follow(self, signal, handler: Callable, current: Callable[[], object] | None = None) -> None:
        """On `signal`, `handler(current())` (the session's value: nothing held keeps an old model or
        frame alive) when the widget can be seen, else when it is shown; without `current`, `handler()`."""
        def draw() -> bool:  # False: the session has no value to draw (None)
            value = current() if current is not None else ()
            if value is not None:
                handler(value) if current is not None else handler()
            return value is not None

        signal.connect(_Relay(self, draw).receive)

    def unseen(self) -> bool:
        return unseen(self.watched)

    def hold(self, relay: _Relay) -> bool:
        """Whether `relay`'s change waits for the widget to be shown (it then moves to the end)."""
        if relay in self.pending:
            self.pending.remove(relay)
        if self.unseen():
            self.pending.append(relay)
            return True
        return False

    def draw_now(self) -> None:
        """Draw what was held back (a figure or a test reading a hidden panel)."""
        self.next_turn.stop()
        held, self.pending = self.pending, []
        for relay in held:
            relay.draw()

    def catch_up_one(self) -> None:
        """Draw the earliest change held back; the next one in the next turn while still seen
        (hidden again, the rest waits for the next show, not a timer that fires every turn)."""
        drawn = False
        while self.pending and not drawn and not self.unseen():
            drawn = self.pending.pop(0).draw()
        if self.pending and not self.unseen():
            self.next_turn.start()

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt's name
        if watched is self.watched and event.type() == QEvent.Type.Show and self.pending:
            self.catch_up_one()
        return False
