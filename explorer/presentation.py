"""Lecture mode: full screen, one panel at a time, the same session at a larger base font (the font
roles of `explorer.style` times the scale; canvases by `plot_style.restyle_view`), a light or dark
theme; scale and theme persist in QSettings."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QObject, QSettings, QSignalBlocker, Qt, QTimer, Signal
from PySide6.QtWidgets import QApplication, QWidget
from shiboken6 import isValid

from explorer import style, theme
from explorer.drawing import plot_style
from explorer.drawing.plot_style import SCALE_PROPERTY, restyle_view
from explorer.eliding_combo import ElidingComboBox

SCALE_KEY = "presentation/scale"
THEME_KEY = "appearance/theme"
SWITCHER_CHARS = 12  # the panel chooser's width in characters: "Architecture" whole
FRONT_PANEL = "architecture"  # presenting opens, and Exit tour returns, on Figure 1 with the tour offered
DEFAULT_SCALE = 1.5  # 12 pt → 18 pt: legible from the back of a large room
THEMES = theme.PALETTES
applied_scale = style.scale  # the scale in use (panels read it here)
# The main windows whose plots a theme / scale change reaches: only our own live windows, never
# `QApplication.allWidgets()` (it can hold widgets of closed windows awaiting deletion, and touching
# those aborts the process).
_windows: list[QWidget] = []


def read_scale(settings: QSettings) -> float:
    """The persisted presentation scale; a corrupt value falls back to the default."""
    try:
        value = float(settings.value(SCALE_KEY, DEFAULT_SCALE))
    except (TypeError, ValueError):
        return DEFAULT_SCALE
    return value if style.SCALES[0] <= value <= style.SCALES[1] else DEFAULT_SCALE


def read_theme(settings: QSettings) -> str:
    value = settings.value(THEME_KEY, "light")
    return value if value in THEMES else "light"


# -- the windows a theme or scale reaches ---------------------------------------------------------
def windows() -> list[QWidget]:
    """The main windows (each registered by its presentation mode) still alive."""
    _windows[:] = [window for window in _windows if isValid(window)]
    return list(_windows)


def plot_views() -> list[pg.GraphicsView]:
    return [v for window in windows() for v in window.findChildren(pg.GraphicsView)]


# -- theme and scale ------------------------------------------------------------------------------
def apply_theme(app: QApplication, name: str) -> theme.Palette:
    """The theme's palette, and the style sheet of it and of the font roles at the scale in use, for
    every widget; its colours and the scale for every plot and view."""
    if name not in THEMES:
        raise ValueError(f"unknown theme {name!r}; themes: {', '.join(THEMES)}")
    p = THEMES[name]
    theme.set_current(name)  # listeners (the diagram, …) recolour their items
    app.setPalette(theme.qpalette(p))
    sheet = style.app_sheet(applied_scale())
    if app.styleSheet() != sheet:  # an app-wide sheet re-polishes every widget: only when it changes
        app.setStyleSheet(sheet)
    pg.setConfigOptions(background=p.canvas, foreground=p.text)
    widgets = [w for window in windows() for w in (window, *window.findChildren(QWidget))]
    theme.refresh_sheets(widgets)
    restyle_plots(p)
    for widget in widgets:
        widget.update()
    for window in windows():  # views that pick colours per update redraw
        if window.state.result is not None:
            window.state.stepChanged.emit(window.state.step)
    return p


def restyle_plots(p: theme.Palette | None = None) -> None:
    """Every pyqtgraph canvas in the palette's colours (again after a panel reset its titles)."""
    for view in plot_views():
        plot_style.restyle_view(view, p or theme.current())


def set_scale(app: QApplication, factor: float) -> bool:
    """The base font at `factor` × normal (the roles' sheet follows in `apply_theme`); each canvas
    keeps the scale it is drawn at until `restyle_view`. Returns whether the scale changed."""
    old = style.scale()
    if abs(style.set_scale(factor) - old) < 1e-6:
        return False
    for view in plot_views():  # (a canvas never restyled is at the old scale)
        if not view.property(SCALE_PROPERTY):
            view.setProperty(SCALE_PROPERTY, old)
    app.setFont(style.role_font("body"))
    return True


def build_at_normal_size(make):
    """`make()` run at the normal size, then its canvases redrawn at the size in use: a widget's own
    font is what it gets back when the presentation's sizes go."""
    factor = style.scale()
    if factor == 1.0:
        return make()
    style.set_scale(1.0)
    try:
        widget = make()
    finally:
        style.set_scale(factor)
    for view in widget.findChildren(pg.GraphicsView):
        view.setProperty(SCALE_PROPERTY, 1.0)
        restyle_view(view)
    return widget


# -- the mode -------------------------------------------------------------------------------------
class PresentationMode(QObject):
    """F11: full screen, the larger scale, one panel (or a scene's pair) without its dock title,
    a panel chooser in the input bar. F11 / Esc: the dock layout back."""

    toggled = Signal(bool)

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        _windows.append(window)
        self.settings = window.settings
        self.session = window.state.session  # theme and scale are the session's; the application follows
        window.state.scaleChanged.connect(self._on_scale)
        self.active = False
        self._was_maximized = False
        self._geometry = None
        self._hidden: list[QWidget] = []
        self._dock_state = None  # the window's dock layout before presenting, restored on leave
        self.shown: list[str] = []  # the panels on screen while presenting
        self.switcher = ElidingComboBox(objectName="presentation_panel_chooser", minimumContentsLength=SWITCHER_CHARS,
                                        toolTip="The panel shown while presenting")  # longer names elide
        for i, (name, dock) in enumerate(window.docks.items()):  # the tab's short name, the whole on hover
            self.switcher.addItem(dock.windowTitle(), name)
            self.switcher.setItemData(i, dock.full_title, Qt.ItemDataRole.ToolTipRole)
        self.switcher.activated.connect(lambda i: window.focus_panel(self.switcher.itemData(i)))

    @property
    def scale(self) -> float:
        return read_scale(self.settings)

    def set_scale(self, factor: float) -> None:
        """Persist the presentation scale (and apply it at once when presenting)."""
        factor = max(style.SCALES[0], min(float(factor), style.SCALES[1]))
        self.settings.setValue(SCALE_KEY, factor)
        if self.active:
            self.session.set_scale(factor)

    def _on_scale(self, factor: float) -> None:
        if set_scale(QApplication.instance(), factor):
            apply_theme(QApplication.instance(), theme.current().name)  # the stylesheet and the canvases follow

    def toggle(self) -> None:
        self.leave() if self.active else self.enter()

    def enter(self, full_screen: bool = True, panel: str | None = None) -> None:
        """Full screen, the larger font, and one panel: `panel`, the tour's scene's, else Figure 1."""
        if self.active:
            return
        self.active = True
        self.session.set_scale(self.scale)
        self._hidden = [w for w in self._lecture_hidden() if w.isVisible()]
        for w in self._hidden:
            w.hide()
        self.window.toast.set_active(True)
        self._was_maximized = self.window.isMaximized()
        self._geometry = self.window.geometry()  # the window's own rectangle, given back exactly
        self._dock_state = self.window.saveState()
        for dock in self.window.docks.values():
            dock.setTitleBarWidget(QWidget(dock))  # no title row: the chooser names the panel
        self.window.show_panels([panel or (FRONT_PANEL if self.window.lecture.deck.tour is None else self.window.current_panel)])
        if full_screen:
            self.window.showFullScreen()
            QTimer.singleShot(300, self.window, self._cover_screen)  # cancelled if the window dies first
        self.toggled.emit(True)

    def leave(self) -> None:
        """Back to the whole window at the normal font."""
        if not self.active:
            return
        self.active = False
        self.session.set_scale(1.0)
        for w in self._hidden:
            w.show()
        self._hidden = []
        self.window.toast.set_active(False)
        self.window.input_bar.show_own_model(None)
        if self.window.isFullScreen():
            self.window.showMaximized() if self._was_maximized else self.window.showNormal()
        if not self._was_maximized and self._geometry is not None:
            self.window.setGeometry(self._geometry)
        for dock in self.window.docks.values():  # the dock layout from before, every dock shown
            dock.titleBarWidget().deleteLater()
            dock.setTitleBarWidget(None)
        self.window.restoreState(self._dock_state)
        self.shown = []
        self.window.show_panels([], others=True)
        self.toggled.emit(False)

    def now_showing(self, names: list[str]) -> None:
        """The panels the window shows alone (a scene's pair side by side, the detail wider): named
        in the chooser; a lab's own model in the input bar."""
        self.shown = names
        if len(names) == 2:
            self.window.share_width(*(self.window.docks[name] for name in names), 0.42)
        self.window.input_bar.show_own_model(self.window.own_model(names))
        with QSignalBlocker(self.switcher):
            self.switcher.setCurrentIndex(max(self.switcher.findData(names[-1]), 0))

    def _cover_screen(self) -> None:
        """Without a window manager full screen is only a hint: cover the screen anyway."""
        screen = self.window.screen()
        if self.active and screen is not None and self.window.geometry() != screen.geometry():
            self.window.setGeometry(screen.geometry())

    def _lecture_hidden(self) -> list[QWidget]:
        """The menu bar (its shortcuts stay live), the device, the first-screen hint, the status bar
        (its messages float over the window instead: `explorer.toast`)."""
        bar = self.window.input_bar
        return [self.window.menuBar(), self.window.statusBar(), bar.device_label, bar.hint]
