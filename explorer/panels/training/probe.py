"""Live internals during training: one fixed probe input, the model's current greedy output for
it, and one attention map — so students watch the reverse task's anti-diagonal appear.

The map shows the encoder–decoder (cross) attention of Section 3.2.3 when the model has one
(else the first kind it has: a decoder-only model's masked self-attention, an encoder-only
model's self-attention), averaged over heads or one head: rows are decoder positions
labelled with the token each one *predicts*, columns the source tokens it attends to. A
timeline slider scrubs back through earlier snapshots of the same probe.
"""
from __future__ import annotations

import math
from functools import partial

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFont, QFontMetrics
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
from superqt import QElidingLabel

from explorer import style
from explorer.drawing.plot_style import axis_title_width
from explorer.panels.training.probe_axes import axis_title, left_width, map_axes, tick_font, token_ticks
from explorer.panels.training.timed_canvas import TimedCanvas
from model.nn.kinds import AttentionKind
from model.nn.kinds import model_kind as kind_named

pg.setConfigOptions(imageAxisOrder="row-major")  # [query, key] must not show transposed

SHORT_MAP_CANVAS = 220  # px: a shorter map canvas drops "source token" under the letters (the title says it)

KIND_TITLES = {kind.value: kind.title for kind in AttentionKind}


KIND_TIPS = {
    "cross": "Which source tokens each decoder position looks at (Section 3.2.3); rows are labelled with the "
             "token that position predicts",
    "encoder": "Which input tokens each position looks at (Section 3.2.1); a masked LM must fill each [MASK] "
               "from the words around it",
    "decoder_self": "Which earlier tokens each position looks at when predicting the next one (masked "
                    "self-attention, Section 3.2.3); rows are labelled with the token that position predicts",
}


def attention_map(result, kind: str, layer: int, head: int | None) -> np.ndarray:
    """(T_q, T_k) weights of the first batch row: one head, or the mean over heads."""
    weights = result.trace.attention(kind, layer)[0].numpy()  # (h, Tq, Tk)
    return weights.mean(axis=0) if head is None else weights[head]


def preferred_kind(result) -> str | None:
    return _preferred(result.trace.attention_kinds())


def _preferred(kinds) -> str | None:
    """The attention a probe map shows first: cross-attention where there is one."""
    return "cross" if "cross" in kinds else (kinds[0] if kinds else None)


def _label(text: str = " ", pt: int = style.BASE_POINT_SIZE, bold: bool = False, mono: bool = False) -> QLabel:
    label = QLabel(text)
    label.setFont(style.font(pt, bold=bold, mono=mono))
    return label


class ProbeView(QWidget):
    """Signals: probeEdited(text), timelineMoved(index), showInOthersChanged(on)."""

    probeEdited = Signal(str)
    timelineMoved = Signal(int)
    showInOthersChanged = Signal(bool)
    liveRequested = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.result = None
        self.kind: str | None = None
        self._build()

    def _build(self) -> None:
        self.probe_edit = QLineEdit()
        self.probe_edit.setFont(style.font(style.TITLE_POINT_SIZE, mono=True))
        self.probe_edit.setPlaceholderText("probe input (default: the task's first example)")
        self.probe_edit.setToolTip("A fixed input the model is run on while it trains; press Enter to change it")
        self.probe_edit.returnPressed.connect(lambda: self.probeEdited.emit(self.probe_edit.text()))
        # Read-only line edit, not a label: a long untrained babble scrolls instead of widening the panel.
        # Never wider than its row: a long output ends in "…", the whole output in the tooltip.
        self.output_label = QElidingLabel("—")
        self.output_label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self.output_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.output_label.setFont(style.font(style.TITLE_POINT_SIZE + 2, bold=True, mono=True))
        self.layer_box, self.head_box = QComboBox(), QComboBox()
        for box in (self.layer_box, self.head_box):
            box.setFont(style.font(style.SMALL_POINT_SIZE))
            box.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
            box.setMinimumContentsLength(6)
            box.currentIndexChanged.connect(lambda _i: self._redraw())
        self.layer_box.setPlaceholderText("layer")  # (empty until the run's first snapshot)
        self.head_box.setPlaceholderText("head")
        self.layer_box.setToolTip("The layer whose attention the map shows (counted from 1; L2 = layer 2)")
        self.head_box.setToolTip("One head (counted from 1; H1 = head 1), or the mean over the layer's heads")
        self.show_others = QCheckBox("Show in other panels")
        self.show_others.setChecked(True)
        self.show_others.setToolTip("Show a copy of the model being trained (about once a second) in every other "
                                    "panel, on the session's text, in place of the loaded model; it comes back "
                                    "when the run ends, on “Back to …”, or when this is turned off")
        self.show_others.toggled.connect(self.showInOthersChanged)

        grid = QGridLayout()
        grid.setHorizontalSpacing(8)
        grid.addWidget(_label("Probe", bold=True), 0, 0)
        grid.addWidget(self.probe_edit, 0, 1, 1, 3)
        grid.addWidget(_label("Output", bold=True), 1, 0)
        grid.addWidget(self.output_label, 1, 1, 1, 3)
        grid.setColumnStretch(1, 1)

        self.map_title = _label("Cross-attention", style.BASE_POINT_SIZE, bold=True)
        self.map_title.setToolTip(KIND_TIPS["cross"])
        self.pick = QGridLayout()  # beside the title when the column is wide enough, else under it
        self.pick.setHorizontalSpacing(6)
        self._pick_beside = None
        self._arrange_pick(False)
        self.compact = False  # short picker names ("L2", "H1"), so that they fit beside the title

        self.canvas = TimedCanvas()
        self.canvas.setBackground(style.current().canvas)
        self.plot = style.still_plot(self.canvas.addPlot())
        self.plot.invertY(True)
        self.plot.setAspectLocked(False)
        self.image = pg.ImageItem(levels=(0.0, 1.0))
        self.image.setColorMap(pg.colormap.get(style.SEQUENTIAL))
        self.plot.addItem(self.image)
        for name, text in (("bottom", "source token"), ("left", "predicting")):
            axis = self.plot.getAxis(name)
            axis.setTickFont(style.font(style.SMALL_POINT_SIZE, mono=True))
            axis.setStyle(hideOverlappingLabels=False)  # a first word ("<bos>") is wider than its cell
            axis.setPen(style.MUTED.name())
            axis.setTextPen(style.TEXT.name())
            axis.setLabel(text, color=style.TEXT.name(), **{"font-size": style.css_pt(style.SMALL_POINT_SIZE)})
        self.plot.getAxis("left").setWidth(70)
        self.bar = bar = pg.ColorBarItem(values=(0, 1), colorMap=pg.colormap.get(style.SEQUENTIAL),
                                         interactive=False, width=14)
        bar.axis.setTickFont(style.font(style.SMALL_POINT_SIZE))
        self.canvas.addItem(bar)
        self.canvas.setMinimumSize(200, 140)
        self._refit = QTimer(self, singleShot=True, interval=0)  # once the canvas has its new size:
        self._refit.timeout.connect(self._redraw)                 # the labels that fit it (all, or a count)
        self.canvas.resized.connect(self._refit.start)
        self._blank_axes()

        self.slider = QSlider(Qt.Horizontal)
        self.slider.setRange(0, 0)
        self.slider.setToolTip("Go back to a snapshot taken earlier in the run")
        self.slider.valueChanged.connect(self.timelineMoved)
        self.live_button = QPushButton("Live")
        self.live_button.setToolTip("Follow the newest snapshot again")
        self.live_button.clicked.connect(self.liveRequested)
        self.live_button.setEnabled(False)  # until the slider looks back at an earlier snapshot
        self.timeline_label = _label("step —", style.SMALL_POINT_SIZE, bold=True)
        self.timeline_label.setToolTip("The step of the snapshot shown; drag the slider to go back in the run")
        timeline = QHBoxLayout()
        timeline.addWidget(self.timeline_label)
        timeline.addWidget(self.slider, 1)
        timeline.addWidget(self.live_button)

        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 0, 0, 0)
        lay.addLayout(grid)
        lay.addLayout(self.pick)
        lay.addWidget(self.canvas, 1)
        lay.addLayout(timeline)
        lay.addWidget(self.show_others)

    def _arrange_pick(self, beside: bool) -> None:
        """The map's title and its layer / head pickers: one row (saves a row on a short screen)
        when they fit the column, else the pickers under the title."""
        if beside == self._pick_beside:
            return
        self._pick_beside = beside
        for w in (self.map_title, self.layer_box, self.head_box):
            self.pick.removeWidget(w)
        if beside:
            self.pick.addWidget(self.map_title, 0, 0)
            self.pick.addWidget(self.layer_box, 0, 1)
            self.pick.addWidget(self.head_box, 0, 2)
        else:
            self.pick.addWidget(self.map_title, 0, 0, 1, 3)
            self.pick.addWidget(self.layer_box, 1, 0)
            self.pick.addWidget(self.head_box, 1, 1)
        for c in range(4):
            self.pick.setColumnStretch(c, 1 if c == 3 else 0)

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._fit_pick()

    def pick_row_width(self) -> int:
        """The column's width at which the map's title and its pickers share one row."""
        return self.map_title.sizeHint().width() + sum(w.sizeHint().width() for w in (self.layer_box, self.head_box)) + 24

    def _fit_pick(self) -> None:
        self._arrange_pick(self.width() >= self.pick_row_width())

    def set_compact(self, compact: bool) -> None:
        """A short screen (a projector): the pickers say "L2" and "H1", as the decoding
        panel's map titles do, so that they fit beside the map's title. The row they no longer
        take goes to the map, whose row labels need it (all ten of a 10-letter probe's)."""
        if compact == self.compact:
            return
        self.compact = compact
        for box in (self.layer_box, self.head_box):
            box.setMinimumContentsLength(4 if compact else 6)
            for i in range(box.count()):
                box.setItemText(i, self._pick_name(box, i))
            box.setMinimumWidth(box.sizeHint().width())  # (QComboBox keeps its old minimumSizeHint)
        self._fit_pick()

    def _pick_name(self, box: QComboBox, index: int) -> str:
        """Layers and heads counted from 1; the head picker's first entry is the mean of the heads."""
        if box is self.head_box and index == 0:
            return "mean"
        number = index if box is self.head_box else index + 1
        word, short = ("head", "H") if box is self.head_box else ("layer", "L")
        return f"{short}{number}" if self.compact else f"{word} {number}"

    # -- public ------------------------------------------------------------------------------
    def set_probe_text(self, text: str) -> None:
        if self.probe_edit.text() != text:
            self.probe_edit.setText(text)

    def set_task(self, name: str, kind: str) -> None:
        """The default probe of a built-in task for a model of `kind` (none for a file of pairs)."""
        if name in ("tsv", ""):
            self.set_probe_text("")
            return
        from explorer.panels.training.setup import default_probe
        from model.data.tasks import get_task

        self.set_probe_text(default_probe(get_task(name), kind))
        self.expect_kind(kind)

    def show_snapshot(self, step: int, result, probe: str) -> None:
        """Show one snapshot (the newest while live, or the one picked on the timeline)."""
        first = self.result is None
        self.result = result
        kind = preferred_kind(result)
        if kind != self.kind or first:
            self.kind = kind
            self._fill_boxes(result)
        self.output_label.setText(result.output_text or "(empty)")
        self.output_label.setToolTip(f"{self.output_label.text()}\n(greedy output for {probe!r} after {step} steps)")
        self._redraw()

    def set_timeline(self, count: int, index: int, step: int, live: bool) -> None:
        self.slider.blockSignals(True)
        self.slider.setRange(0, max(0, count - 1))
        self.slider.setValue(max(0, index))
        self.slider.blockSignals(False)
        if count == 0:
            self.timeline_label.setText("step —")
        else:
            # "latest", not "live": after a run stops the newest snapshot is not live, and "live"
            # would contradict the "stopped" message beside it
            self.timeline_label.setText(f"step {step:,} ({'latest' if live else 'past'})")
            self.slider.setToolTip(f"Snapshot {index + 1} of {count}: drag to go back to an earlier step of the run")
        self.live_button.setEnabled(not live and count > 0)

    def expect_kind(self, model_kind: str) -> None:
        """Before a run's first snapshot: title the map with the attention this kind of model
        will show (cross-attention needs both stacks)."""
        if self.result is None:
            kind = _preferred(kind_named(model_kind).attention_kinds)
            self.map_title.setText(KIND_TITLES[kind])
            self.map_title.setToolTip(KIND_TIPS[kind])

    def _blank_axes(self) -> None:
        """No snapshot yet: an empty square, not pyqtgraph's default numbers around nothing."""
        for name in ("bottom", "left"):
            self.plot.getAxis(name).setTicks([[]])
        self.plot.setRange(xRange=(0, 1), yRange=(0, 1), padding=0)

    def clear(self) -> None:
        self.result, self.kind = None, None
        self.image.clear()
        self._blank_axes()
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
            box.addItems([self._pick_name(box, i) for i in range(count)])
            box.setCurrentIndex(max(0, keep))
            box.blockSignals(False)

    def selection(self) -> tuple[str | None, int, int | None]:
        head = self.head_box.currentIndex() - 1
        return self.kind, max(0, self.layer_box.currentIndex()), (None if head < 0 else head)

    def current_map(self) -> np.ndarray | None:
        kind, layer, head = self.selection()
        if self.result is None or kind is None:
            return None
        return attention_map(self.result, kind, layer, head)

    def _layout_axes(self, keys: list[str], queries: list[str]) -> tuple[QFont, int, QFont, int, float]:
        """Fonts and how many labels fit, for the columns then the rows; and the map's height.

        Computed from the canvas' size and font metrics, not read back from pyqtgraph's axes
        (their sizes follow what they drew last: a first draw thinned rows a second one named).
        The bottom axis is given the height it needs: its labels, and "source token" under them
        unless the canvas is short (the map's title says what the columns are)."""
        small = QFontMetrics(style.font(style.SMALL_POINT_SIZE, mono=True))
        left_w = left_width(small, queries)  # the widest it can be: the rows' largest font
        bar_w = self.bar.geometry().width() or 60
        room = max(1.0, self.canvas.width() - left_w - bar_w - 16)
        col_font, cols_fit = tick_font(keys, room, rows=False)
        bottom = self.plot.getAxis("bottom")
        caption = self.canvas.height() >= SHORT_MAP_CANVAS
        height = QFontMetrics(col_font).height() + bottom.style["tickTextOffset"][1] + max(0, bottom.style["tickLength"])
        if caption:
            height += bottom.label.boundingRect().height() * 0.8  # as pyqtgraph adds it
        bottom.setHeight(int(math.ceil(height)))
        # less the margins, read from the canvas' layout and the plot's own rather than assumed,
        # so the map's height is the one drawn and a title measured to fit stays within its axis
        _l, top, _r, below = self.canvas.ci.layout.getContentsMargins()
        _l, plot_top, _r, plot_below = self.plot.layout.getContentsMargins()
        map_h = max(0.0, self.canvas.height() - height - top - below - plot_top - plot_below)
        row_font, rows_fit = tick_font(queries, map_h, rows=True)
        return col_font, cols_fit, row_font, rows_fit, map_h

    def _redraw(self) -> None:
        values = self.current_map()
        if values is None:
            self.image.clear()
            return
        kind, layer, head = self.selection()
        self.image.setImage(values, autoLevels=False, levels=(0.0, 1.0))
        self.image.setRect(0, 0, values.shape[1], values.shape[0])
        keys, queries, key_title, query_title = map_axes(self.result, kind)
        # Room for whole labels: word tokens ("bread", "[MASK]") are far wider than characters.
        keys, queries = keys[: values.shape[1]], queries[: values.shape[0]]
        col_font, cols_fit, row_font, rows_fit, map_h = self._layout_axes(keys, queries)
        left, bottom = self.plot.getAxis("left"), self.plot.getAxis("bottom")
        bottom.setTickFont(col_font)
        left.setTickFont(row_font)
        col_ticks, row_ticks = token_ticks(keys, cols_fit), token_ticks(queries, rows_fit)
        bottom.setTicks(col_ticks)
        left.setTicks(row_ticks)
        left.setWidth(left_width(QFontMetrics(row_font), queries))
        self.plot.setRange(xRange=(0, values.shape[1]), yRange=(0, values.shape[0]), padding=0)
        self.map_title.setText(KIND_TITLES.get(kind, kind))
        self.map_title.setToolTip(KIND_TIPS.get(kind, ""))
        # a thinned axis says so (the grid's token axes do the same): no label is dropped silently
        for axis, title, ticks, pieces, length in ((left, query_title, row_ticks, queries, map_h),
                                                   (bottom, key_title, col_ticks, keys, self.canvas.width())):
            advance = partial(axis_title_width, axis)  # (as drawn: its HTML size, font and margins)
            axis.setLabel(axis_title(title, len(ticks[0]), len(pieces), length, advance))
        bottom.showLabel(self.canvas.height() >= SHORT_MAP_CANVAS)  # (setLabel shows it)


__all__ = ["ProbeView", "attention_map", "preferred_kind"]
