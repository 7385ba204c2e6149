"""2017 vs 2024: the paper's base model beside SmolLM2-135M (or the loaded Llama-like model): both
Figure 1s, and a table of what changed, each row with a button to the panel that shows it."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QPushButton,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from explorer import style
from explorer.panels.architecture.figure_view import FigureView
from explorer.panels.base import Panel
from explorer.panels.layouts import column
from explorer.panels.split_pages import SplitPages
from explorer.panels.texts import say, text_label
from explorer.screen import ScreenClass
from model.io.modern_reference import MODERN_NAME, load_modern
from model.nn.config_changes import config_changes, is_modern, paper_config

ASPECT_PANELS = {"Stacks": "architecture", "Width": "architecture", "Norm": "step", "Positions": "positional rope",
                 "FFN": "step", "Heads": "kvcache", "Biases": "step", "Parameters": "architecture",
                 "Vocabulary": "sampling", "Context": "kvcache"}  # the panel (and its view) that shows each aspect
PANEL_TITLES = {"architecture": ("Figure 1", "Architecture"), "step": ("Steps", "Forward pass (step by step)"),
                "positional": ("RoPE", "Positional (RoPE tab)"), "kvcache": ("KV cache", "KV cache"),
                "sampling": ("Sampling", "Sampling")}  # (the button's short text, the panel's name)


def captioned(view: FigureView) -> tuple[QWidget, QLabel]:
    """(page, caption): a Figure 1 under its model's name, its width decided by the layout's stretch."""
    page = QWidget()
    caption = style.set_font_role(QLabel(alignment=Qt.AlignCenter, wordWrap=True), "heading")
    column(caption, (view, 1), parent=page, margins=0)
    for widget in (page, caption):
        widget.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
    return page, caption


class ModernPanel(Panel):
    panel_name = "modern"
    title = "2017 vs 2024"

    def __init__(self, state, parent=None, synchronous: bool = False):
        super().__init__(state, parent)
        self.rows = []
        self.modern = None  # (name, config, parameters) of the 2024 side
        self.note = text_label()
        self.old_figure, self.new_figure = FigureView(), FigureView()
        (old_page, self.old_caption), (new_page, self.new_caption) = captioned(self.old_figure), captioned(self.new_figure)
        self.table = QTableWidget(0, 4, wordWrap=True, textElideMode=Qt.ElideNone,
                                  editTriggers=QTableWidget.NoEditTriggers, selectionMode=QTableWidget.NoSelection)
        self.table.setHorizontalHeaderLabels(["", "2017 (paper)", "2024", "Shown in"])
        self.table.horizontalHeaderItem(3).setToolTip("Each row's button opens the panel that shows it on the loaded model")
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)  # wrapped text: rows follow
        header = self.table.horizontalHeader()
        for index, mode in enumerate((QHeaderView.ResizeToContents, QHeaderView.Stretch, QHeaderView.Stretch,
                                      QHeaderView.ResizeToContents)):
            header.setSectionResizeMode(index, mode)
        self.tabs = SplitPages([(old_page, "2017: Figure 1", 1), (new_page, "2024: Figure 1", 1)],
                               "Figure 1, then and now", ((self.table, "What changed"),))
        column(self.note, (self.tabs, 1), parent=self, margins=4)
        self.add_job(self._on_modern, self._on_no_modern, synchronous)
        self.old_caption.setText("2017: the paper's base model")
        self.old_figure.show_figure(paper_config())
        self.follow(bundle=self._on_bundle)

    def apply_screen_class(self, cls: ScreenClass) -> None:
        """WIDE: both Figure 1s side by side; otherwise a tab each, so that each drawing is fitted to
        the whole room and its labels stay readable."""
        self.tabs.set_apart(cls is not ScreenClass.WIDE)

    def _on_bundle(self, bundle) -> None:
        if is_modern(bundle.config):
            self._on_modern((bundle.name, bundle.config, sum(p.numel() for p in bundle.model.parameters())))
        elif self.modern is None:
            say(self.note, f"Loading {MODERN_NAME}'s config…", "info")
            self.job.submit(load_modern)

    def _on_modern(self, modern) -> None:
        self.modern = modern
        name, config, parameters = modern
        say(self.note, f"The paper's model (2017) and {name} (2024), read from their configs.", "info")
        self._show(name, config, parameters)

    def _on_no_modern(self, why: str) -> None:
        bundle = self.state.bundle
        say(self.note, f"{MODERN_NAME}'s config could not be read ({why}); the loaded model {bundle.name} stands in.",
                  "warning")
        self._show(bundle.name, bundle.config, sum(p.numel() for p in bundle.model.parameters()))

    def _show(self, name: str, config, parameters: int) -> None:
        self.new_caption.setText(f"2024: {name.removesuffix('-Instruct')}")
        self.new_figure.show_figure(config)
        figures = (self.old_figure, self.new_figure)  # side by side, as wide as their drawings: one zoom
        self.tabs.share_row([max(1, round(f.scene().itemsBoundingRect().width())) for f in figures])
        self.rows = config_changes(paper_config(), config, parameters)
        self.table.setRowCount(len(self.rows))
        bold = QFont()
        bold.setBold(True)  # only the weight: size and family stay the table's (scaled while presenting)
        for i, change in enumerate(self.rows):
            aspect = QTableWidgetItem(change.aspect)
            aspect.setFont(bold)
            self.table.setItem(i, 0, aspect)
            for col, text in ((1, change.old), (2, change.new)):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                if change.old != change.new and col == 2:
                    item.setFont(bold)
                self.table.setItem(i, col, item)
            panel, _, view = ASPECT_PANELS[change.aspect].partition(" ")
            short, name = PANEL_TITLES[panel]
            button = QPushButton(f"{short} ▸", toolTip=f"Open the {name} panel")
            button.clicked.connect(lambda _checked=False, p=panel, v=view: self.state.request_panel(p, v))
            self.table.setCellWidget(i, 3, button)
