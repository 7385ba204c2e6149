"""Live internals during training: a fixed probe input, the model's greedy output for it and one
attention map (`model.train.probe_map`), so students watch the reverse task's anti-diagonal
appear; a timeline slider scrubs back through snapshots."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import QComboBox, QGridLayout, QLabel, QLineEdit, QPushButton, QSlider, QWidget

from explorer import style
from explorer.drawing.heatmap import Heatmap
from explorer.panels.knobs import refill
from explorer.panels.layouts import column, row
from model.train.probe_map import ProbeMap, expected_kind, kind_title, pick_names, preferred
from model.train.timeline import timeline_texts

NO_MAP_YET = "The attention map comes\nwith the run's first snapshot."


class ProbeView(QWidget):
    """Signal: probeEdited(text). The panel follows `slider` and `live_button` itself, and places
    `texts` (the probe, its output and the pickers): over the map, or elsewhere on a short screen."""

    probeEdited = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.result, self._probe, self.kind = None, "", None
        self.probe_edit = QLineEdit(placeholderText="probe input (default: the task's first example)",
                                    toolTip="A fixed input the model is run on while it trains; press Enter to "
                                            "change it (after a run: to run its last model on it)",
                                    returnPressed=self._on_return)
        self.probe_edit.setFont(style.font(style.TITLE_POINT_SIZE, mono=True))
        self.output_label = style.eliding_line("—")  # a long untrained babble ends in "…"
        self.output_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.output_label.setFont(style.font(style.TITLE_POINT_SIZE + 2, bold=True, mono=True))
        self.map = Heatmap(colour_bar=True, square=False)  # cells fill the room: a long babble stays readable
        self.map.canvas.setMinimumSize(160, 120)
        self.map_note = pg.TextItem(NO_MAP_YET, anchor=(0.5, 0.5))  # in the empty map until the first snapshot
        self.map_note.setFont(style.role_font("small"))
        self.map_note.setPos(0.5, 0.5)  # the middle of the empty map's 0–1 ranges
        self.map.plot.addItem(self.map_note, ignoreBounds=True)
        self.map.set_title(*kind_title("cross"))
        self.layer_box, self.head_box = QComboBox(), QComboBox()
        for box, word in ((self.layer_box, "layer"), (self.head_box, "head")):
            style.set_font_role(box, "small")
            box.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
            box.setMinimumContentsLength(4)
            box.setPlaceholderText(word)  # (empty until the run's first snapshot)
            box.currentIndexChanged.connect(lambda _i: self._redraw())
        self.layer_box.setToolTip("The layer whose attention the map shows (counted from 1; L2 = layer 2)")
        self.head_box.setToolTip("One head (counted from 1; H1 = head 1), or the mean over the layer's heads")
        self.timeline_label = style.set_font_role(QLabel("step —"), "heading")
        self.slider = QSlider(Qt.Horizontal, toolTip="Go back to a snapshot taken earlier in the run")
        self.live_button = QPushButton("Live", toolTip="Follow the newest snapshot again")
        self.texts = QWidget()
        texts = QGridLayout(self.texts, horizontalSpacing=8)  # the pickers beside the probe and its output
        texts.setContentsMargins(0, 0, 0, 0)
        for at, (text, widget, box) in enumerate((("Probe", self.probe_edit, self.layer_box),
                                                  ("Output", self.output_label, self.head_box))):
            texts.addWidget(style.set_font_role(QLabel(text), "heading"), at, 0)
            texts.addWidget(widget, at, 1)
            texts.addWidget(box, at, 2)
        texts.setColumnStretch(1, 1)
        column(self.texts, (self.map, 1), row(self.timeline_label, (self.slider, 1), self.live_button),
               parent=self).setContentsMargins(4, 0, 0, 0)
        self.clear()

    def _on_return(self) -> None:
        self.probe_edit.setModified(False)  # the next snapshots are of this text
        self.probeEdited.emit(self.probe_edit.text())

    def set_probe_text(self, text: str) -> None:
        if self.probe_edit.text() != text:
            self.probe_edit.setText(text)

    def shown_probe(self) -> str | None:
        """The probe of the snapshot on show (None: none is)."""
        return self._probe if self.result is not None else None

    def set_task(self, name: str, kind: str) -> None:
        """The default probe of a built-in task for a model of `kind` (none for a file of pairs),
        and the map titled with the attention such a model will show."""
        from model.data.tasks import get_task
        from model.train.request import default_probe

        self.set_probe_text("" if name in ("tsv", "") else default_probe(get_task(name), kind))
        if self.result is None and name not in ("tsv", ""):
            self.map.set_title(*kind_title(expected_kind(kind)))

    def show_snapshot(self, step: int, result, probe: str) -> None:
        """One snapshot; the probe field names its input unless the user is typing a new one."""
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
        with QSignalBlocker(self.slider):
            self.slider.setRange(0, max(0, count - 1))
            self.slider.setValue(max(0, index))
        label, tip, slider_tip = timeline_texts(count, index, step, live, running)
        self.timeline_label.setText(label)
        self.timeline_label.setToolTip(tip)
        if count:
            self.slider.setToolTip(slider_tip)
        self.live_button.setEnabled(not live and count > 0)

    def clear(self) -> None:
        self.result, self.kind = None, None
        self._redraw()
        self.output_label.setText("—")
        for box in (self.layer_box, self.head_box):  # back to their placeholders
            refill(box, [])
        self.set_timeline(0, 0, 0, True)

    def _fill_boxes(self, result) -> None:
        n_layers = result.trace.n_layers(self.kind) if self.kind else 0
        n_heads = result.trace.attention(self.kind, 0).shape[1] if self.kind else 0
        for box, names, default in ((self.layer_box, pick_names(n_layers, False, True), n_layers - 1),
                                    (self.head_box, pick_names(n_heads, True, True), 0)):  # "L2", "H1": short
            refill(box, names, max(0, box.currentIndex() if box.count() == len(names) else default))

    def _redraw(self) -> None:
        empty = self.result is None or self.kind is None
        self.map_note.setVisible(empty)
        if empty:
            self.map.clear_data()
            return
        head = self.head_box.currentIndex() - 1
        shown = ProbeMap.of(self.result, self.kind, max(0, self.layer_box.currentIndex()), None if head < 0 else head)
        self.map.set_data(shown.values, shown.rows, shown.cols)
        self.map.set_axis_names(shown.row_name, shown.col_name)
        self.map.set_title(shown.title, shown.tip)


__all__ = ["ProbeView"]
