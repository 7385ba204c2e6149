"""The head grid: one layers × heads block of buttons per attention kind; a click edits a head.

Each button shows what is done to its head ("–" nothing, "0" zeroed, "μ" mean, "≡" uniform);
an edited head is drawn in the theme's `changed` colour. The grid holds no state of its own:
`set_heads` draws the session's interventions, and `headClicked` asks the panel to change them.
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
MAX_CELL_PX = 88  # a head's button grows with the room up to this (a big target on a projector)
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
        self.buttons = {}
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
            for h in range(n_heads):
                button = QToolButton()
                button.setFont(st.font(st.LABEL_PT))
                button.setMinimumSize(30, 28)
                button.setMaximumHeight(MAX_CELL_PX)
                button.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
                button.clicked.connect(lambda _=False, k=kind, l=layer, hh=h: self.headClicked.emit(k, l, hh))
                self.buttons[(kind, layer, h)] = button
                grid.addWidget(button, layer + 1, h + 1)
            grid.setRowStretch(layer + 1, 1)  # the rows of heads grow, the head numbers stay on top of them
        column.addLayout(grid, 1)
        return block

    def set_heads(self, heads: dict) -> None:
        """Draw the edits {(kind, layer, head): op}."""
        self.heads = dict(heads)
        for key, button in self.buttons.items():
            op = self.heads.get(key)
            button.setText(SYMBOLS[op])
            button.setToolTip(f"{KIND_TITLES[key[0]]} L{key[1] + 1} H{key[2] + 1}: {NAMES[op]} (click to change)")
            set_sheet(button, EDITED_SHEET if op else PLAIN_SHEET)
