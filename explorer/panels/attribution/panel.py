"""Attribution panel: which input tokens mattered for one output token, by seven methods
side by side (raw attention, one head, rollout, flow, gradient × input, integrated gradients,
occlusion) and the Spearman table of how far they agree (model.interpret.attribution).

It follows the session's Frame (model, text, target) and keeps its choices in the session:
the explained output token (`view("attribution_output")`) and the head
(`view("attribution_head")`, "layer,head"). The work runs in a superqt worker with a
progress bar, only while the panel is on screen; a newer request replaces a queued one, and
a result that no longer matches the session is not drawn. Closing the window stops the work at
its next progress report (a method, or a refinement of integrated gradients).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from PySide6.QtCore import QCoreApplication, QTimer
from PySide6.QtWidgets import (
    QBoxLayout,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from explorer.drawing import plot_style as st
from explorer.drawing.token_heatmap import display_piece
from explorer.latest_job import LatestJob
from explorer.panels.attribution.bars import SHORT_NAMES, MethodBars, legend_html
from explorer.panels.attribution.table import SpearmanTable
from explorer.panels.job_bar import JobBar
from explorer.panels.stops_with_window import StopsWithWindow
from explorer.panels.texts import text_label
from explorer.screen import ScreenClass
from explorer.state import SessionState
from explorer.theme import set_sheet
from model.interpret.attribution.gradients import saturation_note
from model.interpret.attribution.side_by_side import MethodComparison, compare_methods

OUTPUT_VIEW, HEAD_VIEW = "attribution_output", "attribution_head"


@dataclass(frozen=True)
class AttributionRequest:
    """Everything the picture depends on: the model, its text, which output token, which head."""

    bundle: object
    model_label: str
    source: str
    target: str | None
    position: int
    head: tuple[int, int]
    output_ids: tuple[int, ...] | None = None  # the frame's greedy output: not decoded again


def compute(request: AttributionRequest):
    """The job (a generator: its reports are the progress): returns (request, MethodComparison)."""
    return request, (yield from compare_methods(request.bundle, request.source, request.target, request.position,
                                                request.head, request.output_ids))


_preloaded = False


def preload_libraries() -> None:
    """Import captum (and the matplotlib it pulls in), networkx and scipy.stats here, on the GUI
    thread, once (~1 s). Imported for the first time on the worker while the GUI thread re-polishes
    every widget (F11), they can crash the process (SIGSEGV)."""
    global _preloaded
    if not _preloaded:
        import captum.attr  # noqa: F401
        import networkx.algorithms.flow  # noqa: F401
        import scipy.stats  # noqa: F401
        _preloaded = True


class AttributionPanel(StopsWithWindow, QWidget):
    panel_name = "attribution"
    title = "Attribution"

    def __init__(self, state: SessionState, parent=None):
        super().__init__(parent)
        self.state = state
        self.shown: MethodComparison | None = None
        self.shown_request: AttributionRequest | None = None  # what `shown` was computed for
        self.asked: AttributionRequest | None = None  # what the job computes now
        self._filling = False
        self.job = LatestJob(self)
        self.job.done.connect(self._on_done)
        self.job.failed.connect(self._on_failed)
        self._build()
        state.frameChanged.connect(lambda _frame: self.refresh())
        state.viewChanged.connect(self._on_view)
        state.themeChanged.connect(lambda _name: self.restyle())
        state.scaleChanged.connect(lambda _scale: self.restyle())
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)
        self.refresh()

    # -- construction -------------------------------------------------------------------------
    def _build(self) -> None:
        self.output_box, self.layer_box, self.head_box = QComboBox(), QComboBox(), QComboBox()
        self.output_box.setToolTip("The output token whose inputs are scored: a decoding step, a [MASK], "
                                   "or a next-token position after the prompt")
        self.output_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.previous_button, self.next_button = QPushButton("◀"), QPushButton("▶")
        self.previous_button.setToolTip("The previous output token")
        self.next_button.setToolTip("The next output token")
        self.previous_button.clicked.connect(lambda: self._step_output(-1))
        self.next_button.clicked.connect(lambda: self._step_output(+1))
        controls = QHBoxLayout()
        self._labels = [QLabel("Explain output:"), QLabel("One head:")]
        for widget in (self._labels[0], self.previous_button, self.output_box, self.next_button):
            controls.addWidget(widget)
        controls.addStretch(1)
        for widget in (self._labels[1], self.layer_box, self.head_box):
            controls.addWidget(widget)
        self.bars = MethodBars()
        self.table = SpearmanTable()
        self.table.setToolTip(legend_html() + self.table.toolTip())
        self.views = views = QBoxLayout(QBoxLayout.LeftToRight)  # side by side, or stacked (NARROW)
        views.addWidget(self.bars, 5)
        views.addWidget(self.table, 4)
        self.progress = JobBar(self.job, self._say)
        self.status = text_label(" ", point_size=None, selectable=True)
        lay = QVBoxLayout(self)
        lay.addLayout(controls)
        lay.addLayout(views, 1)
        lay.addWidget(self.progress)
        lay.addWidget(self.status)
        self.output_box.currentIndexChanged.connect(self._on_output_box)
        self.layer_box.currentIndexChanged.connect(self._on_head_boxes)
        self.head_box.currentIndexChanged.connect(self._on_head_boxes)
        self.restyle()

    def apply_screen_class(self, cls: ScreenClass) -> None:
        """The methods' bars beside their agreement table, or (NARROW) the table under the bars."""
        narrow = cls is ScreenClass.NARROW
        self.views.setDirection(QBoxLayout.TopToBottom if narrow else QBoxLayout.LeftToRight)

    def restyle(self) -> None:
        for widget in (*self._labels, self.output_box, self.layer_box, self.head_box, self.status,
                       self.previous_button, self.next_button):
            widget.setFont(st.font(st.LABEL_PT))
        self.bars.restyle()
        self.table.restyle()
        if self.shown is not None:
            self._draw(self.shown_request, self.shown)

    # -- the session's choices ----------------------------------------------------------------------
    def chosen_position(self) -> int:
        text = self.state.session.view(OUTPUT_VIEW)
        return int(text) if text and text.lstrip("-").isdigit() else 0

    def chosen_head(self) -> tuple[int, int]:
        text = self.state.session.view(HEAD_VIEW) or ""
        try:
            layer, head = (int(v) for v in text.split(","))
        except ValueError:
            return (-1, 0)
        return layer, head

    def choose_output(self, position: int) -> None:
        self.state.set_view(OUTPUT_VIEW, str(position))

    def _step_output(self, delta: int) -> None:
        n = self.output_box.count()
        if n:
            self.choose_output(max(0, min(n - 1, self.output_box.currentIndex() + delta)))

    def _on_output_box(self, index: int) -> None:
        if not self._filling and index >= 0:
            self.choose_output(index)

    def _on_head_boxes(self, _index: int) -> None:
        if not self._filling and self.layer_box.currentIndex() >= 0 and self.head_box.currentIndex() >= 0:
            self.state.set_view(HEAD_VIEW, f"{self.layer_box.currentIndex()},{self.head_box.currentIndex()}")

    def _on_view(self, panel: str, _value: str) -> None:
        if panel in (OUTPUT_VIEW, HEAD_VIEW):
            self.refresh()

    # -- work ------------------------------------------------------------------------------------
    def request(self) -> AttributionRequest | None:
        frame = self.state.frame
        if frame is None:
            return None
        bundle = frame.bundle
        layers = bundle.config.n_decoder_layers if bundle.config.has_decoder else bundle.config.n_encoder_layers
        layer, head = self.chosen_head()
        head = (min(layer, layers - 1) if layer >= 0 else layers - 1, min(head, bundle.config.n_heads - 1))
        run = frame.decode  # the greedy output the frame decoded, reused (an LLM's decode is seconds)
        own = (tuple(i for i in run.output_ids if i != run.eos_id)
               if run is not None and frame.target is None and frame.settings.strategy == "greedy" else None)
        return AttributionRequest(bundle, frame.model_label, frame.source, frame.target, self.chosen_position(), head,
                                  own)

    def refresh(self) -> None:
        """Compute for the session as it is now (when on screen; else when next shown)."""
        request = self.request()
        if request is None or not self.isVisible() or request in (self.shown_request, self.asked):
            return
        self.asked = request
        preload_libraries()
        self.job.submit(functools.partial(compute, request))

    def _on_done(self, done: tuple[AttributionRequest, MethodComparison]) -> None:
        request, result = done
        self.asked = None
        if request == self.request():
            self._draw(request, result)

    def _on_failed(self, reason: str) -> None:
        if self.asked == self.request():
            self.shown, self.shown_request, self.asked = None, None, None
            self.bars.clear_data()
            self.table.setRowCount(0)
            self._say(f"No attribution for this model and input: {reason}", "warning")

    def wait_until_drawn(self, msecs: int = 60000) -> bool:
        """Block until the running and queued work is drawn (headless figures, tests)."""
        self.refresh()  # (a show's refresh waits for the queued events: it may not have started yet)
        return self.job.wait(msecs)

    def shutdown(self) -> None:
        self.job.stop()

    def showEvent(self, event) -> None:  # noqa: N802
        super().showEvent(event)
        # After the events now queued: entering presentation builds every panel and then hides
        # all but one; deferred, this panel's work (importing captum, seconds on the GUI thread,
        # then integrated gradients) runs only when the panel is still shown.
        QTimer.singleShot(0, self, self.refresh)

    # -- drawing -------------------------------------------------------------------------------
    def _draw(self, request: AttributionRequest, view: MethodComparison) -> None:
        self.shown, self.shown_request = view, request
        self._fill_boxes(request, view)
        titles = {m: SHORT_NAMES[m] for m in view.scores}
        self.bars.set_data(view.input_pieces, view.scores, titles)
        self.table.set_data([SHORT_NAMES[m] for m in view.names], view.rho)
        self._say(f"Why “{display_piece(view.output_piece)}” (output {view.position + 1} of {len(view.outputs)})? "
                  f"Each row scaled to its largest |score| (right); outlined: top token; reddish: lowers p. "
                  f"head = {view.head_label}; table: Spearman ρ.{saturation_note(view.scores, view.probability)}")
        self.bars.setToolTip(legend_html() + self.bars.toolTip())

    def _fill_boxes(self, request: AttributionRequest, view: MethodComparison) -> None:
        bundle = request.bundle
        layers = bundle.config.n_decoder_layers if bundle.config.has_decoder else bundle.config.n_encoder_layers
        self._filling = True
        try:
            self.output_box.clear()
            self.output_box.addItems([f"{k + 1}: {display_piece(p)}" for k, p in enumerate(view.outputs)])
            self.output_box.setCurrentIndex(view.position)
            self.layer_box.clear()
            self.layer_box.addItems([f"layer {l + 1}" for l in range(layers)])
            self.layer_box.setCurrentIndex(request.head[0])
            self.head_box.clear()
            self.head_box.addItems([f"head {h + 1}" for h in range(bundle.config.n_heads)])
            self.head_box.setCurrentIndex(request.head[1])
        finally:
            self._filling = False
        self.previous_button.setEnabled(view.position > 0)
        self.next_button.setEnabled(view.position < len(view.outputs) - 1)

    def _say(self, text: str, level: str = "info") -> None:
        self.status.setText(text)
        set_sheet(self.status, "color: {warning_text}; background: {warning_bg};" if level == "warning"
                  else "color: {text};")
