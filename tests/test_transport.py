"""`Transport` on its own: it asks for positions (`moved`) and shows only what its owner shows;
play walks to the last position and stops there; the ends disable the way past them."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from explorer.panels.transport import Transport  # noqa: E402


def owned(qtbot, n: int) -> tuple[Transport, list[int]]:
    """A transport whose owner shows every position asked for, as the panels do."""
    transport, shown = Transport(5), []
    qtbot.addWidget(transport)

    def show(i: int) -> None:
        shown.append(i)
        transport.show_position(i, n)

    transport.moved.connect(show)
    transport.show_position(0, n)
    return transport, shown


def test_buttons_ask_for_positions_within_the_range(qtbot):
    transport, shown = owned(qtbot, 5)
    assert not transport.back.isEnabled() and transport.counter.text().strip() == "1 / 5"
    transport.next.click()
    transport.last.click()
    assert shown == [1, 4] and not transport.next.isEnabled() and transport.back.isEnabled()
    transport.back.click()
    transport.first.click()
    assert shown == [1, 4, 3, 0] and transport.counter.text().strip() == "1 / 5"


def test_play_walks_to_the_last_position_and_stops(qtbot):
    transport, shown = owned(qtbot, 4)
    transport.show_position(3, 4)
    transport.play.click()  # at the end: from the start again
    assert transport.timer.isActive() and transport.play.text() == "Pause"
    qtbot.waitUntil(lambda: not transport.timer.isActive(), timeout=3000)
    assert shown == [0, 1, 2, 3] and transport.play.text() == "Play"


def test_nothing_to_walk_plays_nothing(qtbot):
    transport, shown = owned(qtbot, 0)
    transport.play.click()
    assert not transport.timer.isActive() and shown == [] and transport.counter.text() == "– / –"
