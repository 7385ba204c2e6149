"""Attribution: which input tokens mattered for one output token, by seven methods side by side
(model.interpret.attribution) and the Spearman table of how far they agree. The explained output
and the head are session views; the work runs off the GUI thread with progress, only on screen."""
from __future__ import annotations

import functools

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QBoxLayout, QComboBox, QLabel, QPushButton

from explorer import style
from explorer.drawing.token_heatmap import display_piece
from explorer.panels.attribution.bars import MethodBars
from explorer.panels.attribution.spearman import SpearmanTable
from explorer.panels.base import Panel
from explorer.panels.knobs import refill
from explorer.panels.layouts import column, row
from explorer.panels.stops_with_window import StopsWithWindow
from explorer.panels.texts import say, text_label
from explorer.screen import ScreenClass
from explorer.state import SessionState
from model.interpret.attribution.gradients import saturation_note
from model.interpret.attribution.method_texts import SHORT_NAMES
from model.interpret.attribution.side_by_side import (
    AttributionRequest,
    MethodComparison,
    compare_request,
    head_layers,
    request_for,
)

OUTPUT_VIEW, HEAD_VIEW = "attribution_output", "attribution_head"


@functools.cache
def preload_libraries() -> None:
    """Import captum, networkx and scipy.stats on the GUI thread, once: imported first on the worker
    while the GUI thread re-polishes every widget, they can crash the process."""
    import captum.attr  # noqa: F401
    import networkx.algorithms.flow  # noqa: F401
    import scipy.stats  # noqa: F401


class AttributionPanel(StopsWithWindow, Panel):
    panel_name = "attribution"
    title = "Attribution"

    def __init__(self, state: SessionState, parent=None):
        super().__init__(state, parent)
        self.shown: MethodComparison | None = None
        self.shown_request: AttributionRequest | None = None  # what `shown` was computed for
        self.asked: AttributionRequest | None = None  # what the job computes now
        self.status = text_label(" ", point_size=None, selectable=True)
        self._say = functools.partial(say, self.status, level="plain")
        self.add_job(self._on_done, self._on_failed, progress_to=self._say)  # (its progress: `bar`)
        self._build()
        state.frameChanged.connect(lambda _frame: self.refresh())
        state.viewChanged.connect(self._on_view)
        state.themeChanged.connect(lambda _name: self.restyle())
        state.scaleChanged.connect(lambda _scale: self.restyle())
        self.refresh()

    def _build(self) -> None:
        self.output_box = QComboBox(toolTip="The output token whose inputs are scored: a decoding step, a [MASK], "
                                    "or a next-token position after the prompt",
                                    sizeAdjustPolicy=QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.layer_box, self.head_box = QComboBox(), QComboBox()
        self.previous_button = QPushButton("◀", toolTip="The previous output token",
                                           clicked=lambda: self._step_output(-1))
        self.next_button = QPushButton("▶", toolTip="The next output token", clicked=lambda: self._step_output(+1))
        self._labels = [QLabel("Explain output:"), QLabel("One head:")]
        self.bars = MethodBars()
        self.table = SpearmanTable()
        self.views = QBoxLayout(QBoxLayout.LeftToRight)  # side by side, or stacked (NARROW)
        self.views.addWidget(self.bars, 5)
        self.views.addWidget(self.table, 4)
        controls = row(self._labels[0], self.previous_button, self.output_box, self.next_button, None,
                       self._labels[1], self.layer_box, self.head_box)
        for widget in (*self._labels, self.output_box, self.layer_box, self.head_box, self.status,
                       self.previous_button, self.next_button):
            style.set_font_role(widget, "label")
        column(controls, (self.views, 1), self.bar, self.status, parent=self)
        self.output_box.currentIndexChanged.connect(self._on_output_box)
        self.layer_box.currentIndexChanged.connect(self._on_head_boxes)
        self.head_box.currentIndexChanged.connect(self._on_head_boxes)
        self.restyle()

    def apply_screen_class(self, cls: ScreenClass) -> None:
        """The methods' bars beside their agreement table, or (NARROW) the table under the bars."""
        narrow = cls is ScreenClass.NARROW
        self.views.setDirection(QBoxLayout.TopToBottom if narrow else QBoxLayout.LeftToRight)

    def restyle(self) -> None:
        self.bars.restyle()
        if self.shown is not None:
            self._draw(self.shown_request, self.shown)

    def _step_output(self, delta: int) -> None:
        n = self.output_box.count()
        if n:
            self.state.set_view(OUTPUT_VIEW, str(max(0, min(n - 1, self.output_box.currentIndex() + delta))))

    def _on_output_box(self, index: int) -> None:
        if index >= 0:
            self.state.set_view(OUTPUT_VIEW, str(index))

    def _on_head_boxes(self, _index: int) -> None:
        if self.layer_box.currentIndex() >= 0 and self.head_box.currentIndex() >= 0:
            self.state.set_view(HEAD_VIEW, f"{self.layer_box.currentIndex()},{self.head_box.currentIndex()}")

    def _on_view(self, panel: str, _value: str) -> None:
        if panel in (OUTPUT_VIEW, HEAD_VIEW):
            self.refresh()

    def request(self) -> AttributionRequest | None:
        frame, session = self.state.frame, self.state.session
        return request_for(frame, session.view(OUTPUT_VIEW), session.view(HEAD_VIEW)) if frame is not None else None

    def refresh(self) -> None:
        """Compute for the session as it is now (when on screen; else when next shown)."""
        request = self.request()
        if request is None or not self.isVisible() or request in (self.shown_request, self.asked):
            return
        self.asked = request
        preload_libraries()
        self.job.submit(functools.partial(compare_request, request))

    def _on_done(self, done: tuple[AttributionRequest, MethodComparison]) -> None:
        request, result = done
        self.asked = None
        if request == self.request():
            self._draw(request, result)

    def _on_failed(self, reason: str) -> None:
        if self.asked == self.request():
            self.shown, self.shown_request, self.asked = None, None, None
            self.bars.clear_data()
            self.table.clear_data()
            self._say(f"No attribution for this model and input: {reason}", level="warning")

    def wait_until_drawn(self, msecs: int = 60000) -> bool:
        self.refresh()  # (a show's refresh waits for the queued events: it may not have started yet)
        return super().wait_until_drawn(msecs)

    def showEvent(self, event) -> None:  # noqa: N802
        super().showEvent(event)
        # after the queued events: entering presentation shows every panel, then hides all but one
        QTimer.singleShot(0, self, self.refresh)

    def _draw(self, request: AttributionRequest, view: MethodComparison) -> None:
        self.shown, self.shown_request = view, request
        config = request.bundle.config
        for box, items, index in (
                (self.output_box, [f"{k + 1}: {display_piece(p)}" for k, p in enumerate(view.outputs)], view.position),
                (self.layer_box, [f"layer {i + 1}" for i in range(head_layers(config))], request.head[0]),
                (self.head_box, [f"head {h + 1}" for h in range(config.n_heads)], request.head[1])):
            refill(box, items, index)
        self.previous_button.setEnabled(view.position > 0)
        self.next_button.setEnabled(view.position < len(view.outputs) - 1)
        self.bars.set_data(view.input_pieces, view.scores)
        self.table.show_rho([SHORT_NAMES[m] for m in view.names], view.rho)
        self._say(f"Why “{display_piece(view.output_piece)}” (output {view.position + 1} of {len(view.outputs)})? "
                  f"Each row scaled to its largest |score| (right); outlined: top token; reddish: lowers p. "
                  f"head = {view.head_label}; table: Spearman ρ.{saturation_note(view.scores, view.probability)}")
