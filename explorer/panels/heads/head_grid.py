"""Grids of attention heads: one layers × heads block of buttons per attention kind.

`HeadBlocks` lays the blocks out (each kind's title, the head numbers on top, the layer numbers
on the left, a button per head that grows with the room up to MAX_CELL_PX: a big target on a
projector); `headClicked(kind, layer, head)` says which was clicked. The surgery grid
(`HeadGrid`: each head's edit) and the head atlas (`explorer.panels.atlas.atlas_grid`: each
head's type) are the same blocks with their own text and colours.
"""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QGridLayout, QHBoxLayout, QLabel, QLayout, QSizePolicy, QToolButton, QVBoxLayout, QWidget

from explorer.drawing import plot_style as st
from explorer.theme import set_sheet
from model.nn.kinds import AttentionKind

SYMBOLS = {None: "–", "zero": "0", "mean": "μ", "uniform": "≡"}
NAMES = {None: "unchanged", "zero": "zeroed", "mean": "replaced by its mean", "uniform": "uniform attention"}
KIND_TITLES = {kind.value: kind.short_title for kind in AttentionKind}
MAX_CELL_PX = 88  # a head's button grows with the room up to this
PLAIN_SHEET = "QToolButton {{ color: {text}; background: {button}; border: 1px solid {grid}; }}"
EDITED_SHEET = ("QToolButton {{ color: {text}; background: {changed}; border: 2px solid {accent_text}; "
                "font-weight: bold; }}")


def _fixed_label(text: str, point_size: float, bold: bool = False) -> QLabel:
    label = QLabel(text)
    label.setFont(st.font(point_size, bold=bold))
    label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)  # the rows of heads grow, not this
    return label


class HeadBlocks(QWidget):
    """A button per head of every kind a model has. Signal headClicked(kind, layer, head)."""

    headClicked = Signal(str, int, int)
    bold_cells = False

    def __init__(self, parent=None):
        super().__init__(parent)
        self.row = QHBoxLayout(self)
        self.row.setContentsMargins(0, 0, 0, 0)
        self.row.setSizeConstraint(QLayout.SizeConstraint.SetMinAndMaxSize)  # never taller than its cells allow
        self.cells: dict[tuple[str, int, int], QToolButton] = {}

    def build(self, layers: dict[str, int], n_heads: int) -> None:
        """One block per kind ({kind: layers}) of n_heads heads a layer (none: empty)."""
        while self.row.count():
            item = self.row.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        self.cells = {}
        for kind, n_layers in layers.items():
            self.row.addWidget(self._block(kind, n_layers, n_heads), 1)

    def _block(self, kind: str, n_layers: int, n_heads: int) -> QWidget:
        block = QWidget()
        column = QVBoxLayout(block)
        column.setContentsMargins(2, 0, 2, 0)
        column.setSizeConstraint(QLayout.SizeConstraint.SetMinAndMaxSize)  # (so the grid is, see __init__)
        column.addWidget(_fixed_label(KIND_TITLES[kind], st.LABEL_PT, bold=True))
        grid = QGridLayout()
        grid.setSpacing(3)
        for head in range(n_heads):
            grid.addWidget(_fixed_label(f"H{head + 1}", st.TICK_PT), 0, head + 1)
        for layer in range(n_layers):
            label = QLabel(f"L{layer + 1}")
            label.setFont(st.font(st.TICK_PT))
            grid.addWidget(label, layer + 1, 0)
            grid.setRowStretch(layer + 1, 1)  # the rows of heads grow, the head numbers stay on top of them
            for head in range(n_heads):
                cell = QToolButton()
                cell.setFont(st.font(st.LABEL_PT, bold=self.bold_cells))
                cell.setMinimumSize(30, 28)
                cell.setMaximumHeight(MAX_CELL_PX)
                cell.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
                cell.clicked.connect(lambda _=False, key=(kind, layer, head): self.headClicked.emit(*key))
                self.cells[(kind, layer, head)] = cell
                grid.addWidget(cell, layer + 1, head + 1)
        column.addLayout(grid, 1)
        return block


class HeadGrid(HeadBlocks):
    """The surgery grid: each head's button shows its edit (`set_heads`)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.model_shape: tuple = ()
        self.heads: dict = {}

    @property
    def buttons(self) -> dict[tuple[str, int, int], QToolButton]:
        return self.cells

    def set_model(self, layers: dict[str, int], n_heads: int) -> None:
        """Rebuild the blocks for a model with these kinds ({kind: layers}) and heads per layer."""
        shape = (tuple(layers.items()), n_heads)
        if shape != self.model_shape:
            self.model_shape = shape
            self.build(layers, n_heads)
            self.set_heads(self.heads)

    def set_heads(self, heads: dict) -> None:
        """Draw the edits {(kind, layer, head): op}."""
        self.heads = dict(heads)
        for key, button in self.cells.items():
            op = self.heads.get(key)
            button.setText(SYMBOLS[op])
            button.setToolTip(f"{KIND_TITLES[key[0]]} L{key[1] + 1} H{key[2] + 1}: {NAMES[op]} (click to change)")
            set_sheet(button, EDITED_SHEET if op else PLAIN_SHEET)
