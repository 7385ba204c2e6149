"""Grids of attention heads: a layers × heads block of buttons per attention kind, paged
(`surgery_labels.layer_pages`) so that a page's rows fit the room; the surgery grid and the head
atlas are these blocks."""
from __future__ import annotations

from PySide6.QtCore import QSignalBlocker, QSize, Qt, Signal
from PySide6.QtWidgets import QGridLayout, QLabel, QLayout, QSizePolicy, QTabBar, QToolButton, QWidget

from explorer.drawing import plot_style as st
from explorer.panels.layouts import column, row
from explorer.theme import set_sheet
from model.interpret.surgery_labels import KIND_TITLES, head_cell, layer_pages, page_titles

MAX_CELL_PX = 88  # a head's button grows with the room up to this
PLAIN_SHEET = "QToolButton {{ color: {text}; background: {button}; border: 1px solid {grid}; }}"
EDITED_SHEET = ("QToolButton {{ color: {text}; background: {changed}; border: 2px solid {accent_text}; "
                "font-weight: bold; }}")


def _fixed_label(text: str, point_size: float, bold: bool = False) -> QLabel:
    label = QLabel(text, font=st.font(point_size, bold=bold))
    label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)  # the rows of heads grow, not this
    return label


class HeadBlocks(QWidget):
    """A button per head of every kind a model has. Signal headClicked(kind, layer, head)."""

    headClicked = Signal(str, int, int)
    bold_cells = False

    def __init__(self, parent=None):
        super().__init__(parent)
        self.row = row(parent=self, margins=0)
        self.row.setSizeConstraint(QLayout.SizeConstraint.SetMaximumSize)  # never taller than its cells allow
        self.heads: dict = {}  # the edits {(kind, layer, head): op} each page's tab counts
        self.cells: dict[tuple[str, int, int], QToolButton] = {}
        self.sheets: dict[tuple[str, int, int], str] = {}  # each cell's sheet now
        self.pages: dict[str, tuple[QTabBar, list[range], dict[int, list[QWidget]], QGridLayout]] = {}

    def build(self, layers: dict[str, int], n_heads: int) -> None:
        """One block per kind ({kind: layers}) of n_heads heads a layer (none: empty)."""
        while self.row.count():
            item = self.row.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        self.cells, self.sheets, self.pages = {}, {}, {}
        for kind, n_layers in layers.items():
            self.row.addWidget(self._block(kind, n_layers, n_heads), 1)
        self.setMinimumHeight(max((sum(self._room(kind)) for kind in self.pages), default=0))  # a row of heads
        if self.testAttribute(Qt.WidgetAttribute.WA_Resized):  # (laid out before: paged for its height now)
            self.fit_pages()

    def _block(self, kind: str, n_layers: int, n_heads: int) -> QWidget:
        block = QWidget()
        tabs = QTabBar(font=st.font(st.LABEL_PT), expanding=False)
        grid = QGridLayout(spacing=3)
        lines = column(_fixed_label(KIND_TITLES[kind], st.LABEL_PT, bold=True), tabs, (grid, 1), parent=block)
        lines.setContentsMargins(2, 0, 2, 0)
        lines.setSizeConstraint(QLayout.SizeConstraint.SetMinAndMaxSize)
        rows: dict[int, list[QWidget]] = {}  # a layer's label and cells: shown with its page
        for head in range(n_heads):
            grid.addWidget(_fixed_label(f"H{head + 1}", st.TICK_PT), 0, head + 1)
        for layer in range(n_layers):
            label = QLabel(f"L{layer + 1}", font=st.font(st.TICK_PT))
            grid.addWidget(label, layer + 1, 0)
            rows[layer] = [label]
            for head in range(n_heads):
                cell = QToolButton(font=st.font(st.LABEL_PT, bold=self.bold_cells), minimumSize=QSize(30, 28),
                                   maximumHeight=MAX_CELL_PX)
                cell.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
                cell.clicked.connect(lambda _=False, key=(kind, layer, head): self.headClicked.emit(*key))
                self.cells[(kind, layer, head)] = cell
                rows[layer].append(cell)
                grid.addWidget(cell, layer + 1, head + 1)
        self.pages[kind] = (tabs, [], rows, grid)
        tabs.currentChanged.connect(lambda index, k=kind: self.show_page(k, index))
        self._paginate(kind, layer_pages(n_layers))
        return block

    def _paginate(self, kind: str, pages: list[range]) -> None:
        """Tabs for `pages` of the kind's layers, the page holding the first layer shown before current."""
        tabs, old, rows, grid = self.pages[kind]
        first = old[tabs.currentIndex()].start if old else 0
        self.pages[kind] = (tabs, pages, rows, grid)
        with QSignalBlocker(tabs):
            while tabs.count():
                tabs.removeTab(0)
            for title in page_titles(kind, pages, self.heads):
                tabs.addTab(title)
        tabs.setVisible(len(pages) > 1)
        self.show_page(kind, next((i for i, page in enumerate(pages) if first in page), 0))

    def _room(self, kind: str) -> tuple[int, int]:
        """(the height of the kind's block besides its rows of heads, its tab bar shown; one more row)."""
        tabs, _pages, rows, grid = self.pages[kind]
        lines = tabs.parentWidget().layout()
        step = max((w.minimumHeight() or w.minimumSizeHint().height() for w in rows.get(0, [])), default=0)
        numbers = grid.itemAtPosition(0, 1)  # the head numbers' row
        parts = (lines.itemAt(0).widget(), tabs, numbers.widget() if numbers is not None else None)
        margins = (lines.contentsMargins(), grid.contentsMargins())
        bare = sum(w.sizeHint().height() for w in parts if w is not None) + 2 * lines.spacing()
        return bare + sum(m.top() + m.bottom() for m in margins), step + grid.verticalSpacing()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self.fit_pages()

    def fit_pages(self) -> None:
        """Pages of as many layers as the height holds at the cells' least size (PAGE_LAYERS at most)."""
        for kind, (_tabs, pages, rows, _grid) in self.pages.items():
            bare, step = self._room(kind)
            fitted = layer_pages(len(rows), (self.height() - bare) // max(step, 1))
            if fitted != pages:
                self._paginate(kind, fitted)

    def show_page(self, kind: str, index: int) -> None:
        """Show page `index` of a kind's layers (its tab selected), the other layers' rows hidden."""
        tabs, pages, rows, grid = self.pages[kind]
        shown = pages[max(0, min(index, len(pages) - 1))]
        if tabs.currentIndex() != pages.index(shown):
            tabs.setCurrentIndex(pages.index(shown))  # (comes back here through currentChanged)
            return
        for layer in sorted(rows, key=lambda layer: layer not in shown):  # shown first: the height never drops
            for widget in rows[layer]:
                widget.setVisible(layer in shown)
            grid.setRowStretch(layer + 1, int(layer in shown))  # the rows of heads grow, the head numbers stay on top

    def paint(self) -> None:
        """Each cell's text, tooltip and sheet from `self.look(key)`; a sheet only where it changes
        (setting one re-polishes its button)."""
        for key, cell in self.cells.items():
            text, tip, sheet = self.look(key)
            cell.setText(text)
            cell.setToolTip(tip)
            if self.sheets.get(key) != sheet:
                self.sheets[key] = sheet
                set_sheet(cell, sheet)

    def shown_layers(self, kind: str) -> range:
        """The layers of `kind` on screen now."""
        tabs, pages, _rows, _grid = self.pages[kind]
        return pages[tabs.currentIndex()]


class HeadGrid(HeadBlocks):
    """The surgery grid: each head's button shows its edit."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.model_shape: tuple = ()

    def set_model(self, layers: dict[str, int], n_heads: int) -> None:
        """Rebuild the blocks for a model with these kinds ({kind: layers}) and heads per layer."""
        shape = (tuple(layers.items()), n_heads)
        if shape != self.model_shape:
            self.model_shape = shape
            self.build(layers, n_heads)
            self.set_heads(self.heads)

    def look(self, key: tuple[str, int, int]) -> tuple[str, str, str]:
        return *head_cell(key, self.heads.get(key)), EDITED_SHEET if key in self.heads else PLAIN_SHEET

    def set_heads(self, heads: dict) -> None:
        """Draw the edits {(kind, layer, head): op}."""
        self.heads = dict(heads)
        self.paint()
        for kind, (tabs, pages, _rows, _grid) in self.pages.items():
            for index, title in enumerate(page_titles(kind, pages, self.heads)):
                tabs.setTabText(index, title)
