"""View 4 of the positional-encoding panel: for the current input, the scaled token embedding,
the positional encoding and their sum — the three tensors the model records (Sections 3.4–3.5)."""
from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from explorer import attention_style as st
from explorer.attention_items import HeatmapPlot
from explorer.positional_views import symmetric_levels

STACKS = {"encoder": "Encoder (source)", "decoder": "Decoder (target)"}
TITLES = ("E[token]·√d_model", "+ PE(pos)", "= input to layer 0")


class InputView(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.stack_box = QComboBox()
        self.stack_box.setFont(st.font(st.LABEL_PT))
        self.check = QLabel(" ")
        self.check.setFont(st.font(st.TICK_PT))
        self.check.setWordWrap(True)
        row = QHBoxLayout()
        label = QLabel("Side:")
        label.setFont(st.font(st.LABEL_PT))
        row.addWidget(label)
        row.addWidget(self.stack_box)
        row.addWidget(self.check, 1)
        self.canvas = st.graphics_widget()
        self.maps = [HeatmapPlot(self.canvas.ci, 0, i, st.signed_cmap(), (-1.0, 1.0), "dimension", "token" if i == 0 else "")
                     for i in range(3)]
        self.bar = st.colorbar(st.signed_cmap(), (-1.0, 1.0), "value")
        self.canvas.ci.addItem(self.bar, row=0, col=3)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(row)
        lay.addWidget(self.canvas, 1)
        self.result = None
        self.values: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self.stack_box.currentIndexChanged.connect(lambda _: self._draw())

    def set_result(self, result) -> None:
        self.result = result
        stacks = [s for s in STACKS if result is not None and f"{s}.input" in result.trace] if result is not None else []
        current = self.stack_box.currentData()
        self.stack_box.blockSignals(True)
        self.stack_box.clear()
        for s in stacks:
            self.stack_box.addItem(STACKS[s], s)
        if current in stacks:
            self.stack_box.setCurrentIndex(stacks.index(current))
        self.stack_box.blockSignals(False)
        self._draw()

    def _draw(self) -> None:
        stack = self.stack_box.currentData()
        if self.result is None or stack is None:
            self.values = None
            for m in self.maps:
                m.clear()
            self.check.setText("Run an input to see its embeddings.")
            return
        trace = self.result.trace
        scaled = trace[f"{stack}.embedding.scaled"].tensor[0].numpy()  # (T, d_model)
        pe = trace[f"{stack}.positional"].tensor.numpy()  # (T, d_model)
        total = trace[f"{stack}.input"].tensor[0].numpy()
        self.values = (scaled, pe, total)
        labels = list(self.result.src_pieces if stack == "encoder" else self.result.tgt_pieces)
        labels = labels if len(labels) == scaled.shape[0] else [str(i) for i in range(scaled.shape[0])]
        levels = symmetric_levels(scaled, pe, total)
        self.bar.setLevels(levels)
        for m, values, title in zip(self.maps, self.values, TITLES):
            m.set_levels(levels)
            m.set_map(values, None, [str(i) for i in range(values.shape[1])], labels)
            st.set_title(m.plot, title)
        err = float(np.abs(scaled + pe - total).max())
        self.check.setText(f"Recorded in this forward pass ({stack}.embedding.scaled, {stack}.positional, {stack}.input); "
                           f"max |scaled + PE − input| = {err:.1e}. The same colour scale for all three.")
