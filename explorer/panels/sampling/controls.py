"""The sampling playground's controls: temperature, top-k, top-p, and the Generate row."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QGridLayout, QLabel, QPushButton, QSpinBox, QWidget
from superqt import QLabeledDoubleSlider

from explorer import style

METHODS = {"sample": "Sample (these settings)", "greedy": "Greedy (argmax)", "beam": "Beam search (4, α 0.6)"}
MAX_TOP_K = 1000


def _slider(low: float, high: float, value: float, tip: str) -> QLabeledDoubleSlider:
    slider = QLabeledDoubleSlider(Qt.Horizontal, toolTip=tip)
    slider.setRange(low, high)
    slider.setDecimals(2)
    slider.setSingleStep(0.05)
    slider.setValue(value)
    return slider


class SamplingControls(QWidget):
    """Emits `changed` when temperature, top-k or top-p moves, `generate` for the button."""

    changed = Signal()
    generate = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.temperature = _slider(0.05, 3.0, 1.0, "Temperature T: the logits are divided by T before the "
                                   "softmax. T < 1 sharpens the distribution, T > 1 flattens it.")
        self.top_k = QSpinBox(maximum=MAX_TOP_K, specialValueText="off",
                              toolTip="Top-k: keep only the k most probable tokens (0 = off).")
        self.top_p = _slider(0.05, 1.0, 1.0, "Top-p (nucleus): keep the smallest set of tokens, most "
                             "probable first, whose probability adds up to at least p (1 = off).")
        self.method = QComboBox()
        for key, text in METHODS.items():
            self.method.addItem(text, key)
        self.seed = QSpinBox(maximum=2**31 - 1, prefix="seed ",
                             toolTip="The random seed of a sampled generation: the same seed, the same text.")
        self.step = QSpinBox(prefix="decoding step ", toolTip="Which step of the recorded decode: step k is the "
                             "distribution after the prompt and the output's first k − 1 tokens")
        self.button = QPushButton("Generate", toolTip="Generate a continuation with the chosen method (off the GUI thread).")
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        for row, (name, widget) in enumerate((("Temperature", self.temperature), ("Top-k", self.top_k),
                                              ("Top-p", self.top_p))):
            grid.addWidget(QLabel(name, font=style.font(style.BASE_POINT_SIZE, bold=True)), row, 0)
            grid.addWidget(widget, row, 1, 1, 3)
        grid.addWidget(self.step, 3, 0, 1, 4)
        grid.addWidget(self.method, 4, 0, 1, 2)
        grid.addWidget(self.seed, 4, 2)
        grid.addWidget(self.button, 4, 3)
        grid.setColumnStretch(1, 1)
        for control in (self.temperature, self.top_p, self.top_k):
            control.valueChanged.connect(lambda _v: self.changed.emit())
        self.button.clicked.connect(self.generate.emit)

    def settings(self) -> tuple[float, int, float]:
        """(temperature, top_k, top_p) as the controls read now."""
        return float(self.temperature.value()), int(self.top_k.value()), float(self.top_p.value())

    def chosen_method(self) -> str:
        return self.method.currentData()

