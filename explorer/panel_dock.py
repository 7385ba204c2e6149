"""Where a panel lives: its dock (a short name on its tab, the whole on its title bar), its scroll
area, the panels built when first shown, and the dock layout's constants."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from PySide6.QtCore import QEvent, QObject, QSize, QTimer
from PySide6.QtWidgets import QAbstractScrollArea, QDockWidget, QFrame, QScrollArea, QWidget

LAYOUT_VERSION = 2  # bump when the default layout changes so old saved layouts are not restored
LEFT_PANELS = ("architecture", "positional", "modern")  # the diagrams; the rest share the right side

# The View menu's sections: the panels by what a lecture uses them for (others are listed at the end).
CHAPTERS = (
    ("The paper", ("architecture", "step", "attention", "positional", "decoding", "training")),
    ("Inside a trained model", ("heads", "lens", "attribution", "compare", "leak")),
    ("Causal experiments", ("patching", "atlas", "induction")),
    ("Since 2017", ("modern", "kvcache", "sampling")),
)


class PanelDock(QDockWidget):
    """A dock titled `tab_title` on its tab and `full_title` on its title bar."""

    def __init__(self, full_title: str, tab_title: str | None = None, parent: QWidget | None = None, **options):
        super().__init__(tab_title or full_title, parent, **options)
        self.full_title = full_title
        self.toggleViewAction().setText(full_title)  # the View menu names the whole panel

    def initStyleOption(self, option) -> None:  # noqa: N802 - Qt's name: the title bar Qt paints
        super().initStyleOption(option)
        option.title = self.full_title


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
        """The panel, built late (LazyPanels), where the placeholder was."""
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
        """The panel's minimum changed: fit it again."""
        if watched is self.widget() and event.type() == QEvent.Type.LayoutRequest:
            self._fit()
        return super().eventFilter(watched, event)

    def _fit(self) -> None:
        """The viewport's size, or the panel's minimum where larger (less a needed scroll bar)."""
        panel, view = self.widget(), self.maximumViewportSize()
        least = panel.minimumSizeHint().expandedTo(panel.minimumSize())
        width, height = view.width(), view.height()
        if least.height() > height:
            width -= self.verticalScrollBar().sizeHint().width()
        if least.width() > width:
            height -= self.horizontalScrollBar().sizeHint().height()
        panel.resize(max(width, least.width()), max(height, least.height()))


def offered_room(panel) -> QSize:
    """The room the dock of `panel` offers (its scroll area's viewport), else its own size."""
    viewport = panel.parentWidget()
    scroll = viewport.parentWidget() if viewport is not None else None
    if isinstance(scroll, QAbstractScrollArea):
        return scroll.maximumViewportSize()
    return panel.size()


class LazyPanels(Mapping):
    """The window's panels by name, each built when its dock is first shown or code asks for it.
    `built(name)` peeks; `build_soon(name)` builds in a later event-loop turn, one panel a turn."""

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
        """The panel if it has been built, else None."""
        return self._built.get(name)

    def build_all(self) -> list[QWidget]:
        return [self[name] for name in self._names]

    def build_soon(self, name: str) -> None:
        """Build `name` in a later turn (asking again for a queued one keeps its place)."""
        if name in self._names and name not in self._built and name not in self._soon:
            self._soon.append(name)
            self._timer.start()

    def _build_next(self) -> None:
        """One panel this turn; a timer for the next, so input runs between two builds."""
        while self._soon:
            name = self._soon.pop(0)
            if name not in self._built and self._still_wanted(name):
                self[name]
                break
        if self._soon:
            self._timer.start()
