"""The positional panel's "This input": the scaled token embedding, the positional encoding and
their sum as the model recorded them (Sections 3.4–3.5); for BERT also T[0] and the LayerNorm of the
sum, checked against its formula with the model's γ, β and ε."""
from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QLabel, QWidget

from explorer import style
from explorer.drawing import plot_style as st
from explorer.drawing.heatmap import Heatmap, colour_bar_canvas
from explorer.panels.knobs import refill
from explorer.panels.layouts import column, row
from model.interpret.positions import embedding_sum, symmetric_levels

STACKS = {"encoder": "Encoder (source)", "decoder": "Decoder (target)"}
MAX_MAPS = 5  # E, + P, + T, = sum, LayerNorm (BERT); three for the paper's model


class InputView(QWidget):
    def __init__(self, state, parent=None):
        super().__init__(parent)
        self.state = state
        self.stack_box = style.set_font_role(QComboBox(), "label")
        self.check = QLabel(" ", wordWrap=True)
        self.maps = [Heatmap(colormap=st.signed_cmap(), levels=(-1.0, 1.0), square=False) for _ in range(MAX_MAPS)]
        for i, m in enumerate(self.maps):  # each named under it: the maps' rows stand level
            m.set_axis_names("token" if i == 0 else "", "dimension")
            m.setVisible(i < 3)  # E, + PE, = sum: the paper's three until a BERT input shows five
        self.bar_canvas, self.bar = colour_bar_canvas(st.signed_cmap(), (-1.0, 1.0), "value")
        side = row(style.set_font_role(QLabel("Side:"), "label"), self.stack_box, (self.check, 1))
        column(side, (row(*((m, 1) for m in self.maps), self.bar_canvas), 1), parent=self, margins=0)
        self.checked = None  # the EmbeddingSum drawn: its terms' steps and values, left to right, and its checks
        self.stack_box.currentIndexChanged.connect(lambda _: self._draw())

    def refresh(self, *_) -> None:
        """The session's forward pass: the stacks it recorded offered, the chosen one drawn."""
        result = self.state.result
        stacks = [s for s in STACKS if f"{s}.input" in result.trace] if result is not None else []
        current = self.stack_box.currentData()
        refill(self.stack_box, [(STACKS[s], s) for s in stacks], stacks.index(current) if current in stacks else 0)
        self._draw()

    def _draw(self) -> None:
        stack = self.stack_box.currentData()
        result = self.state.result
        if result is None or stack is None:
            self.checked = None
            for m in self.maps:
                m.clear_data()
                m.set_title("")
            self.check.setText("Run an input to see its embeddings.")
            return
        model = getattr(self.state.bundle, "model", None)  # its LayerNorm's γ, β, ε check BERT's norm
        checked = self.checked = embedding_sum(result.trace, stack, model)
        terms, arrays, normed, addends, total = checked.terms, checked.arrays, checked.normed, checked.addends, checked.total
        labels = list(result.src_pieces if stack == "encoder" else result.tgt_pieces)
        labels = labels if len(labels) == total.shape[0] else [str(i) for i in range(total.shape[0])]
        levels = symmetric_levels(*addends, total)  # one scale for the terms and their sum
        self.bar.setLevels(levels)
        for i, m in enumerate(self.maps):
            m.setVisible(i < len(arrays))
        for i, (m, values, (_, title, _short)) in enumerate(zip(self.maps, arrays, terms)):
            own = normed and i == len(arrays) - 1
            lv = symmetric_levels(values) if own else levels
            m.set_levels(lv)
            m.set_data(values, labels, [str(c) for c in range(values.shape[1])])
            m.set_title(f"{title} (±{lv[1]:.2g})" if own else title)
        self.check.setText(checked.summary(stack))
