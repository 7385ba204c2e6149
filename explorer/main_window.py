"""The main window: docks (one per panel, `dock_<panel_name>`, so `saveState` can put the layout
back between runs), menus, the input toolbar and the status bar."""
from __future__ import annotations

from PySide6.QtCore import QByteArray, QSettings, Qt, QTimer
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QTabBar,
    QTabWidget,
    QToolBar,
    QWidget,
)

from explorer import style
from explorer.input_bar import InputBar
from explorer.lecture import PAPER_HELP, LectureTools
from explorer.panel_dock import (
    CHAPTERS,
    LAYOUT_VERSION,
    LEFT_PANELS,
    LazyPanels,
    PanelDock,
    PanelScroll,
)
from explorer.panels import panel_classes
from explorer.presentation import build_at_normal_size
from explorer.screen import ScreenClass, classify
from explorer.toast import StatusToast

SHORTCUTS_HELP = ("← / →  previous / next step\nSpace  play / pause\nHome / End  first / last step\n"
                  "Enter (in the input)  run the model\nMouse wheel  zoom a diagram or heatmap, drag to pan\n"
                  "F11  presentation mode (Esc leaves)\nPage Down / Page Up  next / previous scene of a tour")


EAGER_PANELS = ("decoding",)  # it reflows on every resize: built with the window


class MainWindow(QMainWindow):
    """One window: the input toolbar on top, every panel in a dock."""

    def __init__(self, state, runner, settings: QSettings | None = None, restore: bool = True,
                 persist: bool = True, parent=None):
        super().__init__(parent)
        self.state, self.runner = state, runner
        self.persist = persist
        self._shown_once = False
        self.settings = settings if settings is not None else QSettings("TransformerExplorer", "explorer")
        self.setWindowTitle("Transformer Explorer — Attention Is All You Need")
        self.setDockNestingEnabled(True)
        self.setDockOptions(QMainWindow.AllowTabbedDocks | QMainWindow.AllowNestedDocks)
        self.setTabPosition(Qt.AllDockWidgetAreas, QTabWidget.North)

        self.input_bar = InputBar(state, runner, self)
        toolbar = QToolBar("Input", self, objectName="toolbar_input", movable=False)
        toolbar.addWidget(self.input_bar)
        self.addToolBar(Qt.TopToolBarArea, toolbar)

        self.current_panel = "step"  # the panel last brought forward (its tab chosen, show_panels)
        self.tabifiedDockWidgetActivated.connect(self._on_tab_chosen)
        self.screen_class = ScreenClass.PROJECTOR  # the class every panel's layout is declared for now
        self._closing = False
        self._panel_classes = {cls.panel_name: cls for cls in panel_classes()}
        self.panels = LazyPanels(self._panel_classes, self._build_panel, self, still_wanted=self._dock_wants_panel)
        self._tidy_timer = QTimer(self, singleShot=True, interval=0)
        self._tidy_timer.timeout.connect(self.tidy_tab_bars)
        self._columns_state: QByteArray | None = None  # the two-column layout, while narrow stacks the docks
        self.docks: dict[str, QDockWidget] = {}
        self._add_docks()
        self._build_status_bar()
        self.lecture = LectureTools(self)  # presentation mode, themes, scenes, exports
        self._build_menus()
        self.lecture.presentation.toggled.connect(lambda *_: self.reclassify(tell=True))
        self.resize(1280, 800)
        self._default_state = self.saveState(LAYOUT_VERSION)
        if restore:
            self.restore_layout()

    def _add_docks(self) -> None:
        """The diagrams (LEFT_PANELS) tabbed on the left, the other panels tabbed on the right."""
        areas: dict[bool, list[QDockWidget]] = {True: [], False: []}
        for cls in self._panel_classes.values():
            dock = PanelDock(cls.title, getattr(cls, "tab_title", None), self, objectName=f"dock_{cls.panel_name}")
            dock.setWidget(PanelScroll())  # the panel itself is built when the dock is first shown
            dock.visibilityChanged.connect(lambda visible, name=cls.panel_name: self._on_dock_shown(name, visible))
            self.docks[cls.panel_name] = dock
            left = cls.panel_name in LEFT_PANELS
            if areas[left]:
                self.tabifyDockWidget(areas[left][0], dock)
            else:
                self.addDockWidget(Qt.LeftDockWidgetArea if left else Qt.RightDockWidgetArea, dock)
            areas[left].append(dock)
            for signal in (dock.dockLocationChanged, dock.topLevelChanged, dock.visibilityChanged):
                signal.connect(self._tidy_tab_bars_later)
        self._default_front()

    def _default_front(self) -> None:
        for name in EAGER_PANELS:
            self.panels[name]
        for name in ("architecture", "step"):
            self.docks[name].raise_()
        self._size_docks()

    def _build_panel(self, name: str) -> QWidget:
        panel = build_at_normal_size(lambda: self._panel_classes[name](self.state, self))
        if hasattr(panel, "apply_screen_class"):
            panel.apply_screen_class(self.screen_class)
        self.docks[name].widget().place(panel)
        return panel

    def _on_dock_shown(self, name: str, visible: bool) -> None:
        """A dock shown with the window gets its panel now; one shown later, a turn later."""
        if not visible or not self._dock_wants_panel(name):
            return
        if self._shown_once:
            self.panels.build_soon(name)
        else:
            self.panels[name]

    def _on_tab_chosen(self, dock: QDockWidget) -> None:
        self.current_panel = dock.objectName().removeprefix("dock_")

    def _dock_wants_panel(self, name: str) -> bool:
        return not self._closing and self.docks[name].isVisible() and self.panels.built(name) is None

    def _size_docks(self, focus: str | None = None) -> None:
        if self._columns_state is not None:  # one column: nothing to share
            return
        right = next(d for n, d in self.docks.items() if n not in LEFT_PANELS)
        self.share_width(self.docks[LEFT_PANELS[0]], right, 0.58 if focus in LEFT_PANELS else 0.45)

    def share_width(self, left: QDockWidget, right: QDockWidget, left_share: float) -> None:
        """Two docks side by side, `left_share` of the window's width to the left one."""
        w = max(self.width(), 800)
        self.resizeDocks([left, right], [int(w * left_share), int(w * (1 - left_share))], Qt.Horizontal)

    def _build_menus(self) -> None:
        self.file_menu = file_menu = self.menuBar().addMenu("&File")
        file_menu.addAction("&Open checkpoint folder…", QKeySequence.Open, self.input_bar.model_combo.open_folder)
        file_menu.addAction("Save &screenshot…", self._save_screenshot)
        file_menu.addActions(self.lecture.file_actions)
        file_menu.addSeparator()
        file_menu.addAction("&Quit", QKeySequence.Quit, self.close)

        self.view_menu = view_menu = self.menuBar().addMenu("&View")
        listed = set()
        for chapter, names in (*CHAPTERS, ("More", tuple(self.docks))):
            names = [n for n in names if n in self.docks and n not in listed]
            if names:
                view_menu.addSection(chapter)
            for name in names:
                view_menu.addAction(self.docks[name].toggleViewAction())
                listed.add(name)
        view_menu.addSeparator()
        self.reset_layout_action = view_menu.addAction("&Reset layout", self.reset_layout)
        view_menu.addSeparator()
        view_menu.addActions(self.lecture.view_actions)

        self.help_menu = help_menu = self.menuBar().addMenu("&Help")
        help_menu.addAction("The &paper, section by section", lambda: QMessageBox.information(
            self, "Attention Is All You Need, section by section", PAPER_HELP))
        help_menu.addActions(self.lecture.help_actions)
        help_menu.addAction("&Keyboard shortcuts",
                            lambda: QMessageBox.information(self, "Keyboard shortcuts", SHORTCUTS_HELP))

    def _build_status_bar(self) -> None:
        self.busy_bar = QProgressBar(maximum=0, maximumWidth=160, visible=False)  # indeterminate: something runs
        self.busy_label = QLabel()
        self.statusBar().addPermanentWidget(self.busy_label)
        self.statusBar().addPermanentWidget(self.busy_bar)
        self.toast = StatusToast(self)
        self.state.busyChanged.connect(self._on_busy)
        self.state.message.connect(self._on_message)
        self.state.bundleChanged.connect(self._on_bundle)
        self.state.panelRequested.connect(lambda name, _view: name in self.docks and self.focus_panel(name))

    def focus_panel(self, name: str) -> QDockWidget:
        """Bring a panel's dock to the front with most of the room; presenting, the one panel shown."""
        self.show_panels([name])
        return self.docks[name]

    def show_panels(self, names: list[str], others: bool | None = None) -> None:
        """`names` in front; every other dock shown (`others` True), hidden (False) or left as it is
        (None). Presenting: `names` (else the panel in front) alone. Docks are hidden before any
        is shown: none is shown only to be hidden again (it would draw for nobody)."""
        presenting = self.lecture.presentation.active
        if presenting:
            names, others = names or [self.current_panel], False
        for name, dock in self.docks.items():
            if name not in names and others is not None and others != dock.toggleViewAction().isChecked():
                dock.setVisible(others)
        for name in names:
            self.docks[name].show()
            self.docks[name].raise_()
        self.current_panel = names[-1] if names else self.current_panel
        if presenting:
            self.lecture.presentation.now_showing(names)
        else:
            self._size_docks(focus=self.current_panel)
        self._tidy_tab_bars_later()

    def own_model(self, names: list[str]) -> tuple[str, str] | None:
        """(short, whole) description of the model the labs `names` train (their `config_class`), else None."""
        configs = [getattr(self._panel_classes[name], "config_class", None) for name in names]
        return configs[-1]().describe() if configs and all(configs) else None

    def reclassify(self, tell: bool = False) -> ScreenClass:
        """The window's screen class; on a change (or `tell`) every panel built so far is told."""
        presenting = self.lecture.presentation.active
        cls = classify(self.width(), self.height(), presenting)
        if not presenting:
            self._arrange_docks(cls is ScreenClass.NARROW)
        if cls != self.screen_class or tell:
            self.screen_class = cls
            for panel in [self.panels.built(name) for name in self.panels] + [self.input_bar]:
                if hasattr(panel, "apply_screen_class"):
                    panel.apply_screen_class(cls)
        return cls

    def _arrange_docks(self, one_column: bool) -> None:
        """NARROW: every docked panel a tab of one column, the front one in front; wider: the two columns back."""
        if one_column == (self._columns_state is not None) or not self.isVisible():
            return
        if not one_column:
            state, self._columns_state = self._columns_state, None
            self.restoreState(state, LAYOUT_VERSION)
            self._tidy_tab_bars_later()
            return
        self._columns_state = self.saveState(LAYOUT_VERSION)
        docks = [d for d in self.docks.values() if not d.isFloating()]
        front = self.docks[self.current_panel]
        closed = [d for d in docks if not d.toggleViewAction().isChecked()]
        area = self.dockWidgetArea(docks[0])
        for dock in docks:  # taken out first: one raised at once would otherwise stay behind
            self.removeDockWidget(dock)
            if dock is docks[0]:
                self.addDockWidget(area, dock)
            else:
                self.tabifyDockWidget(docks[0], dock)
            dock.setVisible(dock not in closed)
        self.layout().activate()  # the new tab bar made now, so a dock raised next comes to the front
        front.raise_()
        self._tidy_tab_bars_later()

    def reset_layout(self) -> None:
        self._columns_state = None
        for dock in self.docks.values():
            dock.setFloating(False)
            dock.show()
        self.restoreState(self._default_state, LAYOUT_VERSION)
        self._default_front()
        self.reclassify()
        self._tidy_tab_bars_later()

    def save_layout(self) -> None:
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/state", self._columns_state or self.saveState(LAYOUT_VERSION))
        self.settings.sync()

    def restore_layout(self) -> bool:
        """Put back the last saved layout; False (default layout kept) when none or outdated."""
        geometry = self.settings.value("window/geometry")
        state = self.settings.value("window/state")
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        restored = isinstance(state, QByteArray) and self.restoreState(state, LAYOUT_VERSION)
        if state is not None and not restored:
            self.state.inform("The saved window layout could not be read (damaged or from another version); "
                              "using the default layout.", "warning")
        self._tidy_tab_bars_later()
        return restored

    def _tidy_tab_bars_later(self, *_) -> None:
        self._tidy_timer.start()  # one tidy after a burst of dock changes

    def tidy_tab_bars(self) -> None:
        """After a change of the dock layout, every dock tab bar: whole words (scroll arrows where too
        narrow), each tab's full title as its tooltip; hidden where Qt leaves one painted at a stale
        place after re-tabbing docks or restoreState (Qt 6.10): a live one touches one of its docks."""
        docks = [d.geometry() for d in self.docks.values() if d.isVisible() and not d.isFloating()]
        titles = {d.windowTitle(): d.full_title for d in self.docks.values()}
        for bar in self.findChildren(QTabBar, options=Qt.FindDirectChildrenOnly):
            if bar.elideMode() != Qt.ElideNone:
                bar.setElideMode(Qt.ElideNone)
                bar.setUsesScrollButtons(True)
            for i in range(bar.count()):
                whole = titles.get(bar.tabText(i))
                if whole is not None and bar.tabToolTip(i) != whole:
                    bar.setTabToolTip(i, whole)
            g = bar.geometry()
            if bar.isVisible() and not any(min(abs(g.bottom() + 1 - d.top()), abs(g.top() - 1 - d.bottom())) <= 3
                                           and g.left() < d.right() and d.left() < g.right() for d in docks):
                bar.hide()

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self.reclassify()

    def showEvent(self, event) -> None:  # noqa: N802
        super().showEvent(event)
        self.reclassify()
        self._tidy_tab_bars_later()
        if not self._shown_once:  # ← → step at once, not move a text cursor
            self._shown_once = True
            QTimer.singleShot(0, self.panels["step"], self.panels["step"].setFocus)

    def closeEvent(self, event) -> None:  # noqa: N802
        self._closing = True  # docks hidden while closing build no panel
        if self.persist:
            self.save_layout()
        for panel in filter(None, map(self.panels.built, self.panels)):
            if hasattr(panel, "shutdown"):
                panel.shutdown()  # (a docked panel gets no close event of its own)
        self.runner.shutdown(10000)  # never leave a worker running against a dying window
        super().closeEvent(event)

    def _on_busy(self, busy: bool, what: str) -> None:
        self.busy_bar.setVisible(busy)
        self.busy_label.setText(what if busy else "")
        self.toast.set_busy(busy, what)

    def _on_message(self, level: str, text: str) -> None:
        role = "error" if level == "error" else ("text" if level == "info" else "accent_text")
        style.set_sheet(self.statusBar(), f"color: {{{role}}};")
        self.toast.say(level, text)
        self.statusBar().showMessage(text, 15000)

    def _on_bundle(self, bundle) -> None:
        cfg = bundle.config
        self.setWindowTitle(f"Transformer Explorer — {bundle.name} ({bundle.model_kind.dashed_name}, "
                            f"N={max(cfg.n_encoder_layers, cfg.n_decoder_layers)}, d_model={cfg.d_model}, "
                            f"h={cfg.n_heads}, {'pre' if cfg.norm_first else 'post'}-LN)")

    def _save_screenshot(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save screenshot", "explorer.png", "PNG images (*.png)")
        if path and not self.grab().save(path):
            self.state.inform(f"Could not write {path}.", "error")
