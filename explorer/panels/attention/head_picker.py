"""`HeadPicker`: the attention kind, layer and head as three combo boxes (attention, compare).
The selection is the session's: `kind`, `layer` and `head` are it clamped to what the panel
shows, `select` changes it, `sync` shows it without echoing it back."""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QSizePolicy, QWidget

from explorer.drawing import plot_style as st
from explorer.panels.knobs import refill
from model.nn.kinds import AttentionKind


class HeadPicker(QWidget):
    """"Attention: [Encoder self]  Layer: [2]  Head: [3]" (layers and heads counted from 1)."""

    def __init__(self, state, kinds: Callable[[], list[str]], shape: Callable[[str], tuple[int, int]], parent=None):
        """`kinds()`: the kinds the panel shows; `shape(kind)`: its (layers, heads)."""
        super().__init__(parent)
        self.state, self.kinds, self.shape = state, kinds, shape
        self.kind_box, self.layer_box, self.head_box = QComboBox(), QComboBox(), QComboBox()
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        for text, box in (("Attention:", self.kind_box), ("Layer:", self.layer_box), ("Head:", self.head_box)):
            label = QLabel(text)
            for widget in (label, box):
                widget.setFont(st.font(st.LABEL_PT))
                row.addWidget(widget)
            box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            box.setMinimumContentsLength(12 if box is self.kind_box else 2)  # "Decoder self", "12"
            box.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
            box.currentIndexChanged.connect(self._on_box)

    def select(self, kind: str, layer: int, head: int) -> None:
        """Make (kind, layer, head) the session's selection (also with no model: a bare trace)."""
        if self.state.bundle is not None and kind in self.state.available_kinds():
            self.state.select_attention(kind, layer, head)
        else:
            self.state.session.set_attention(kind, layer, head)

    @property
    def kind(self) -> str:
        kinds = self.kinds()
        return self.state.kind if not kinds or self.state.kind in kinds else kinds[0]

    @property
    def layer(self) -> int:
        return min(self.state.layer, max(0, self.shape(self.kind)[0] - 1))

    @property
    def head(self) -> int:
        return min(self.state.head, max(0, self.shape(self.kind)[1] - 1))

    def sync(self) -> None:
        """Offer the kinds, layers and heads shown, and show the selection, without echoing."""
        kinds, kind = self.kinds(), self.kind
        n_layers, n_heads = self.shape(kind)
        refill(self.kind_box, [(AttentionKind(k).short_title, k) for k in kinds], kinds.index(kind) if kind in kinds else -1)
        refill(self.layer_box, [str(i + 1) for i in range(n_layers)], self.layer if n_layers else -1)
        refill(self.head_box, [str(i + 1) for i in range(n_heads)], self.head if n_heads else -1)
        for i, k in enumerate(kinds):
            self.kind_box.setItemData(i, AttentionKind(k).title, Qt.ItemDataRole.ToolTipRole)

    def _on_box(self, _index: int) -> None:
        kind = self.kind_box.currentData()
        if kind is not None:
            self.select(kind, self.layer_box.currentData() or 0, self.head_box.currentData() or 0)


class PickedHead:
    """Mixin: a panel's `kind`, `layer` and `head`, the session's selection clamped by its `picker`."""

    kind = property(lambda self: self.picker.kind)
    layer = property(lambda self: self.picker.layer)
    head = property(lambda self: self.picker.head)
