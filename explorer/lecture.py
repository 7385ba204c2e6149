"""The main window's lecture tools: menu entries, keys (F11, PageUp/PageDown for a clicker), the
tour's row and the presenting strip for `presentation`, `scenes` and `export`."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QFileDialog,
    QInputDialog,
    QLabel,
    QToolBar,
    QToolButton,
    QWidget,
)

from explorer import export, style
from explorer.caption_label import CaptionLabel
from explorer.export import ExportDialog
from explorer.panels.layouts import row
from explorer.presentation import FRONT_PANEL, THEME_KEY, THEMES, PresentationMode, apply_theme, read_theme
from explorer.scenes import SceneDeck, capture
from model.io.assets import asset_path
from model.io.metrics_csv import MetricsCsvError, write_training_csv
from model.io.scenes import TOUR_PATH, SceneError, Tour, save_tour

PAPER_HELP = asset_path("scenes", "paper-map.md").read_text(encoding="utf-8").strip()


class LectureTools(QObject):
    """Menus, shortcuts and the lecture toolbar; owns the presentation mode and the scene deck."""

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.state = window.state
        self.presentation = PresentationMode(window)
        self.deck = SceneDeck(window)
        self._build_actions()
        self._build_toolbar()
        self._place_tour_controls()
        self.presentation.toggled.connect(self._on_presenting)
        self.deck.sceneShown.connect(self._on_scene)
        self.deck.closed.connect(self._on_tour_closed)
        self.state.themeChanged.connect(self._on_theme)
        self.state.session.set_theme(read_theme(window.settings))  # the saved theme is the session's

    def _action(self, text: str, slot, shortcut=None, checkable: bool = False) -> QAction:
        action = QAction(text, self.window)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
            action.setShortcutContext(Qt.WindowShortcut)
        action.setCheckable(checkable)
        action.triggered.connect(slot)
        self.window.addAction(action)  # shortcuts keep working while the menu bar is hidden
        return action

    def _build_actions(self) -> None:
        self.present_action = self._action("&Presentation mode", self.presentation.toggle, Qt.Key_F11, True)
        self.leave_action = self._action("Leave presentation mode", self.presentation.leave, Qt.Key_Escape)
        self.leave_action.setEnabled(False)
        self.scale_action = self._action("Presentation &scale…", self._ask_scale)
        self.next_action = self._action("&Next scene", self.next_scene, Qt.Key_PageDown)
        self.prev_action = self._action("&Previous scene", self.deck.previous, Qt.Key_PageUp)
        self.exit_tour_action = self._action("E&xit tour", self.deck.close)
        self.exit_tour_action.setEnabled(False)
        self.tour_action = self._action("Open &tour…", lambda: self._ask(self.deck.open, QFileDialog.getOpenFileName(
            self.window, "Open a tour or scene", str(TOUR_PATH.parent), "Scenes (*.json)")[0]))
        self.default_tour_action = self._action("Start the &paper tour", lambda: self.deck.open(TOUR_PATH))
        self.save_scene_action = self._action("Save current s&cene…", self._save_scene)
        self.export_action = self._action("&Export panel…", self._export_dialog, "Ctrl+E")
        self.export_steps_action = self._action("Export forward pass as &frames / GIF…", lambda: self._ask(
            self.export_steps, QFileDialog.getExistingDirectory(self.window, "Folder for the frames")))
        self.export_csv_action = self._action("Export training &metrics (CSV)…", lambda: self._ask(
            self.export_csv, QFileDialog.getSaveFileName(self.window, "Export training metrics", "training.csv",
                                                         "CSV (*.csv)")[0]))
        self.theme_group = QActionGroup(self)
        self.theme_actions = {}
        for name in THEMES:
            action = self._action(f"{name.capitalize()} theme", lambda _=False, n=name: self.set_theme(n),
                                  checkable=True)
            self.theme_group.addAction(action)
            self.theme_actions[name] = action
        self.theme_actions[read_theme(self.window.settings)].setChecked(True)
        between = QAction(self.window)
        between.setSeparator(True)

        # (the window's menus list these: `file_actions` over Quit, `view_actions`, `help_actions`)
        self.file_actions = (self.tour_action, self.default_tour_action, self.save_scene_action, between,
                             self.export_action, self.export_steps_action, self.export_csv_action)
        self.view_actions = (self.present_action, self.scale_action, *self.theme_actions.values(),
                             self.prev_action, self.next_action, self.exit_tour_action)
        self.help_actions = (self.default_tour_action,)

    def _build_toolbar(self) -> None:
        """The tour's row (caption, ◀ n/N ▶, Exit tour); presenting, the panel chooser and Leave."""
        self.caption_bar = QToolBar("Tour", self.window, objectName="toolbar_caption", movable=False)
        self.caption = CaptionLabel("", objectName="tour_caption", textFormat=Qt.PlainText)  # as many lines as it needs
        style.set_font_role(self.caption, "caption")  # readable from the back row
        self.caption.setContentsMargins(8, 4, 8, 4)
        self.caption_bar.addWidget(self.caption)
        self.scene_label = QLabel("")  # "n/N"; the scene's name in its tooltip
        self.tour_controls = [self._tool(self.prev_action, "◀"), self.scene_label,
                              self._tool(self.next_action, "▶"), self._tool(self.exit_tour_action)]
        for widget in self.tour_controls:
            self.caption_bar.addWidget(widget)
        self.window.addToolBarBreak(Qt.TopToolBarArea)  # its own row: the input bar keeps its width
        self.window.addToolBar(Qt.TopToolBarArea, self.caption_bar)
        self.caption_bar.hide()
        self.leave_action.setIconText("Leave")
        self.leave_action.setToolTip("Leave presentation mode (Esc or F11)")
        self.strip = QWidget(objectName="presenter_strip", visible=False)
        row(self.presentation.switcher, self._tool(self.leave_action, name="presenter_leave"), parent=self.strip,
            margins=0).setSpacing(6)
        self.tour_offer = self._tool(self.default_tour_action, "Start the tour ▶", "presenter_start_tour")
        self.tour_offer.setToolTip("Start the paper tour (PageDown)")  # (on Figure 1's row)
        self.tour_offer.hide()
        self.window.input_bar.add_tail(self.strip)

    @staticmethod
    def _tool(action: QAction, text: str | None = None, name: str = "") -> QToolButton:
        """A text button for `action` that can be hidden without hiding its keyboard shortcut."""
        button = QToolButton(objectName=name)
        button.setDefaultAction(action)
        button.setToolButtonStyle(Qt.ToolButtonTextOnly)
        if text is not None:
            button.setText(text)
            keys = action.shortcut().toString()
            button.setToolTip(action.text().replace("&", "") + (f" ({keys})" if keys else ""))
        return button

    def _place_tour_controls(self) -> None:
        """The tour's row while a tour is open; presenting without one, "Start the tour" on Figure 1's row."""
        touring = self.deck.tour is not None
        self.exit_tour_action.setEnabled(touring)
        self.caption_bar.setVisible(touring)
        on = self.presentation.active and not touring
        panel = self.window.panels.built("architecture") if on else None
        if panel is not None and self.tour_offer.parentWidget() is None:
            panel.add_to_row(self.tour_offer)
        self.tour_offer.setVisible(on and self.tour_offer.parentWidget() is not None)

    def next_scene(self) -> None:
        """PageDown: the next scene, or with no tour open the paper tour from its start."""
        if self.deck.tour is None:
            self.deck.open(TOUR_PATH)
        else:
            self.deck.next()

    def set_theme(self, name: str, save: bool = True) -> None:
        """A theme picked (menu, --theme): the session's, and (`save`) the next start's."""
        if save:
            self.window.settings.setValue(THEME_KEY, name)
        if self.state.session.theme == name:  # applied again (a figure may have put the application back)
            apply_theme(QApplication.instance(), name)
        else:
            self.state.session.set_theme(name)

    def _on_theme(self, name: str) -> None:
        """The session's theme: the application's, and the menu's."""
        apply_theme(QApplication.instance(), name)
        self.theme_actions[name].setChecked(True)

    def _ask_scale(self) -> None:
        value, ok = QInputDialog.getDouble(self.window, "Presentation scale",
                                           "Fonts and lines in presentation mode, × normal size:",
                                           self.presentation.scale, *style.SCALES, 2)
        if ok:
            self.presentation.set_scale(value)

    @staticmethod
    def _ask(act, path: str) -> None:
        """`act(path)` for the path a file dialog gave; nothing when it was cancelled ("")."""
        if path:
            act(path)

    def save_scene(self, path: str | Path, name: str, caption: str = "") -> bool:
        """The current state as a one-scene tour file."""
        try:
            scene = capture(self.window, name, caption)
            save_tour(Tour([scene], title=name), path)
        except (SceneError, OSError) as exc:
            self.state.inform(f"Could not save the scene to {path}: {exc}", "error")
            return False
        self.state.inform(f"Saved scene {name!r} to {path}.", "info")
        return True

    def _save_scene(self) -> None:
        name, ok = QInputDialog.getText(self.window, "Save current scene", "Scene title:")
        if not ok or not name.strip():
            return
        path, _ = QFileDialog.getSaveFileName(self.window, "Save scene", f"{name.strip()}.json", "Scenes (*.json)")
        if path:
            self.save_scene(path, name.strip())

    def _export(self, panel: str, write, said):
        """Bring `panel` forward and run `write(panel)`; its result, or None with the reason said."""
        built = self.window.panels.get(panel)
        if built is None:
            self.state.inform(f"No panel named {panel!r}.", "error")
            return None
        try:
            self.window.focus_panel(panel)
            out = write(built)
        except (export.ExportError, MetricsCsvError, OSError) as exc:
            self.state.inform(f"Export failed: {exc}", "error")
            return None
        self.state.inform(said(out), "info")
        return out

    def export_panel(self, name: str, path: str | Path, size=None, fmt: str | None = None) -> Path | None:
        return self._export(name, lambda panel: export.export_panel(panel, path, size, fmt),
                            lambda out: f"Exported {self.window.docks[name].full_title} to {out}.")

    def _export_dialog(self) -> None:
        dialog = ExportDialog(self.window)
        dialog.panel.setCurrentIndex(max(dialog.panel.findData(self.window.current_panel), 0))
        if dialog.exec() == QDialog.Accepted:
            self.export_panel(*dialog.choice())

    def export_steps(self, folder: str | Path, size=None, gif: bool = True) -> dict | None:
        def said(out) -> str:
            note = f" and {out['gif'].name}" if out["gif"] else " (install Pillow for an animated GIF)"
            return f"Wrote {len(out['frames'])} frames to {folder}{note}."
        return self._export("step", lambda panel: export.export_steps(self.state, panel, folder, size, gif=gif), said)

    def export_csv(self, path: str | Path) -> int:
        n = self._export("training", lambda panel: write_training_csv(panel.curves, path),
                         lambda n: f"Wrote {n} rows of training metrics to {path}.")
        return n or 0

    def _on_presenting(self, active: bool) -> None:
        self.present_action.setChecked(active)
        self.leave_action.setEnabled(active)
        self.strip.setVisible(active)
        self._place_tour_controls()
        self.window.input_bar.arrange()  # the row's tail showed or hid

    def _on_scene(self, index: int, scene) -> None:
        tour = self.deck.tour
        self.scene_label.setText(f" {index + 1}/{len(tour.scenes)} " if tour is not None and index >= 0 else "")
        self.scene_label.setToolTip(scene.name)
        self.caption.setText(scene.caption or scene.name)
        self._place_tour_controls()

    def _on_tour_closed(self) -> None:
        """No tour: its row goes and a whole layout comes back: every dock, Figure 1 in front
        (presenting: Figure 1 alone, as presenting opens, with the tour offered)."""
        self.scene_label.setText("")
        self.caption.setText("")
        self.window.show_panels([FRONT_PANEL], others=True)  # (presenting: it alone)
        self._place_tour_controls()
