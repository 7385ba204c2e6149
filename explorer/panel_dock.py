"""`PanelDock`: a panel's dock, whose tab says a short name and whose title bar the whole one.

Nine panels share the right dock area; with their full titles ("Compare checkpoints",
"Attention maps") Qt would elide every tab even on a wide screen, and no tab could be told
from another. Each panel class may name a short `tab_title`;
the dock's window title (what Qt writes on the tab) is that, its title bar and tooltip keep
the full `title`, and the tab bars never elide: where a window is too narrow for every tab,
scroll arrows appear instead of cut words.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QTabBar, QWidget


class PanelDock(QDockWidget):
    """A dock titled `tab_title` on its tab and `full_title` on its title bar."""

    def __init__(self, full_title: str, tab_title: str | None = None, parent: QWidget | None = None):
        super().__init__(tab_title or full_title, parent)
        self.full_title = full_title
        self.toggleViewAction().setText(full_title)  # the View menu names the whole panel

    def initStyleOption(self, option) -> None:  # noqa: N802 - Qt's name: the title bar Qt paints
        super().initStyleOption(option)
        option.title = self.full_title


def full_title(dock: QDockWidget) -> str:
    """The panel's whole name (menus, the presentation chooser, export)."""
    return getattr(dock, "full_title", None) or dock.windowTitle()


def readable_tab_bars(window) -> None:
    """Every dock tab bar of `window`: whole words (no eliding; scroll arrows where the window
    is too narrow), and the full title as each tab's tooltip. Qt makes and re-uses these bars
    as docks are re-tabbed, so this runs after every change of the dock layout."""
    titles = {d.windowTitle(): full_title(d) for d in window.findChildren(QDockWidget)}
    for bar in window.findChildren(QTabBar, options=Qt.FindDirectChildrenOnly):
        if bar.elideMode() != Qt.ElideNone:
            bar.setElideMode(Qt.ElideNone)
            bar.setUsesScrollButtons(True)
        for i in range(bar.count()):
            whole = titles.get(bar.tabText(i))
            if whole is not None and bar.tabToolTip(i) != whole:
                bar.setTabToolTip(i, whole)
