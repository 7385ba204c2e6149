"""`DecodingControls`: strategy and its knobs, the step transport, and the layer/head choice.

It only reads widgets and emits: `settingsChanged(DecodeSettings)` when the strategy or a
knob changes (the panel decodes again), `transport(str)` for reset/back/step/play, and
`headChanged(layer, head)`, `sharpestRequested()` (the panel picks the head from its run).
Defaults follow Section 6.1 (beam 4, α = 0.6). The three groups flow onto as many lines as
the width needs (superqt's QFlowLayout), so the row never scrolls sideways.
"""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QStackedWidget,
    QStyle,
    QWidget,
)
from superqt import QFlowLayout

from explorer import style
from model.interpret.decode_run import STRATEGIES, DecodeSettings


def _group(*widgets) -> tuple[QWidget, QHBoxLayout]:
    """One unit of the flowing row: widgets (or label texts) side by side, never split."""
    group = QWidget()
    row = QHBoxLayout(group)
    row.setContentsMargins(0, 0, 0, 0)
    row.setSpacing(6)
    for w in widgets:
        row.addWidget(QLabel(w) if isinstance(w, str) else w)
    return group, row


def _labelled(row: QHBoxLayout, text: str, widget: QWidget, tip: str) -> QWidget:
    label = QLabel(text)
    for w in (label, widget):
        w.setToolTip(tip)
        row.addWidget(w)
    widget.setMaximumWidth(90)
    return widget


class DecodingControls(QWidget):
    settingsChanged = Signal(object)  # DecodeSettings
    transport = Signal(str)  # "reset" | "back" | "step" | "play"
    headChanged = Signal(int, int)
    sharpestRequested = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.strategy = QComboBox()
        for key, label in STRATEGIES.items():
            self.strategy.addItem(label, key)
        self.strategy.setToolTip("How the next token is chosen from the model's distribution")

        sample_page, sl = _group()
        self.temperature = _labelled(sl, "T", QDoubleSpinBox(minimum=0.05, maximum=5.0, singleStep=0.1, value=1.0),
                                     "Temperature: logits are divided by T before the softmax")
        self.top_k = _labelled(sl, "top-k", QSpinBox(minimum=0, maximum=1000, value=0, specialValueText="off"),
                               "Keep only the k most probable tokens (0 = off)")
        self.top_p = _labelled(sl, "top-p", QDoubleSpinBox(minimum=0.05, maximum=1.0, singleStep=0.05, value=1.0),
                               "Keep the smallest set of tokens whose probabilities sum to p (nucleus sampling)")
        self.seed = _labelled(sl, "seed", QSpinBox(minimum=0, maximum=999_999, value=0),
                              "Random seed: the same seed gives the same sample")
        beam_page, bl = _group()
        self.beam_size = _labelled(bl, "beam", QSpinBox(minimum=1, maximum=12, value=4),
                                   "Beam size (the paper uses 4)")
        self.alpha = _labelled(bl, "α", QDoubleSpinBox(minimum=0.0, maximum=2.0, singleStep=0.1, value=0.6),
                               "Length penalty α: score = log p / ((5 + |Y|) / 6)^α (the paper uses 0.6)")
        self.params = QStackedWidget()
        for page in (QWidget(), sample_page, beam_page, QWidget()):  # greedy and "follow the target": no knobs
            self.params.addWidget(page)

        icons = self.style()
        self.reset = QPushButton(icons.standardIcon(QStyle.SP_MediaSkipBackward), "Reset")
        self.back = QPushButton(icons.standardIcon(QStyle.SP_MediaSeekBackward), "Back")
        self.step = QPushButton(icons.standardIcon(QStyle.SP_MediaSeekForward), "Step")
        self.play = QPushButton(icons.standardIcon(QStyle.SP_MediaPlay), "Play")
        self.play.setCheckable(True)
        for name, button in (("reset", self.reset), ("back", self.back), ("step", self.step), ("play", self.play)):
            button.clicked.connect(lambda _=False, n=name: self.transport.emit(n))
        self.step_label = QLabel("–")
        self.step_label.setFont(style.font(style.BASE_POINT_SIZE, bold=True))
        self.layer = QComboBox()
        self.head = QComboBox()
        for combo in (self.layer, self.head):
            combo.setMaximumWidth(70)
        self.layer.setToolTip("Decoder layer whose attention is shown")
        self.head.setToolTip("Attention head shown")
        self.sharpest = QPushButton("Sharpest")
        self.sharpest.setToolTip("Show the decoder head that aligns most clearly on this text: each row's largest "
                                 "weight, averaged, times the share of different tokens the rows pick (a head that "
                                 "puts every row on one token is sharp and shows nothing); cross-attention where "
                                 "the model has it, else masked self-attention (its early rows have few tokens "
                                 "to choose from)")
        self.sharpest.clicked.connect(self.sharpestRequested)

        self.flow = QFlowLayout(self)
        self.flow.setContentsMargins(4, 2, 4, 2)
        self.flow.setHorizontalSpacing(16)
        self.flow.setVerticalSpacing(2)
        for group in (_group("Strategy", self.strategy, self.params)[0],
                      _group(self.reset, self.back, self.step, self.play, self.step_label)[0],
                      _group("Layer", self.layer, "Head", self.head, self.sharpest)[0]):
            self.flow.addWidget(group)
        self._show_page()

        self.strategy.currentIndexChanged.connect(self._strategy_changed)
        for spin in (self.temperature, self.top_k, self.top_p, self.seed, self.beam_size, self.alpha):
            spin.setKeyboardTracking(False)  # decode again when the user is done typing
            spin.valueChanged.connect(lambda _v: self.settingsChanged.emit(self.settings()))
        self.layer.currentIndexChanged.connect(self._head_changed)
        self.head.currentIndexChanged.connect(self._head_changed)

    def settings(self) -> DecodeSettings:
        return DecodeSettings(strategy=self.strategy.currentData(), temperature=self.temperature.value(),
                              top_k=self.top_k.value(), top_p=self.top_p.value(), seed=self.seed.value(),
                              beam_size=self.beam_size.value(), alpha=self.alpha.value())

    def show_settings(self, settings: DecodeSettings) -> None:
        """Show the session's settings without announcing them back as a change."""
        if settings == self.settings():
            return
        widgets = [self.strategy, self.temperature, self.top_k, self.top_p, self.seed, self.beam_size, self.alpha]
        for w in widgets:
            w.blockSignals(True)
        try:
            self.strategy.setCurrentIndex(max(self.strategy.findData(settings.strategy), 0))
            for name in ("temperature", "top_k", "top_p", "seed", "beam_size", "alpha"):
                getattr(self, name).setValue(getattr(settings, name))
        finally:
            for w in widgets:
                w.blockSignals(False)
        self._show_page()

    def _show_page(self) -> None:
        """The current strategy's knobs; only that page asks for width."""
        index = max(self.strategy.currentIndex(), 0)
        for i in range(self.params.count()):
            policy = QSizePolicy.Preferred if i == index else QSizePolicy.Ignored
            self.params.widget(i).setSizePolicy(policy, policy)
        self.params.setCurrentIndex(index)
        self.params.updateGeometry()

    def set_target_label(self, text: str) -> None:
        """Name the "follow a given text" strategy as the input bar names that text (a target
        for the encoder-decoder, a continuation for a decoder-only model)."""
        self.strategy.setItemText(self.strategy.findData("target"), text)

    def set_strategy(self, key: str) -> None:
        self.strategy.setCurrentIndex(self.strategy.findData(key))

    def set_shape(self, n_layers: int, n_heads: int) -> None:
        """Fill the layer/head choices for a model, keeping the selection where possible."""
        for combo, n in ((self.layer, n_layers), (self.head, n_heads)):
            keep = max(combo.currentIndex(), 0)
            combo.blockSignals(True)
            combo.clear()
            combo.addItems([str(i + 1) for i in range(n)])
            combo.setCurrentIndex(min(keep, n - 1))
            combo.blockSignals(False)

    def select_head(self, layer: int, head: int, announce: bool = True) -> None:
        for combo, i in ((self.layer, layer), (self.head, head)):
            if 0 <= i < combo.count():
                combo.blockSignals(True)
                combo.setCurrentIndex(i)
                combo.blockSignals(False)
        if announce:
            self._head_changed()

    def _strategy_changed(self, _index: int) -> None:
        self._show_page()
        self.settingsChanged.emit(self.settings())

    def _head_changed(self, *_args) -> None:
        self.headChanged.emit(max(self.layer.currentIndex(), 0), max(self.head.currentIndex(), 0))
