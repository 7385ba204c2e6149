"""The head grid: one layers × heads block of buttons per attention kind; a click edits a head.

Each button shows what is done to its head ("–" nothing, "0" zeroed, "μ" mean, "≡" uniform);
an edited head is drawn in the theme's `changed` colour. The grid holds no state of its own:
`set_heads` draws the session's interventions, and `headClicked` asks the panel to change them.
A deep stack (SmolLM2's 30 layers) is shown `PAGE_LAYERS` layers at a time: a tab per page of
layers above the block, each tab naming how many of its heads are edited.
"""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLayout,
    QSizePolicy,
    QTabBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from explorer.drawing import plot_style as st
from explorer.theme import set_sheet
from model.nn.kinds import AttentionKind

SYMBOLS = {None: "–", "zero": "0", "mean": "μ", "uniform": "≡"}
NAMES = {None: "unchanged", "zero": "zeroed", "mean": "replaced by its mean", "uniform": "uniform attention"}
KIND_TITLES = {kind.value: kind.short_title for kind in AttentionKind}
MAX_CELL_PX = 88  # a head's button grows with the room up to this (a big target on a projector)
PAGE_LAYERS = 10  # a stack of more layers than this (and a few) is paged: ten rows of heads stay a big target


def layer_pages(n_layers: int, per_page: int = PAGE_LAYERS) -> list[range]:
    """The layers of each page: all on one up to a few more than `per_page`, else pages of `per_page`."""
    if n_layers <= per_page + 2:
        return [range(n_layers)]
    return [range(start, min(start + per_page, n_layers)) for start in range(0, n_layers, per_page)]
PLAIN_SHEET = "QToolButton {{ color: {text}; background: {button}; border: 1px solid {grid}; }}"
EDITED_SHEET = ("QToolButton {{ color: {text}; background: {changed}; border: 2px solid {accent_text}; "
                "font-weight: bold; }}")


class HeadGrid(QWidget):
    """Buttons for every head of the kinds a model has. Signal headClicked(kind, layer, head)."""

    headClicked = Signal(str, int, int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.row = QHBoxLayout(self)
        self.row.setContentsMargins(0, 0, 0, 0)
        self.row.setSizeConstraint(QLayout.SizeConstraint.SetMinAndMaxSize)  # never taller than its cells allow
        self.buttons: dict[tuple[str, int, int], QToolButton] = {}
        self.pages: dict[str, tuple[QTabBar, list[range], dict[int, list[QWidget]], QGridLayout]] = {}
        self.model_shape: tuple = ()
        self.heads: dict = {}

    def set_model(self, layers: dict[str, int], n_heads: int) -> None:
        """Rebuild the blocks for a model with these kinds ({kind: layers}) and heads per layer."""
        shape = (tuple(layers.items()), n_heads)
        if shape == self.model_shape:
            return
        self.model_shape = shape
        while self.row.count():
            item = self.row.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        self.buttons, self.pages = {}, {}
        for kind, n_layers in layers.items():
            self.row.addWidget(self._block(kind, n_layers, n_heads), 1)
        self.set_heads(self.heads)

    def _block(self, kind: str, n_layers: int, n_heads: int) -> QWidget:
        block = QWidget()
        column = QVBoxLayout(block)
        column.setContentsMargins(2, 0, 2, 0)
        column.setSizeConstraint(QLayout.SizeConstraint.SetMinAndMaxSize)  # (so the grid is, see __init__)
        title = QLabel(KIND_TITLES[kind])
        title.setFont(st.font(st.LABEL_PT, bold=True))
        title.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        column.addWidget(title)
        pages = layer_pages(n_layers)
        tabs = QTabBar()
        tabs.setFont(st.font(st.LABEL_PT))
        tabs.setExpanding(False)
        for page in pages:
            tabs.addTab(f"L{page.start + 1}–{page.stop}")
        column.addWidget(tabs)
        tabs.setVisible(len(pages) > 1)  # (after it has a parent: shown parentless it would be a window of its own)
        rows: dict[int, list[QWidget]] = {}  # a layer's label and buttons: shown with its page
        grid = QGridLayout()
        grid.setSpacing(3)
        for h in range(n_heads):
            label = QLabel(f"H{h + 1}")
            label.setFont(st.font(st.TICK_PT))
            label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)  # the rows grow, not this
            grid.addWidget(label, 0, h + 1)
        for layer in range(n_layers):
            label = QLabel(f"L{layer + 1}")
            label.setFont(st.font(st.TICK_PT))
            grid.addWidget(label, layer + 1, 0)
            rows[layer] = [label]
            for h in range(n_heads):
                button = QToolButton()
                button.setFont(st.font(st.LABEL_PT))
                button.setMinimumSize(30, 28)
                button.setMaximumHeight(MAX_CELL_PX)
                button.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
                button.clicked.connect(lambda _=False, k=kind, l=layer, hh=h: self.headClicked.emit(k, l, hh))
                self.buttons[(kind, layer, h)] = button
                rows[layer].append(button)
                grid.addWidget(button, layer + 1, h + 1)
        column.addLayout(grid, 1)
        self.pages[kind] = (tabs, pages, rows, grid)
        tabs.currentChanged.connect(lambda index, k=kind: self.show_page(k, index))
        self.show_page(kind, 0)
        return block

    def show_page(self, kind: str, index: int) -> None:
        """Show page `index` of a kind's layers (its tab selected), the other layers' rows hidden."""
        tabs, pages, rows, grid = self.pages[kind]
        shown = pages[max(0, min(index, len(pages) - 1))]
        if tabs.currentIndex() != pages.index(shown):
            tabs.setCurrentIndex(pages.index(shown))  # (comes back here through currentChanged)
            return
        for layer, widgets in rows.items():
            for widget in widgets:
                widget.setVisible(layer in shown)
            grid.setRowStretch(layer + 1, int(layer in shown))  # the rows of heads grow, the head numbers stay on top

    def shown_layers(self, kind: str) -> range:
        """The layers of `kind` on screen now."""
        tabs, pages, _rows, _grid = self.pages[kind]
        return pages[tabs.currentIndex()]

    def set_heads(self, heads: dict) -> None:
        """Draw the edits {(kind, layer, head): op}."""
        self.heads = dict(heads)
        for key, button in self.buttons.items():
            op = self.heads.get(key)
            button.setText(SYMBOLS[op])
            button.setToolTip(f"{KIND_TITLES[key[0]]} L{key[1] + 1} H{key[2] + 1}: {NAMES[op]} (click to change)")
            set_sheet(button, EDITED_SHEET if op else PLAIN_SHEET)
        for kind, (tabs, pages, _rows, _grid) in self.pages.items():
            for index, page in enumerate(pages):  # an edit on another page stays in sight: its tab says so
                edited = sum(1 for (k, layer, _h) in self.heads if k == kind and layer in page)
                tabs.setTabText(index, f"L{page.start + 1}–{page.stop}" + (f" ({edited} edited)" if edited else ""))
