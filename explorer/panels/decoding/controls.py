"""`DecodingControls`: the strategy and its knobs (Section 6.1's beam 4, α = 0.6 by default), the step
transport and the layer/head choice, flowing onto as many lines as the width needs. It only emits."""
from __future__ import annotations

from PySide6.QtCore import QSignalBlocker, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QLabel,
    QPushButton,
    QSpinBox,
    QStyle,
    QWidget,
)
from superqt import QFlowLayout

from explorer import style
from explorer.panels.layouts import row
from model.interpret.decode_run import STRATEGIES, DecodeSettings

# the knobs of the sampling page, then the beam page: (name, label, spin box, tooltip)
SAMPLE_KNOBS = (
    ("temperature", "T", lambda: QDoubleSpinBox(minimum=0.05, maximum=5.0, singleStep=0.1, value=1.0),
     "Temperature: logits are divided by T before the softmax"),
    ("top_k", "top-k", lambda: QSpinBox(minimum=0, maximum=1000, value=0, specialValueText="off"),
     "Keep only the k most probable tokens (0 = off)"),
    ("top_p", "top-p", lambda: QDoubleSpinBox(minimum=0.05, maximum=1.0, singleStep=0.05, value=1.0),
     "Keep the smallest set of tokens whose probabilities sum to p (nucleus sampling)"),
    ("seed", "seed", lambda: QSpinBox(minimum=0, maximum=999_999, value=0),
     "Random seed: the same seed gives the same sample"),
)
BEAM_KNOBS = (
    ("beam_size", "beam", lambda: QSpinBox(minimum=1, maximum=12, value=4), "Beam size (the paper uses 4)"),
    ("alpha", "α", lambda: QDoubleSpinBox(minimum=0.0, maximum=2.0, singleStep=0.1, value=0.6),
     "Length penalty α: score = log p / ((5 + |Y|) / 6)^α (the paper uses 0.6)"),
)
KNOBS = tuple(knob[0] for knob in SAMPLE_KNOBS + BEAM_KNOBS)
SHARPEST_TIP = ("Show the decoder head that aligns most clearly on this text: each row's largest weight, averaged, "
                "times the share of different tokens the rows pick (a head that puts every row on one token is sharp "
                "and shows nothing); cross-attention where the model has it, else masked self-attention")


def group(*widgets) -> QWidget:
    """One unit of the flowing row: widgets (or label texts) side by side, never split."""
    unit = QWidget()
    row(*(QLabel(w) if isinstance(w, str) else w for w in widgets), parent=unit, margins=0).setSpacing(6)
    return unit


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
        # each strategy's knobs, only the chosen one's shown (greedy and "follow the target" have none)
        self.params = {"sample": group(*(self._knob(*knob) for knob in SAMPLE_KNOBS)),
                       "beam": group(*(self._knob(*knob) for knob in BEAM_KNOBS))}
        icons = self.style()
        for name, icon in (("reset", QStyle.SP_MediaSkipBackward), ("back", QStyle.SP_MediaSeekBackward),
                           ("step", QStyle.SP_MediaSeekForward), ("play", QStyle.SP_MediaPlay)):
            button = QPushButton(icons.standardIcon(icon), name.title())
            button.clicked.connect(lambda _=False, n=name: self.transport.emit(n))
            setattr(self, name, button)
        self.play.setCheckable(True)
        self.step_label = QLabel("–")
        self.step_label.setFont(style.font(style.BASE_POINT_SIZE, bold=True))
        self.layer, self.head = QComboBox(), QComboBox()
        for combo, tip in ((self.layer, "Decoder layer whose attention is shown"), (self.head, "Attention head shown")):
            combo.setMaximumWidth(70)
            combo.setToolTip(tip)
            combo.currentIndexChanged.connect(self._head_changed)
        self.sharpest = QPushButton("Sharpest")
        self.sharpest.setToolTip(SHARPEST_TIP)
        self.sharpest.clicked.connect(self.sharpestRequested)
        flow = QFlowLayout(self)
        flow.setContentsMargins(4, 2, 4, 2)
        flow.setHorizontalSpacing(16)
        flow.setVerticalSpacing(2)
        flow.addWidget(group("Strategy", self.strategy, *self.params.values()))
        flow.addWidget(group(self.reset, self.back, self.step, self.play, self.step_label))
        flow.addWidget(group("Layer", self.layer, "Head", self.head, self.sharpest))
        self._show_page()
        self.strategy.currentIndexChanged.connect(self._strategy_changed)

    def _knob(self, name: str, label: str, make, tip: str) -> QWidget:
        """A labelled spin box, kept as `self.<name>`; it decodes again when the user is done typing."""
        spin = make()
        spin.setToolTip(tip)
        spin.setMaximumWidth(90)
        spin.setKeyboardTracking(False)
        spin.valueChanged.connect(lambda _v: self.settingsChanged.emit(self.settings()))
        setattr(self, name, spin)
        text = QLabel(label)
        text.setToolTip(tip)
        return group(text, spin)

    def settings(self) -> DecodeSettings:
        return DecodeSettings(strategy=self.strategy.currentData(), **{k: getattr(self, k).value() for k in KNOBS})

    def show_settings(self, settings: DecodeSettings) -> None:
        """Show the session's settings without announcing them back as a change."""
        if settings == self.settings():
            return
        blockers = [QSignalBlocker(w) for w in (self.strategy, *(getattr(self, k) for k in KNOBS))]
        self.strategy.setCurrentIndex(max(self.strategy.findData(settings.strategy), 0))
        for name in KNOBS:
            getattr(self, name).setValue(getattr(settings, name))
        for blocker in blockers:
            blocker.unblock()
        self._show_page()

    def _show_page(self) -> None:
        for key, knobs in self.params.items():
            knobs.setVisible(key == self.strategy.currentData())

    def set_target_label(self, text: str) -> None:
        """Name the "follow a given text" strategy as the input bar names that text."""
        self.strategy.setItemText(self.strategy.findData("target"), text)

    def set_strategy(self, key: str) -> None:
        self.strategy.setCurrentIndex(self.strategy.findData(key))

    def set_shape(self, n_layers: int, n_heads: int) -> None:
        """Fill the layer/head choices for a model, keeping the selection where possible."""
        for combo, n in ((self.layer, n_layers), (self.head, n_heads)):
            keep = max(combo.currentIndex(), 0)
            blocker = QSignalBlocker(combo)
            combo.clear()
            combo.addItems([str(i + 1) for i in range(n)])
            combo.setCurrentIndex(min(keep, n - 1))
            blocker.unblock()

    def select_head(self, layer: int, head: int) -> None:
        """Show (layer, head) as selected without announcing it."""
        for combo, i in ((self.layer, layer), (self.head, head)):
            if 0 <= i < combo.count():
                blocker = QSignalBlocker(combo)
                combo.setCurrentIndex(i)
                blocker.unblock()

    def _strategy_changed(self, _index: int) -> None:
        self._show_page()
        self.settingsChanged.emit(self.settings())

    def _head_changed(self, *_args) -> None:
        self.headChanged.emit(max(self.layer.currentIndex(), 0), max(self.head.currentIndex(), 0))
