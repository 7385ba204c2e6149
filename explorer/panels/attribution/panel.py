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

import traceback

from PySide6.QtCore import QCoreApplication, QElapsedTimer, Qt, QThreadPool, QTimer
from PySide6.QtWidgets import (
    QBoxLayout,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from explorer.drawing import plot_style as st
from explorer.drawing.token_heatmap import display_piece
from explorer.panels.attribution.bars import MethodBars, short_value
from explorer.panels.attribution.job import SHORT_NAMES, AttributionRequest, AttributionView, legend_html, start
from explorer.panels.attribution.table import SpearmanTable
from explorer.panels.stops_with_window import StopsWithWindow
from explorer.screen import ScreenClass
from explorer.state import SessionState
from explorer.theme import set_sheet
from model.inference.bundle import InputError
from model.interpret.attribution.gradients import gradient_saturated

OUTPUT_VIEW, HEAD_VIEW = "attribution_output", "attribution_head"


NEAR_CERTAIN = 0.8  # p above which the caption names a flat gradient's likely reason


def saturation_note(scores: dict, probability: float | None = None) -> str:
    """A sentence when gradient × input is near 0 beside IG (`gradient_saturated`): its row of
    specks, one of them "lowering p" on the top token, read as a finding. The reason (a
    near-certain output: ∇ log p carries a factor 1 − p) is named only when p says so."""
    gxi, ig = scores.get("grad_x_input"), scores.get("integrated_gradients")
    if gxi is None or ig is None or not gradient_saturated(gxi, ig):
        return ""
    scales = f"largest {short_value(float(abs(gxi).max()))}, IG's {short_value(float(abs(ig).max()))}"
    if probability is not None and probability >= NEAR_CERTAIN:
        p = "p > 0.99" if probability >= 0.995 else f"p = {probability:.2f}"  # (never "1.00": not certainty)
        return f" g×i ≈ 0 ({scales}): at {p} the gradient at the input is nearly flat, so its signs say little."
    return f" g×i ≈ 0 ({scales}): the gradient at the input is nearly flat, so its signs say little."


class AttributionPanel(StopsWithWindow, QWidget):
    panel_name = "attribution"
    title = "Attribution"

    def __init__(self, state: SessionState, parent=None):
        super().__init__(parent)
        self.state = state
        self.shown: AttributionView | None = None
        self.worker = None
        self._queued: AttributionRequest | None = None
        self._running: AttributionRequest | None = None
        self._filling = False
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
        self.progress = QProgressBar()
        self.progress.setTextVisible(False)
        self.progress.setVisible(False)
        self.status = QLabel(" ")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
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
            self._draw(self.shown)

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
        if request is None or not self.isVisible():
            return
        if self.shown is not None and self.shown.request == request:
            return
        if request == self._running:
            return
        self._queued = request
        if self.worker is None:
            self._start_next()

    def _start_next(self) -> None:
        request, self._queued = self._queued, None
        if request is None:
            return
        self._running = request
        self.progress.setVisible(True)
        self.progress.setValue(0)
        self.worker = start(request, self)

    def on_progress(self, report: tuple[str, int, int]) -> None:
        what, done, total = report
        self.progress.setRange(0, total)
        self.progress.setValue(done)
        self._say(f"Computing {what}… ({done + 1}/{total})")

    def on_done(self, view: AttributionView) -> None:
        if view.request == self.request():
            self._draw(view)

    def on_failed(self, exc: BaseException) -> None:
        expected = isinstance(exc, (InputError, ValueError))
        if not expected:
            traceback.print_exception(exc)
        if self._running == self.request():
            self.shown = None
            self.bars.clear_data()
            self.table.setRowCount(0)
            reason = str(exc) if expected else f"{type(exc).__name__}: {exc}"
            self._say(f"No attribution for this model and input: {reason}", "warning")

    def on_finished(self) -> None:
        self.worker, self._running = None, None
        if self._queued is not None:
            self._start_next()
        else:
            self.progress.setVisible(False)

    def wait_until_drawn(self, msecs: int = 60000) -> bool:
        """Block until the running and queued work is drawn (headless figures, tests)."""
        self.refresh()  # (a show's refresh waits for the queued events: it may not have started yet)
        clock = QElapsedTimer()
        clock.start()
        while (self.worker is not None or self._queued is not None) and clock.elapsed() < msecs:
            QThreadPool.globalInstance().waitForDone(20)
            QCoreApplication.sendPostedEvents()
            QCoreApplication.processEvents()
        return self.worker is None

    def shutdown(self) -> None:
        self._queued = None
        if self.worker is not None:
            self.worker.quit()

    def showEvent(self, event) -> None:  # noqa: N802
        super().showEvent(event)
        # After the events now queued: entering presentation builds every panel and then hides
        # all but one; deferred, this panel's work (importing captum, seconds on the GUI thread,
        # then integrated gradients) runs only when the panel is still shown.
        QTimer.singleShot(0, self, self.refresh)

    # -- drawing -------------------------------------------------------------------------------
    def _draw(self, view: AttributionView) -> None:
        self.shown = view
        self._fill_boxes(view)
        titles = {m: SHORT_NAMES[m] for m in view.scores}
        self.bars.set_data(view.input_pieces, view.scores, titles)
        self.table.set_data([SHORT_NAMES[m] for m in view.names], view.rho)
        self._say(f"Why “{display_piece(view.output_piece)}” (output {view.position + 1} of {len(view.outputs)})? "
                  f"Each row scaled to its largest |score| (right); outlined: top token; reddish: lowers p. "
                  f"head = {view.head_label}; table: Spearman ρ.{saturation_note(view.scores, view.probability)}")
        self.bars.setToolTip(legend_html() + self.bars.toolTip())

    def _fill_boxes(self, view: AttributionView) -> None:
        bundle = view.request.bundle
        layers = bundle.config.n_decoder_layers if bundle.config.has_decoder else bundle.config.n_encoder_layers
        self._filling = True
        try:
            self.output_box.clear()
            self.output_box.addItems([f"{k + 1}: {display_piece(p)}" for k, p in enumerate(view.outputs)])
            self.output_box.setCurrentIndex(view.position)
            self.layer_box.clear()
            self.layer_box.addItems([f"layer {l + 1}" for l in range(layers)])
            self.layer_box.setCurrentIndex(view.request.head[0])
            self.head_box.clear()
            self.head_box.addItems([f"head {h + 1}" for h in range(bundle.config.n_heads)])
            self.head_box.setCurrentIndex(view.request.head[1])
        finally:
            self._filling = False
        self.previous_button.setEnabled(view.position > 0)
        self.next_button.setEnabled(view.position < len(view.outputs) - 1)

    def _say(self, text: str, level: str = "info") -> None:
        self.status.setText(text)
        set_sheet(self.status, "color: {warning_text}; background: {warning_bg};" if level == "warning"
                  else "color: {text};")
