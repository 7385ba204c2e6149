"""The dock tabs are readable: every tab's text whole, measured with QFontMetricsF against the
tab's rectangle (Qt's own rule: a tab is its text's advance plus PM_TabBarTabHSpace wide, and
narrower only when Qt elides it).

At 1920×1080 all nine right-hand tabs (and the two left ones) must be whole and on screen at
once; in a narrower window (1280×800, the default) the text stays whole and Qt scrolls the bar
instead. Each tab's tooltip and its dock's title bar carry the panel's full title.
"""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import QSettings, Qt  # noqa: E402
from PySide6.QtGui import QFontMetricsF  # noqa: E402
from PySide6.QtWidgets import QApplication, QStyle, QStyleOptionDockWidget, QStyleOptionTab, QTabBar  # noqa: E402


@pytest.fixture(scope="module")
def window(qapp, tmp_path_factory):
    from explorer.launch import close_window
    from explorer.main_window import MainWindow
    from explorer.runner import Runner
    from explorer.state import SessionState
    from explorer import style
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


def tab_problems(bar: QTabBar, all_on_screen: bool) -> list[str]:
    metrics = QFontMetricsF(bar.font())
    problems = []
    for i in range(bar.count()):
        option = QStyleOptionTab()
        bar.initStyleOption(option, i)
        space = bar.style().pixelMetric(QStyle.PM_TabBarTabHSpace, option, bar)
        need = metrics.horizontalAdvance(bar.tabText(i)) + space
        rect = bar.tabRect(i)
        if rect.width() + 1 < need:
            problems.append(f"tab {bar.tabText(i)!r}: {rect.width()} px wide, its text needs {need:.0f}")
        if all_on_screen and (rect.left() < 0 or rect.right() > bar.width()):
            problems.append(f"tab {bar.tabText(i)!r} at {rect.left()}…{rect.right()} outside its bar ({bar.width()} px)")
    return problems


def test_every_tab_whole_and_on_screen_at_1920(window):
    window.resize(1920, 1080)
    bars = shown_tab_bars(window)
    tabs = sum(b.count() for b in bars)
    assert tabs == len(window.docks)  # every panel's dock is a tab: nine on the right, two on the left
    problems = [p for b in bars for p in tab_problems(b, all_on_screen=True)]
    assert not problems, "\n".join(problems)


def test_narrow_window_scrolls_tabs_instead_of_cutting_words(window):
    window.resize(1280, 800)
    problems = [p for b in shown_tab_bars(window) for p in tab_problems(b, all_on_screen=False)]
    assert not problems, "\n".join(problems)


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
