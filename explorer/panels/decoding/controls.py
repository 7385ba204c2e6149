"""`DecodingControls`: the strategy and its knobs (Section 6.1's beam 4, α = 0.6 by default), the step
transport (`Transport`) and the layer/head choice, flowing onto as many lines as the width needs."""
from __future__ import annotations

from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QLabel,
    QPushButton,
    QSpinBox,
    QWidget,
)
from superqt import QFlowLayout, QLabeledDoubleSlider

from explorer.panels.knobs import refill
from explorer.panels.layouts import row
from explorer.panels.transport import Transport
from model.interpret.decode_knobs import BEAM_KNOBS, KNOBS, SAMPLE_KNOBS, SHARPEST_TIP, Knob
from model.interpret.decode_run import STRATEGIES, DecodeSettings

PLAY_INTERVAL_MS = 800


def group(*widgets) -> QWidget:
    """One unit of the flowing row: widgets (or label texts) side by side, never split."""
    unit = QWidget()
    row(*(QLabel(w) if isinstance(w, str) else w for w in widgets), parent=unit, margins=0).setSpacing(6)
    return unit


def knob_box(knob: Knob, slider: bool = False, high: float | None = None) -> QWidget:
    """A control over the knob's range (up to `high`) at its default: a labelled slider, or a spin
    box that announces its value when the user is done typing."""
    if slider:
        box = QLabeledDoubleSlider(Qt.Horizontal)
        box.setDecimals(2)
    else:
        box = QSpinBox() if knob.whole else QDoubleSpinBox()
        box.setSpecialValueText(knob.off)
        box.setKeyboardTracking(False)
    box.setRange(knob.low, knob.high if high is None else high)
    box.setSingleStep(knob.step)
    box.setValue(knob.default)
    box.setToolTip(knob.tip)
    return box


class DecodingControls(QWidget):
    settingsChanged = Signal(object)  # DecodeSettings

    def __init__(self, parent=None):
        super().__init__(parent)
        self.strategy = QComboBox()
        refill(self.strategy, [(label, key) for key, label in STRATEGIES.items()])
        self.strategy.setToolTip("How the next token is chosen from the model's distribution")
        # each strategy's knobs, only the chosen one's shown (greedy and "follow the target" have none)
        self.params = {"sample": group(*map(self._knob, SAMPLE_KNOBS)), "beam": group(*map(self._knob, BEAM_KNOBS))}
        self.transport = Transport(PLAY_INTERVAL_MS)
        self.transport.slider.setMinimumWidth(120)
        self.layer, self.head = QComboBox(), QComboBox()
        for combo, tip in ((self.layer, "Decoder layer whose attention is shown"), (self.head, "Attention head shown")):
            combo.setMaximumWidth(70)
            combo.setToolTip(tip)
        self.sharpest = QPushButton("Sharpest")
        self.sharpest.setToolTip(SHARPEST_TIP)
        flow = QFlowLayout(self)
        flow.setContentsMargins(4, 2, 4, 2)
        flow.setHorizontalSpacing(16)
        flow.setVerticalSpacing(2)
        flow.addWidget(group("Strategy", self.strategy, *self.params.values()))
        flow.addWidget(self.transport)
        flow.addWidget(group("Layer", self.layer, "Head", self.head, self.sharpest))
        self._show_page()
        self.strategy.currentIndexChanged.connect(self._strategy_changed)

    def _knob(self, knob: Knob) -> QWidget:
        """A labelled spin box, kept as `self.<name>`; it decodes again when the user is done typing."""
        spin = knob_box(knob)
        spin.setMaximumWidth(90)
        spin.valueChanged.connect(lambda _v: self.settingsChanged.emit(self.settings()))
        setattr(self, knob.name, spin)
        return group(QLabel(knob.label, toolTip=knob.tip), spin)

    def settings(self) -> DecodeSettings:
        return DecodeSettings(strategy=self.strategy.currentData(), **{k: getattr(self, k).value() for k in KNOBS})

    def show_settings(self, settings: DecodeSettings) -> None:
        """Show the session's settings without announcing them back as a change."""
        if settings == self.settings():
            return
        with QSignalBlocker(self):  # (the boxes' own signals still show the strategy's knobs)
            self.strategy.setCurrentIndex(max(self.strategy.findData(settings.strategy), 0))
            for name in KNOBS:
                getattr(self, name).setValue(getattr(settings, name))

    def _show_page(self) -> None:
        for key, knobs in self.params.items():
            knobs.setVisible(key == self.strategy.currentData())

    def set_target_label(self, text: str) -> None:
        """Name the "follow a given text" strategy as the input bar names that text."""
        self.strategy.setItemText(self.strategy.findData("target"), text)

    def set_strategy(self, key: str) -> None:
        self.strategy.setCurrentIndex(self.strategy.findData(key))

    def show_heads(self, n_layers: int, n_heads: int, layer: int, head: int) -> None:
        """Offer a model's layers and heads with (layer, head) chosen, announced to no one."""
        for combo, n, chosen in ((self.layer, n_layers, layer), (self.head, n_heads, head)):
            refill(combo, [str(i + 1) for i in range(n)], min(chosen, n - 1))

    def _strategy_changed(self, _index: int) -> None:
        self._show_page()
        self.settingsChanged.emit(self.settings())
