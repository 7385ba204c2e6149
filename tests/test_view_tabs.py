"""A panel's view tabs follow the session's view of the panel and set it (explorer.panels.attention.view_tabs)."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QLabel, QTabWidget  # noqa: E402

from explorer.panels.attention.view_tabs import ViewTabs  # noqa: E402
from explorer.state import SessionState  # noqa: E402

VIEWS = ("maps", "outputs", "heads")


def _tabs(qtbot) -> QTabWidget:
    tabs = QTabWidget()
    qtbot.addWidget(tabs)
    for name in VIEWS:
        tabs.addTab(QLabel(name), name)
    return tabs


def test_the_tab_shown_is_the_sessions_view_both_ways(qtbot):
    state = SessionState()
    state.set_view("compare", "heads")  # a scene's view, set before the panel is built
    tabs = _tabs(qtbot)
    view_tabs = ViewTabs(tabs, state, "compare", VIEWS)
    assert tabs.currentIndex() == VIEWS.index("heads") and view_tabs.current == "heads"
    tabs.setCurrentIndex(VIEWS.index("outputs"))
    assert state.session.view("compare") == "outputs"
    state.set_view("compare", "maps")
    assert view_tabs.current == "maps"
    state.set_view("attention", "heads")  # another panel's view, or a view this panel lacks: no change
    state.set_view("compare", "nothing")
    assert view_tabs.current == "maps"
