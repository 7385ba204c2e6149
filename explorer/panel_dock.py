"""A panel's dock and its scroll area: the tab says a short name (`tab_title`), the title bar
the whole one, and tab bars never elide (scroll arrows instead of cut words)."""
from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QDockWidget, QFrame, QScrollArea, QTabBar, QWidget


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
    """Every dock tab bar of `window`: whole words (scroll arrows where too narrow) and the full
    title as each tab's tooltip (Qt re-makes these bars: run after every dock layout change)."""
    titles = {d.windowTitle(): full_title(d) for d in window.findChildren(QDockWidget)}
    for bar in window.findChildren(QTabBar, options=Qt.FindDirectChildrenOnly):
        if bar.elideMode() != Qt.ElideNone:
            bar.setElideMode(Qt.ElideNone)
            bar.setUsesScrollButtons(True)
        for i in range(bar.count()):
            whole = titles.get(bar.tabText(i))
            if whole is not None and bar.tabToolTip(i) != whole:
                bar.setTabToolTip(i, whole)


class PanelScroll(QScrollArea):
    """A panel larger than its dock scrolls instead of forcing the window larger; otherwise it
    gets exactly the viewport's size (unlike `widgetResizable`), so stretchable plots fill it."""

    def __init__(self, panel: QWidget | None = None):
        super().__init__()
        self.setWidget(panel if panel is not None else QWidget())  # None: the panel comes later (place)
        self.setWidgetResizable(False)
        self.setFrameShape(QFrame.NoFrame)
        self.widget().installEventFilter(self)

    def place(self, panel: QWidget) -> None:
        """Put the panel, built late (see LazyPanels), where the empty placeholder was."""
        old = self.takeWidget()
        self.setWidget(panel)
        panel.installEventFilter(self)
        if old is not None:
            old.removeEventFilter(self)
            old.deleteLater()
        panel.resize(self.maximumViewportSize())
        self._fit()

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._fit()

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt's name
        """The panel's minimum changed: fit it again (a shrunk minimum gives the room back)."""
        if watched is self.widget() and event.type() == QEvent.Type.LayoutRequest:
            self._fit()
        return super().eventFilter(watched, event)

    def _fit(self) -> None:
        """The viewport's size, or the panel's minimum where that is larger; a scroll bar needed
        in one direction takes its breadth from the other."""
        panel, view = self.widget(), self.maximumViewportSize()
        least = panel.minimumSizeHint().expandedTo(panel.minimumSize())
        width, height = view.width(), view.height()
        if least.height() > height:
            width -= self.verticalScrollBar().sizeHint().width()
        if least.width() > width:
            height -= self.horizontalScrollBar().sizeHint().height()
        panel.resize(max(width, least.width()), max(height, least.height()))
