"""Live internals during training: one fixed probe input, the model's current greedy output for
it, and one attention map — so students watch the reverse task's anti-diagonal appear.

The map shows the encoder–decoder (cross) attention of Section 3.2.3 when the model has one
(else the first kind it has: a decoder-only model's masked self-attention, an encoder-only
model's self-attention), averaged over heads or one head, drawn by the app's one map component
(`Heatmap`: its label policy, its "k of n" count). A timeline slider scrubs back through
earlier snapshots of the same run.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from explorer import style
from explorer.drawing.heatmap import Heatmap
from model.train.probe_map import ProbeMap, expected_kind, kind_title, pick_names, preferred
from model.train.timeline import timeline_texts

SHOW_OTHERS_TIP = ("Show a copy of the model being trained (about once a second) in every other panel, on the "
                   "session's text, in place of the loaded model; it comes back when the run ends, on “Back to …”, "
                   "or when this is turned off")


def _label(text: str = " ", pt: int = style.BASE_POINT_SIZE, bold: bool = False) -> QLabel:
    label = QLabel(text)
    label.setFont(style.font(pt, bold=bold))
    return label


class ProbeView(QWidget):
    """Signals: probeEdited(text), timelineMoved(index), showInOthersChanged(on), liveRequested."""

    probeEdited = Signal(str)
    timelineMoved = Signal(int)
    showInOthersChanged = Signal(bool)
    liveRequested = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.result = None
        self._probe = ""
        self.kind: str | None = None
        self.compact = False  # short picker names ("L2", "H1")
        self.probe_edit = QLineEdit()
        self.probe_edit.setFont(style.font(style.TITLE_POINT_SIZE, mono=True))
        self.probe_edit.setPlaceholderText("probe input (default: the task's first example)")
        self.probe_edit.setToolTip("A fixed input the model is run on while it trains; press Enter to change it "
                                   "(after a run: to run its last model on it)")
        self.probe_edit.returnPressed.connect(self._on_return)
        self.output_label = style.eliding_line("—")  # a long untrained babble ends in "…"
        self.output_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.output_label.setFont(style.font(style.TITLE_POINT_SIZE + 2, bold=True, mono=True))
        self.map_title = style.eliding_line()  # the map's name, elided where the pickers need the room
        self.map_title.setFont(style.font(style.BASE_POINT_SIZE, bold=True))
        self._set_title(*kind_title("cross"))
        self.layer_box, self.head_box = QComboBox(), QComboBox()
        for box, word in ((self.layer_box, "layer"), (self.head_box, "head")):
            box.setFont(style.font(style.SMALL_POINT_SIZE))
            box.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
            box.setMinimumContentsLength(6)
            box.setPlaceholderText(word)  # (empty until the run's first snapshot)
            box.currentIndexChanged.connect(lambda _i: self._redraw())
        self.layer_box.setToolTip("The layer whose attention the map shows (counted from 1; L2 = layer 2)")
        self.head_box.setToolTip("One head (counted from 1; H1 = head 1), or the mean over the layer's heads")
        self.map = Heatmap(colour_bar=True, square=False)  # cells fill the room: a long babble stays readable
        self.map.canvas.setMinimumSize(160, 120)
        self.slider = QSlider(Qt.Horizontal)
        self.slider.setRange(0, 0)
        self.slider.setToolTip("Go back to a snapshot taken earlier in the run")
        self.slider.valueChanged.connect(self.timelineMoved)
        self.live_button = QPushButton("Live")
        self.live_button.setToolTip("Follow the newest snapshot again")
        self.live_button.clicked.connect(self.liveRequested)
        self.live_button.setEnabled(False)  # until the slider looks back at an earlier snapshot
        self.timeline_label = _label("step —", style.SMALL_POINT_SIZE, bold=True)
        self.show_others = QCheckBox("Show in other panels")
        self.show_others.setChecked(True)
        self.show_others.setToolTip(SHOW_OTHERS_TIP)
        self.show_others.toggled.connect(self.showInOthersChanged)

        grid = QGridLayout()
        grid.setHorizontalSpacing(8)
        grid.addWidget(_label("Probe", bold=True), 0, 0)
        grid.addWidget(self.probe_edit, 0, 1)
        grid.addWidget(_label("Output", bold=True), 1, 0)
        grid.addWidget(self.output_label, 1, 1)
        grid.setColumnStretch(1, 1)
        pick = QHBoxLayout()  # the map's title and what it shows, in one row
        pick.addWidget(self.map_title, 1)
        pick.addWidget(self.layer_box)
        pick.addWidget(self.head_box)
        timeline = QHBoxLayout()
        timeline.addWidget(self.timeline_label)
        timeline.addWidget(self.slider, 1)
        timeline.addWidget(self.live_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 0, 0, 0)
        lay.addLayout(grid)
        lay.addLayout(pick)
        lay.addWidget(self.map, 1)
        lay.addLayout(timeline)
        lay.addWidget(self.show_others)

    def _on_return(self) -> None:
        self.probe_edit.setModified(False)  # the next snapshots are of this text
        self.probeEdited.emit(self.probe_edit.text())

    def set_compact(self, compact: bool) -> None:
        """A short screen: the pickers say "L2" and "H1", as the decoding panel's map titles do,
        and give their width to the map's title."""
        if compact == self.compact:
            return
        self.compact = compact
        for box in (self.layer_box, self.head_box):
            box.setMinimumContentsLength(4 if compact else 6)
            for i, name in enumerate(self._pick_names(box, box.count())):
                box.setItemText(i, name)

    def _pick_names(self, box: QComboBox, count: int) -> list[str]:
        heads = box is self.head_box
        return pick_names(count - heads, heads, self.compact)

    # -- public ------------------------------------------------------------------------------
    def set_probe_text(self, text: str) -> None:
        if self.probe_edit.text() != text:
            self.probe_edit.setText(text)

    def shown_probe(self) -> str | None:
        """The probe of the snapshot on show (None: none is)."""
        return self._probe if self.result is not None else None

    def set_task(self, name: str, kind: str) -> None:
        """The default probe of a built-in task for a model of `kind` (none for a file of pairs)."""
        if name in ("tsv", ""):
            self.set_probe_text("")
            return
        from model.data.tasks import get_task
        from model.train.request import default_probe

        self.set_probe_text(default_probe(get_task(name), kind))
        self.expect_kind(kind)

    def show_snapshot(self, step: int, result, probe: str) -> None:
        """Show one snapshot (the newest while live, or the one picked on the timeline); the probe
        field says what it was run on, unless the user is typing a new probe."""
        first = self.result is None
        self.result, self._probe = result, probe
        if not self.probe_edit.isModified():
            self.set_probe_text(probe)
        kind = preferred(result.trace.attention_kinds())
        if kind != self.kind or first:
            self.kind = kind
            self._fill_boxes(result)
        self.output_label.setText(result.output_text or "(empty)")
        self.output_label.setToolTip(f"{self.output_label.text()}\n(greedy output for {probe!r} after {step:,} steps)")
        self._redraw()

    def set_timeline(self, count: int, index: int, step: int, live: bool, running: bool = False) -> None:
        """The slider over `count` snapshots at `index`, and its words (`timeline_texts`)."""
        self.slider.blockSignals(True)
        self.slider.setRange(0, max(0, count - 1))
        self.slider.setValue(max(0, index))
        self.slider.blockSignals(False)
        label, tip, slider_tip = timeline_texts(count, index, step, live, running)
        self.timeline_label.setText(label)
        self.timeline_label.setToolTip(tip)
        if count:
            self.slider.setToolTip(slider_tip)
        self.live_button.setEnabled(not live and count > 0)

    def expect_kind(self, model_kind: str) -> None:
        """Before a run's first snapshot: title the map with the attention this kind of model will
        show (cross-attention needs both stacks)."""
        if self.result is None:
            self._set_title(*kind_title(expected_kind(model_kind)))

    def _set_title(self, title: str, tip: str) -> None:
        self.map_title.setText(title)
        self.map_title.setToolTip(tip)

    def clear(self) -> None:
        self.result, self.kind = None, None
        self.map.clear_data()
        self.output_label.setText("—")
        for box in (self.layer_box, self.head_box):  # back to their placeholders
            box.blockSignals(True)
            box.clear()
            box.blockSignals(False)
        self.set_timeline(0, 0, 0, True)

    # -- drawing -----------------------------------------------------------------------------
    def _fill_boxes(self, result) -> None:
        n_layers = result.trace.n_layers(self.kind) if self.kind else 0
        n_heads = result.trace.attention(self.kind, 0).shape[1] if self.kind else 0
        for box, count, default in ((self.layer_box, n_layers, n_layers - 1), (self.head_box, n_heads + 1, 0)):
            box.blockSignals(True)
            keep = box.currentIndex() if box.count() == count else default
            box.clear()
            box.addItems(self._pick_names(box, count))
            box.setCurrentIndex(max(0, keep))
            box.blockSignals(False)

    def selection(self) -> tuple[str | None, int, int | None]:
        head = self.head_box.currentIndex() - 1
        return self.kind, max(0, self.layer_box.currentIndex()), (None if head < 0 else head)

    def _redraw(self) -> None:
        kind, layer, head = self.selection()
        if self.result is None or kind is None:
            self.map.clear_data()
            return
        shown = ProbeMap.of(self.result, kind, layer, head)
        self.map.set_data(shown.values, shown.rows, shown.cols)
        self.map.set_axis_names(shown.row_name, shown.col_name)
        self._set_title(shown.title, shown.tip)

__all__ = ["ProbeView"]
