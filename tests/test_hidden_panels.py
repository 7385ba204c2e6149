"""A panel hidden in a shown window (a tab behind another, a closed dock) draws no session change
while hidden, and draws the latest one, once, when shown; a panel outside a shown window (tests,
figures being built) draws every change at once."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QLabel, QTabWidget

from explorer.panels.base import Panel


class FakeState(QObject):
    """What `Panel.follow` reads of a session: its three signals and the values they carried."""

    bundleChanged = Signal(object)
    frameChanged = Signal(object)
    resultChanged = Signal(object)
    bundle = frame = result = None

    def change(self, name: str, value) -> None:
        """As the session does: the new value first, then its signal."""
        setattr(self, name, value)
        getattr(self, f"{name}Changed").emit(value)


class CountingPanel(Panel):
    """Records every call of its handlers, in order."""

    def __init__(self, state):
        super().__init__(state)
        self.calls: list[tuple[str, object]] = []
        self.follow(bundle=lambda b: self.calls.append(("bundle", b)),
                    frame=lambda f: self.calls.append(("frame", f)))


def _tabs(qtbot, state):
    tabs = QTabWidget()
    qtbot.addWidget(tabs)
    front, panel = QLabel("in front"), CountingPanel(state)
    tabs.addTab(front, "front")
    tabs.addTab(panel, "panel")
    tabs.show()
    qtbot.waitExposed(tabs)
    return tabs, panel


def test_a_hidden_panel_draws_no_frame_until_it_is_shown_then_the_latest_once(qtbot):
    state = FakeState()
    tabs, panel = _tabs(qtbot, state)
    assert not panel.isVisible()
    for frame in ("f1", "f2", "f3"):
        state.change("frame", frame)
    assert panel.calls == []
    tabs.setCurrentWidget(panel)
    assert panel.isVisible()
    assert panel.calls == [("frame", "f3")]
    state.change("frame", "f4")  # seen now: drawn at once
    assert panel.calls == [("frame", "f3"), ("frame", "f4")]
    tabs.setCurrentIndex(0)
    tabs.setCurrentWidget(panel)  # nothing new while hidden: nothing drawn again
    assert panel.calls == [("frame", "f3"), ("frame", "f4")]


def test_held_changes_are_drawn_in_the_order_their_latest_came(qtbot):
    state = FakeState()
    tabs, panel = _tabs(qtbot, state)
    state.change("frame", "old model's frame")
    state.change("bundle", "new model")  # after the frame: the panel must end on the new model
    panel.draw_now()  # what a figure or a test reading the hidden panel calls
    assert panel.calls == [("frame", "old model's frame"), ("bundle", "new model")]
    state.change("bundle", "third model")
    state.change("frame", "third model's frame")
    assert panel.wait_until_drawn()
    assert panel.calls[2:] == [("bundle", "third model"), ("frame", "third model's frame")]
    tabs.setCurrentWidget(panel)
    assert len(panel.calls) == 4  # drawn already: showing draws nothing twice


def test_held_changes_are_drawn_one_a_turn_once_shown(qtbot):
    """A new model and its frame, held back: the model with the show, its frame a turn later (two
    short turns of the event loop, not one long one)."""
    state = FakeState()
    tabs, panel = _tabs(qtbot, state)
    state.change("bundle", "new model")
    state.change("frame", "its frame")
    tabs.setCurrentWidget(panel)
    assert panel.calls == [("bundle", "new model")]
    qtbot.waitUntil(lambda: len(panel.calls) == 2, timeout=2000)
    assert panel.calls == [("bundle", "new model"), ("frame", "its frame")]


def test_a_panel_hidden_again_before_its_changes_are_drawn_waits_for_its_next_show(qtbot):
    """No timer left firing every turn for a panel nobody sees: the rest is drawn when it is shown."""
    state = FakeState()
    tabs, panel = _tabs(qtbot, state)
    state.change("bundle", "b1")
    state.change("frame", "f1")
    tabs.setCurrentWidget(panel)  # the bundle with the show; the frame would come a turn later
    tabs.setCurrentIndex(0)  # hidden again first
    qtbot.wait(50)
    assert panel.calls == [("bundle", "b1")] and not panel.seen.next_turn.isActive()
    tabs.setCurrentWidget(panel)
    assert panel.calls == [("bundle", "b1"), ("frame", "f1")]


def test_a_held_change_keeps_no_old_value_alive(qtbot):
    """What a hidden panel draws when shown is the session's value then: the frame of a model the
    session has replaced since (it drops its frame and says so with bundleChanged) is not kept."""
    import gc
    import weakref

    class Frame:
        pass

    state = FakeState()
    tabs, panel = _tabs(qtbot, state)
    old = Frame()
    gone = weakref.ref(old)
    state.change("frame", old)
    state.frame = None  # another model: the session drops the old one's frame …
    state.change("bundle", "new model")  # … and names the new model
    del old
    gc.collect()
    assert gone() is None
    tabs.setCurrentWidget(panel)
    assert panel.calls == [("bundle", "new model")]  # no frame yet: nothing to draw for it


def test_a_panel_outside_a_shown_window_draws_every_change_at_once(qtbot):
    state = FakeState()
    panel = CountingPanel(state)
    qtbot.addWidget(panel)
    state.change("frame", "f1")
    state.change("bundle", "b1")
    assert panel.calls == [("frame", "f1"), ("bundle", "b1")]


def test_a_hidden_training_panel_draws_its_curves_when_shown(qtbot):
    from explorer.panels.training.panel import TrainingPanel
    from explorer.state import SessionState
    from model.train.live_messages import MetricRows

    tabs = QTabWidget()
    qtbot.addWidget(tabs)
    panel = TrainingPanel(SessionState())
    tabs.addTab(QLabel("in front"), "front")
    tabs.addTab(panel, "training")
    tabs.show()
    qtbot.waitExposed(tabs)
    loss = panel.curves.curves["loss_raw"]
    panel.curves.add_rows(MetricRows.from_tuples([(s, 3.0 - s / 10, 0.5, 1e-3, 900.0, s / 10) for s in (1, 2, 3)]))
    panel.redraw()
    assert len(loss.getData()[0] if loss.getData()[0] is not None else []) == 0  # hidden: not handed to the plot
    tabs.setCurrentWidget(panel)
    x, y = loss.getData()
    assert list(x) == [1, 2, 3] and list(y) == pytest.approx([2.9, 2.8, 2.7])


def test_a_handler_that_reads_the_session_itself_is_called_without_values_seen_or_held(qtbot):
    state = FakeState()
    tabs, panel = _tabs(qtbot, state)
    reads = []
    panel.seen.follow(state.resultChanged, lambda: reads.append(state.result))
    state.change("result", "while hidden")
    state.change("result", "latest")
    assert reads == []
    tabs.setCurrentWidget(panel)
    qtbot.waitUntil(lambda: reads == ["latest"])  # once, on show
    state.change("result", "while shown")
    assert reads == ["latest", "while shown"]
