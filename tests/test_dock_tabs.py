"""The dock tabs name their panels: short titles that stay distinct, each tab's tooltip, its
dock's title bar and the View menu's entry carrying the panel's full title."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import QSettings, Qt  # noqa: E402
from PySide6.QtWidgets import QApplication, QStyleOptionDockWidget, QTabBar  # noqa: E402


@pytest.fixture(scope="module")
def window(qapp, tmp_path_factory):
    from explorer import style
    from explorer.launch import close_window
    from explorer.main_window import MainWindow
    from explorer.runner import Runner
    from explorer.state import SessionState
    kept = (qapp.style().name(), qapp.font(), qapp.palette(), qapp.styleSheet())
    style.apply_app_style(qapp)  # the real application's fonts (12 pt): the tabs' text as a user sees it
    state = SessionState()
    settings = QSettings(str(tmp_path_factory.mktemp("tabs") / "s.ini"), QSettings.IniFormat)
    w = MainWindow(state, Runner(state, synchronous=True), settings=settings, restore=False, persist=False)
    w.show()
    yield w
    close_window(qapp, w)
    qapp.setStyle(kept[0])
    qapp.setFont(kept[1])
    qapp.setPalette(kept[2])
    qapp.setStyleSheet(kept[3])


def shown_tab_bars(window) -> list[QTabBar]:
    for _ in range(4):
        QApplication.processEvents()
    return [b for b in window.findChildren(QTabBar, options=Qt.FindDirectChildrenOnly) if b.isVisible() and b.count()]


def test_tooltips_and_title_bars_carry_the_full_title(window):
    from explorer.panels import panel_classes
    full = {cls.panel_name: cls.title for cls in panel_classes()}
    by_tab = {d.windowTitle(): name for name, d in window.docks.items()}
    assert len(by_tab) == len(window.docks)  # short titles stay distinct
    for bar in shown_tab_bars(window):
        for i in range(bar.count()):
            assert bar.tabToolTip(i) == full[by_tab[bar.tabText(i)]]
    for name, dock in window.docks.items():
        option = QStyleOptionDockWidget()
        dock.initStyleOption(option)  # what the dock's title bar paints
        assert option.title == full[name]
        assert dock.toggleViewAction().text() == full[name]  # the View menu's entry
