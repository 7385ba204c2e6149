"""Compare checkpoints: the model (A) and another of the same architecture (B) on the same input:
each output scored by both, the selected head's maps with B − A, and which heads changed most.
B is the session's `compare`; a slider steps through B's run's snapshots. Computed off the GUI thread."""
from __future__ import annotations

import html
from functools import partial
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QSignalBlocker, Qt, QTimer, Signal
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QFileDialog, QPushButton, QSlider, QTabWidget, QToolButton, QWidget

from explorer import style
from explorer.drawing import plot_style as st
from explorer.drawing.heatmap import Heatmap, colour_bar_canvas
from explorer.drawing.label_axis import label_font
from explorer.panels.attention.head_picker import HeadPicker, PickedHead
from explorer.panels.attention.view_tabs import ViewTabs
from explorer.panels.base import Panel
from explorer.panels.compare.outputs import OutputBars
from explorer.panels.layouts import column, row
from explorer.panels.texts import say, text_label
from explorer.rich_eliding_label import RichElidingLabel
from explorer.screen import ScreenClass
from explorer.state import KIND_LABELS, SessionState
from explorer.theme import notifier
from model.interpret.attention_maps import token_names
from model.interpret.comparison import MIN_SCALE, symmetric_scale
from model.interpret.comparison_texts import cell_text, disagreement_text, outputs_forms
from model.io.checkpoints import UNTRAINED
from model.io.compare_cache import ModelCache
from model.io.snapshots import describe_reference, resolve_reference, run_snapshots

VIEWS = ("maps", "outputs", "heads")
VIEW_TITLES = ("Attention: A | B | B − A", "Outputs, scored by both", "Which heads changed")
HINT = ("Compare the model (A) with another checkpoint of the same architecture (B): “Untrained B” shows what "
        "training changed; “Open B…” takes a checkpoint, or start with --compare DIR. A run trained with "
        "--snapshots DIR gives a slider over its steps.")
SLIDER_DELAY_MS = 150  # dragging the slider: compare where it rests, not every snapshot passed


class ComparisonMaps(QWidget):
    """A, B and B − A side by side, or (`set_together(False)`) one of A and B, chosen by `switch`,
    beside B − A. Signals: hovered(text) with A's, B's weight and their difference under the mouse."""

    hovered = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.map_a = Heatmap(colormap=st.weight_cmap(), levels=st.WEIGHT_LEVELS)
        self.map_b = Heatmap(colormap=st.weight_cmap(), levels=st.WEIGHT_LEVELS)
        self.map_diff = Heatmap(colormap=st.signed_cmap(), levels=(-1.0, 1.0))
        self.plots = (self.map_a, self.map_b, self.map_diff)
        weight_canvas, _ = colour_bar_canvas(st.weight_cmap(), st.WEIGHT_LEVELS)
        diff_canvas, self.diff_bar = colour_bar_canvas(st.signed_cmap(), (-1.0, 1.0))
        sign = int(QFontMetricsF(label_font()).horizontalAdvance("−0"))  # room for "−0.56", the scale's low end
        self.diff_bar.axis.setWidth(int(self.diff_bar.axis.width()) + sign)
        diff_canvas.setFixedWidth(diff_canvas.width() + sign)
        row((self.map_a, 1), (self.map_b, 1), weight_canvas, (self.map_diff, 1), diff_canvas,  # bars beside:
            parent=self, margins=0)  # the maps are one size
        self.show_a, self.show_b = (QToolButton(text=m, checkable=True, autoExclusive=True,
                                                toolTip=f"{m}'s map beside B − A") for m in "AB")
        self.show_a.setChecked(True)
        self.switch = QWidget()  # (the panel places it)
        row(text_label("Map:", st.LABEL_PT), self.show_a, self.show_b, parent=self.switch, margins=0)
        self.show_b.toggled.connect(lambda _on: self.set_together(self.together))
        self.together = True
        for heatmap in self.plots:  # every map named alike: equal room for each (the tokens: the shared line)
            heatmap.set_axis_names("query", "key")
            heatmap.describe = lambda q, k, h=heatmap: self._describe(h, q, k)
            heatmap.hovered.connect(self.hovered)
        self.identical = pg.TextItem("identical", anchor=(0.5, 0.5))  # B − A = 0 everywhere
        self.identical.setFont(st.font(st.LABEL_PT, bold=True))
        self.identical.setVisible(False)
        self.map_diff.plot.addItem(self.identical, ignoreBounds=True)
        notifier().changed.connect(self._recolour)  # a TextItem keeps the colour it was given
        self._recolour()
        self.scale = 1.0
        self.values: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self.diff_ticks: list[tuple[float, str]] = []  # B − A's bar: its values named, the scale's ends too

    def set_maps(self, a: np.ndarray, b: np.ndarray, allowed: np.ndarray, q_labels: list[str], k_labels: list[str],
                 head: str) -> None:
        """Draw one head of A and B (T_q × T_k each) and B − A; `head` names it ("L1 H2")."""
        diff = b - a
        self.values = (a, b, diff)
        self.scale, zero = symmetric_scale(diff, allowed)
        self.map_diff.set_levels((-self.scale, self.scale))
        self.diff_bar.setLevels((-self.scale, self.scale))
        self.diff_ticks = [(-self.scale, f"−{self.scale:.2g}"), (0.0, "0"), (self.scale, f"{self.scale:.2g}")]
        self.diff_bar.axis.setTicks([self.diff_ticks])
        for heatmap, values in zip(self.plots, self.values):
            heatmap.set_data(values, q_labels, k_labels, allowed=allowed)
        self.map_a.set_title(f"A · {head}")
        self.map_b.set_title(f"B · {head}")
        self.map_diff.set_title("B − A = 0" if zero else "B − A", f"B − A, coloured from −{self.scale:.2g} to +{self.scale:.2g}")
        self.map_diff.image.setVisible(not zero)
        self.diff_bar.setVisible(not zero)
        self.identical.setVisible(zero)
        self.identical.setPos(diff.shape[1] / 2, diff.shape[0] / 2)

    def set_together(self, together: bool) -> None:
        """All three maps, or the switch's one of A and B beside B − A (each twice as wide)."""
        self.together = together
        self.map_a.setVisible(together or self.show_a.isChecked())
        self.map_b.setVisible(together or self.show_b.isChecked())

    def _recolour(self, _theme: str = "") -> None:
        self.identical.setColor(st.colour("text"))

    def _describe(self, heatmap: Heatmap, q: int, k: int) -> str:
        return cell_text(*self.values[:2], q, k, heatmap.row_labels, heatmap.col_labels, heatmap.allowed)


class ComparePanel(PickedHead, Panel):
    panel_name = "compare"
    title = "Compare checkpoints"
    tab_title = "Compare"  # many tabs share the right dock area: each must be readable

    def __init__(self, state: SessionState, parent=None):
        super().__init__(state, parent)
        self.comparison = None
        self.snapshots = []
        self.cache = ModelCache()  # checkpoint B, loaded once (the job's thread alone reads it)
        self._slider_timer = QTimer(self, singleShot=True, interval=SLIDER_DELAY_MS, timeout=self._on_slider_rest)
        self._build()
        self.add_job(self.show_comparison, self._on_failed)
        self.job.busy.connect(self._on_busy)
        state.attentionSelected.connect(self._redraw)
        self._show_reference(state.session.compare)
        self.follow(frame=lambda _frame: self.request())  # (drawn when the panel can be seen)
        self.seen.follow(state.compareChanged, lambda: self._on_compare(state.session.compare))

    def _build(self) -> None:
        self.b_name = style.eliding_line("nothing compared yet")
        self.b_name.setFont(st.font(st.LABEL_PT, bold=True))
        self.open_button = QPushButton("Open B…", toolTip="Choose a checkpoint folder (or a run's folder of "
                                       "step-… snapshots) as B")
        self.untrained_button = QPushButton("Untrained B", toolTip="B = this model's architecture with fresh weights "
                                            "(seeded): which heads, maps and outputs training changed")
        self.picker = HeadPicker(self.state, lambda: self.comparison.kinds if self.comparison is not None else [],
                                 self._shape)
        self.most_changed_button = QPushButton("Most changed", enabled=False, toolTip="Show the head of this kind "
                                               "whose map training changed most (the largest mean |B − A|)")
        self.slider = QSlider(Qt.Orientation.Horizontal, toolTip="The saved snapshots of B's training run: drag to "
                              "compare A with another step")
        self.slider_label = text_label("", st.LABEL_PT)
        self.slider_row = QWidget()
        row(text_label("Snapshot of B:", st.LABEL_PT), (self.slider, 1), self.slider_label, parent=self.slider_row,
            margins=0)
        self.note = text_label("", st.LABEL_PT)
        say(self.note, HINT)
        self.outputs_line = RichElidingLabel()  # both outputs, shortened alike where the line is short
        self.shared_line = style.eliding_line()  # what both maps read: a line of its own, never cut for an output
        for line in (self.outputs_line, self.shared_line):
            style.set_font_role(line, "label")
        self.maps, self.bars = ComparisonMaps(), OutputBars()
        self.heads = Heatmap(colormap=st.weight_cmap(), colour_bar="mean |B − A|", square=False)  # layers × heads
        self.heads.set_axis_names("layer", "head")
        self.heads.describe = lambda layer, head: (f"layer {layer + 1}, head {head + 1}: mean |B − A| = "
                                                   f"{self.heads.values[layer, head]:.4f} (click to show this head)")
        self.tabs = style.set_font_role(QTabWidget(), "label")
        for widget, text in zip((self.maps, self.bars, self.heads), VIEW_TITLES):
            self.tabs.addTab(widget, text)
        self.readout = style.eliding_line(" ")
        style.set_font_role(self.readout, "label")
        column(row(text_label("B:", st.LABEL_PT), (self.b_name, 1), self.untrained_button, self.open_button),
               row(self.picker, self.most_changed_button, None), self.slider_row, self.note, self.outputs_line,
               row((self.shared_line, 1), self.maps.switch), (self.tabs, 1), self.readout, parent=self)
        self.open_button.clicked.connect(self._choose_b)
        self.untrained_button.clicked.connect(lambda: self.state.session.set_compare(UNTRAINED))
        self.slider.valueChanged.connect(lambda _v: self._slider_timer.start())
        for view in (self.maps, self.bars, self.heads):
            view.hovered.connect(self._on_hover)
        self.heads.cellClicked.connect(lambda layer, head: self.picker.select(self.kind, layer, head))
        self.most_changed_button.clicked.connect(self.show_most_changed)
        ViewTabs(self.tabs, self.state, self.panel_name, VIEWS)
        self.tabs.currentChanged.connect(self._show_switch)
        self._show_content(False)
        self.apply_screen_class(ScreenClass.PROJECTOR)

    def apply_screen_class(self, cls: ScreenClass) -> None:
        """Wide: A, B and B − A side by side. Else one of A and B (the switch's) beside B − A: maps
        wide enough to name their tokens."""
        self.maps.set_together(cls is ScreenClass.WIDE)
        self._show_switch()

    def _show_content(self, on: bool) -> None:
        self.most_changed_button.setEnabled(on)
        for widget in (self.tabs, self.outputs_line, self.shared_line, self.readout):
            widget.setVisible(on)
        self._show_switch()

    def _show_switch(self, *_) -> None:
        """The maps' A/B switch where one of them is shown, with the maps."""
        self.maps.switch.setVisible(not self.maps.together and self.tabs.isVisibleTo(self)
                                    and self.tabs.currentWidget() is self.maps)

    def _choose_b(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Checkpoint to compare with (B)")
        if folder:
            self.state.session.set_compare(folder)

    def _on_compare(self, reference) -> None:
        self._show_reference(reference)
        self.request()

    def _show_reference(self, reference) -> None:
        """B's name, and the slider over its run's snapshots where it has two or more."""
        self.snapshots = run_snapshots(reference) if reference else []
        self.b_name.setText(describe_reference(reference) if reference else "nothing compared yet")
        self.b_name.setToolTip(str(reference or ""))
        self.slider_row.setVisible(len(self.snapshots) >= 2)
        if len(self.snapshots) < 2:
            return
        resolved = Path(resolve_reference(reference)).resolve()
        index = next((i for i, s in enumerate(self.snapshots) if s.path.resolve() == resolved), len(self.snapshots) - 1)
        with QSignalBlocker(self.slider):
            self.slider.setRange(0, len(self.snapshots) - 1)
            self.slider.setValue(index)
        self.slider_label.setText(f"{self.snapshots[index].label} ({index + 1} of {len(self.snapshots)})")

    def _on_slider_rest(self) -> None:
        """The snapshot where the slider rests becomes B: a session change (`_on_compare` labels it)."""
        if 0 <= self.slider.value() < len(self.snapshots):
            self.state.session.set_compare(str(self.snapshots[self.slider.value()].path))

    def request(self) -> None:
        """Compare A (the model shown) with B on the session's input, off the GUI thread."""
        session, bundle, frame = self.state.session, self.state.bundle, self.state.frame
        if not session.compare:
            self.job.stop()
            self._clear(HINT, "info")
            return
        if bundle is None or frame is None or not session.source:
            return  # (A's frame is on its way: its frameChanged comes back here)
        frame_a = frame if frame.bundle is bundle else None
        self.job.submit(partial(self.cache.compare, bundle, session.model_label, session.compare,
                                frame.source, session.target, session.decoding, frame_a))  # (as the model read it)

    def _on_busy(self, busy: bool) -> None:
        if busy:
            self._note(f"Comparing with {self.b_name.text()}…", "info")

    def _on_failed(self, message: str) -> None:
        self._clear(f"Cannot compare: {message}", "error")

    def _note(self, text: str, level: str) -> None:
        say(self.note, text, level)
        self.note.setVisible(bool(text))

    def _clear(self, text: str, level: str) -> None:
        """No comparison: the views hidden (each drawn anew with the next) and `text` said."""
        self.comparison = None
        self._show_content(False)
        self._note(text, level)

    def show_comparison(self, comparison) -> None:
        """Draw a `model.interpret.comparison.Comparison` (the newest request's)."""
        self.comparison = comparison
        self._note("", "info")
        self._show_content(True)
        forms = outputs_forms(comparison)
        whole, *shorter = (html.escape(form, quote=False) for form in forms)
        self.outputs_line.setText(whole, shorter=shorter)
        self.outputs_line.setToolTip(forms[0])
        self.bars.set_outputs(comparison.output_a, comparison.output_b)
        self.picker.sync()
        self._redraw()

    def _shape(self, kind: str) -> tuple[int, int]:
        if self.comparison is None or kind not in self.comparison.attention_a:
            return 0, 0
        return self.comparison.attention_a[kind].shape[:2]

    def show_most_changed(self) -> None:
        """Select the head of the shown kind whose map differs most between A and B."""
        head = self.comparison.most_changed(self.kind) if self.comparison is not None else None
        if head is not None:
            self.picker.select(self.kind, *head)

    def _redraw(self, *_selection) -> None:
        c = self.comparison
        if c is None or self.kind not in c.attention_a:
            return
        self.picker.sync()
        kind, layer, head = self.kind, self.layer, self.head
        q_labels, k_labels = c.labels[kind]
        self.maps.set_maps(c.attention_a[kind][layer, head], c.attention_b[kind][layer, head], c.allowed[kind],
                           q_labels, k_labels, f"L{layer + 1} H{head + 1}")
        queries, keys = token_names(c.frame_a.bundle.model_kind, kind)
        self.shared_line.setText(f"Both maps read {c.shared_input} · "
                                 + (f"query and key: {queries}" if queries == keys else f"query: {queries} · key: {keys}"))
        changes = c.mean_abs_difference(kind)
        self.heads.set_levels((0.0, max(float(changes.max()) if changes.size else 0.0, MIN_SCALE)))
        self.heads.set_data(changes, [f"L{i + 1}" for i in range(changes.shape[0])],
                            [f"H{h + 1}" for h in range(changes.shape[1])], row_names=True)
        self.heads.set_title(f"Mean |B − A| per head: {KIND_LABELS[kind]}")
        self._on_hover("")  # (the readout until the mouse moves)

    def _on_hover(self, text: str) -> None:
        """The hovered value, else where A and B disagree most."""
        text = text or (disagreement_text(self.comparison.output_a) if self.comparison is not None else " ")
        self.readout.setText(text)
        self.readout.setToolTip(text.strip())  # whole, where the line is cut
