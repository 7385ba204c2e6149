"""`DecodingControls`: strategy and its knobs, the step transport, and the layer/head choice.

It only reads widgets and emits: `settingsChanged(DecodeSettings)` when the strategy or a
knob changes (the panel decodes again), `transport(str)` for reset/back/step/play, and
`headChanged(layer, head)`, `sharpestRequested()` (the panel picks the head from its run).
Defaults follow Section 6.1 (beam 4, α = 0.6).
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QPoint, Signal
from PySide6.QtWidgets import (
    QBoxLayout,
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

from explorer import style
from explorer.panel_room import offered_room
from model.interpret.frame import STRATEGIES, DecodeSettings


def _labelled(layout: QHBoxLayout, text: str, widget: QWidget, tip: str) -> QWidget:
    label = QLabel(text)
    label.setToolTip(tip)
    widget.setToolTip(tip)
    widget.setMaximumWidth(90)
    layout.addWidget(label)
    layout.addWidget(widget)
    return widget


def _page() -> tuple[QWidget, QHBoxLayout]:
    page = QWidget()
    layout = QHBoxLayout(page)
    layout.setContentsMargins(0, 0, 0, 0)
    return page, layout


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

        sample_page, sl = _page()
        self.temperature = _labelled(sl, "T", QDoubleSpinBox(minimum=0.05, maximum=5.0, singleStep=0.1, value=1.0),
                                     "Temperature: logits are divided by T before the softmax")
        self.top_k = _labelled(sl, "top-k", QSpinBox(minimum=0, maximum=1000, value=0, specialValueText="off"),
                               "Keep only the k most probable tokens (0 = off)")
        self.top_p = _labelled(sl, "top-p", QDoubleSpinBox(minimum=0.05, maximum=1.0, singleStep=0.05, value=1.0),
                               "Keep the smallest set of tokens whose probabilities sum to p (nucleus sampling)")
        self.seed = _labelled(sl, "seed", QSpinBox(minimum=0, maximum=999_999, value=0),
                              "Random seed: the same seed gives the same sample")
        beam_page, bl = _page()
        self.beam_size = _labelled(bl, "beam", QSpinBox(minimum=1, maximum=12, value=4),
                                   "Beam size (the paper uses 4)")
        self.alpha = _labelled(bl, "α", QDoubleSpinBox(minimum=0.0, maximum=2.0, singleStep=0.1, value=0.6),
                               "Length penalty α: score = log p / ((5 + |Y|) / 6)^α (the paper uses 0.6)")
        self.params = QStackedWidget()
        sl.addStretch(1)
        bl.addStretch(1)
        self.params.addWidget(QWidget())
        self.params.addWidget(sample_page)
        self.params.addWidget(beam_page)
        self.params.addWidget(QWidget())  # follow the target: nothing to set
        for page in (sample_page, beam_page):
            page.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Ignored)

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

        row1 = QHBoxLayout()
        row1.addWidget(QLabel("Strategy"))
        row1.addWidget(self.strategy)
        row1.addWidget(self.params, 1)
        row2 = QHBoxLayout()
        for button in (self.reset, self.back, self.step, self.play):
            row2.addWidget(button)
        row2.addSpacing(8)
        row2.addWidget(self.step_label)
        row2.addStretch(1)
        row2.addWidget(QLabel("Layer"))
        row2.addWidget(self.layer)
        row2.addWidget(QLabel("Head"))
        row2.addWidget(self.head)
        row2.addWidget(self.sharpest)
        self.rows = QBoxLayout(QBoxLayout.TopToBottom, self)  # one line where the width allows (resizeEvent)
        self.rows.setContentsMargins(4, 2, 4, 2)
        self.rows.setSpacing(2)
        self.rows.addLayout(row1)
        self.rows.addLayout(row2)
        self.row1, self.row2 = row1, row2
        for row in (row1, row2):  # their own spacing: a row left unset inherits `rows`' (16 on one
            row.setSpacing(6)  # line, 2 on two), so its width would flip the choice back and forth
            # and the layout would never settle

        self.strategy.currentIndexChanged.connect(self._strategy_changed)
        for spin in (self.temperature, self.top_k, self.top_p, self.seed, self.beam_size, self.alpha):
            spin.setKeyboardTracking(False)  # decode again when the user is done typing
            spin.valueChanged.connect(lambda _v: self.settingsChanged.emit(self.settings()))
        self.layer.currentIndexChanged.connect(self._head_changed)
        self.head.currentIndexChanged.connect(self._head_changed)

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._arrange()

    def event(self, event) -> bool:  # noqa: A003 - Qt's name
        """Arranged again when the rows' contents change size without this widget's width changing
        (presentation enlarges the fonts: without this a full-screen window would keep the one line
        of a normal window and the panel would scroll sideways)."""
        handled = super().event(event)
        if event.type() in (QEvent.Type.LayoutRequest, QEvent.Type.FontChange, QEvent.Type.StyleChange,
                            QEvent.Type.Show):
            self._arrange()
        return handled

    def _arrange(self) -> None:
        """Strategy and transport on one line when both fit: a short screen's height goes to the maps."""
        one_line = self._room() >= self.row1.sizeHint().width() + self.row2.sizeHint().width() + 24
        direction = QBoxLayout.LeftToRight if one_line else QBoxLayout.TopToBottom
        if self.rows.direction() != direction:
            self.rows.setDirection(direction)
            self.rows.setSpacing(16 if one_line else 2)

    def _room(self) -> int:
        """The width the row may have: what the dock offers the panel, less the panel's margins
        on both sides of this row. Not its own width: one line sets a minimum that widens the
        panel (it scrolls), and the row would then measure that and stay one line."""
        panel = self.parentWidget()
        while panel is not None and not hasattr(panel, "side_by_side"):
            panel = panel.parentWidget()
        if panel is None:
            return self.width()
        return offered_room(panel).width() - 2 * max(0, self.mapTo(panel, QPoint(0, 0)).x())

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
        index = self.strategy.currentIndex()
        for i in range(self.params.count()):
            policy = QSizePolicy.Preferred if i == index else QSizePolicy.Ignored
            self.params.widget(i).setSizePolicy(policy, policy)
        self.params.setCurrentIndex(index)

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
        index = self.strategy.currentIndex()
        for i in range(self.params.count()):  # only the visible page may ask for width
            policy = QSizePolicy.Preferred if i == index else QSizePolicy.Ignored
            self.params.widget(i).setSizePolicy(policy, policy)
        self.params.setCurrentIndex(index)
        self.settingsChanged.emit(self.settings())

    def _head_changed(self, *_args) -> None:
        self.headChanged.emit(max(self.layer.currentIndex(), 0), max(self.head.currentIndex(), 0))
