"""Masked vs. unmasked decoding: autoregressive steps beside the teacher-forced parallel pass.

Left: decoding one token at a time (Section 3.2.3) — the prefix, the causal mask in force
growing by a row and a column per step, that step's masked self-attention and cross-attention
(query row framed), and the next-token bars. Right: the same sequence run in parallel as in
training, where row t equals step t only because of the mask — with a switch that removes it —
or the beam-search tree. The panel only draws the session's `Frame.decode`.

A decoder-only model continues the typed text: the prompt (purple) opens every prefix, so
step t is row n_prompt + t of the parallel pass. A masked LM shows its guesses for each [MASK]
(`MaskPredictionsView`); a sentence encoder without an LM head its similarities (`EmbeddingView`).
"""
from __future__ import annotations

from PySide6.QtCore import QSignalBlocker, Qt, QTimer
from PySide6.QtWidgets import QSplitter, QStackedWidget, QTabWidget, QVBoxLayout, QWidget

from explorer import style, theme
from explorer.drawing.token_heatmap import TokenHeatmap
from explorer.panel_room import offered_room
from explorer.panels.decoding.bars import TopKBars
from explorer.panels.decoding.beam_view import BeamTreeView
from explorer.panels.decoding.chips import note_sheet, text_label
from explorer.panels.decoding.controls import DecodingControls
from explorer.panels.decoding.embedding_view import EmbeddingView
from explorer.panels.decoding.mask_predictions_view import MaskPredictionsView
from explorer.panels.decoding.parallel_view import ParallelPassView
from explorer.panels.decoding.plot_grid import PlotGrid
from explorer.panels.decoding.step_drawing import StepDrawing
from explorer.screen import ScreenClass
from model.inference.beam_tree import beam_summary
from model.interpret.decode_run import STRATEGIES, DecodeRun
from model.interpret.decode_texts import unknown_note

PLAY_INTERVAL_MS = 800
SIDE_BY_SIDE = (1200, 680)  # below this the halves become tabs, each with readable maps
STEP_TAB = "Step by step (autoregressive)"
DECODER_KINDS = ("decoder_self", "cross")


def column(*widgets: QWidget, margin: int = 4) -> QWidget:
    """A page of `widgets` one under the other, the last taking the room left."""
    page = QWidget()
    lay = QVBoxLayout(page)
    lay.setContentsMargins(margin, margin, margin, margin)
    for w in widgets:
        lay.addWidget(w, 1 if w is widgets[-1] else 0)
    return page


class DecodingPanel(StepDrawing, QWidget):
    """Decoding step by step, the parallel pass with/without the causal mask, and beam search."""

    panel_name = "decoding"
    title = "Decoding"

    def __init__(self, state, parent=None):
        super().__init__(parent)
        self.state = state
        self.run: DecodeRun | None = None
        self.smoothing = 0.0  # the shown model's label smoothing ε (ModelBundle.label_smoothing)
        self._player = QTimer(self, interval=PLAY_INTERVAL_MS)
        self._player.timeout.connect(self._tick)
        self._build()
        state.bundleChanged.connect(self._on_bundle)
        state.frameChanged.connect(self._on_frame)
        state.resultChanged.connect(self._on_result)
        state.decodingChanged.connect(self.controls.show_settings)
        state.causalMaskChanged.connect(self._on_causal_mask)
        state.decodeStepChanged.connect(lambda _t: self._show_step())
        state.attentionSelected.connect(self._on_attention_selected)
        state.frameFailed.connect(self._on_frame_failed)
        state.busyChanged.connect(self._on_busy)
        theme.notifier().changed.connect(self._on_theme)  # a bound method: disconnected with the panel
        self.controls.show_settings(state.session.decoding)
        if state.bundle is not None:
            self._on_bundle(state.bundle)
            if state.frame is not None:
                self._on_frame(state.frame)
            if state.result is not None:
                self._on_result(state.result)
        else:
            self._show_message("Load a model to watch it decode.", "info")

    # -- layout -------------------------------------------------------------------------------------
    def _build(self) -> None:
        self.controls = DecodingControls()
        self.controls.settingsChanged.connect(self.state.set_decoding)
        self.controls.transport.connect(self._on_transport)
        self.controls.headChanged.connect(self._on_head)
        self.controls.sharpestRequested.connect(self.show_sharpest_head)
        self.controls.sharpest.setEnabled(False)  # until a run is drawn
        self.banner = text_label(bold=True)
        self.banner.setVisible(False)
        self.prefix = text_label(pt=style.TITLE_POINT_SIZE, rich=True)
        self._prefix_width = -1
        self.prefix.installEventFilter(self)
        self.mask_map = TokenHeatmap("Mask", style.mask_colormap())
        self.self_map = TokenHeatmap("Self")
        self.cross_map = TokenHeatmap("Cross")
        self.bars = TopKBars()
        self.plots = PlotGrid([self.mask_map, self.self_map, self.cross_map], self.bars)
        self.step_page = column(self.prefix, self.plots)
        self.parallel = ParallelPassView()
        self.parallel.causalChanged.connect(self.state.session.set_causal_mask)
        self.beam_summary = text_label()
        self.beam_view = BeamTreeView()
        self.beam_page = column(self.beam_summary, self.beam_view)
        self.tabs = QTabWidget()
        self.tabs.addTab(self.parallel, "Masked vs. unmasked")
        self.tabs.addTab(self.beam_page, "Beam tree")
        self.tabs.currentChanged.connect(self._on_tab)
        self.state.viewChanged.connect(self._on_view)
        self.left_tabs = QTabWidget()  # one tab, so both halves wear the same kind of title
        self.left_tabs.addTab(self.step_page, STEP_TAB)
        splitter = QSplitter(Qt.Horizontal)
        splitter.addWidget(self.left_tabs)
        splitter.addWidget(self.tabs)
        splitter.setStretchFactor(0, 11)
        splitter.setStretchFactor(1, 9)
        splitter.setSizes([1100, 900])
        self.splitter = splitter
        self.side_by_side = True  # the two halves beside each other, or all pages as tabs (reflow)
        self.decode_page = decode_page = column(self.controls, splitter, margin=0)
        self.mask_view = MaskPredictionsView()  # a masked LM has no decoder: its [MASK] guesses
        self.pages = QStackedWidget()
        self.pages.addWidget(decode_page)
        self.pages.addWidget(self.mask_view)
        self.embedding_view = EmbeddingView()  # no LM head: what it computes instead
        self.pages.addWidget(self.embedding_view)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.banner)
        layout.addWidget(self.pages, 1)

    def wait_until_drawn(self, msecs: int = 60000) -> bool:
        """Block until work left to a view (an LLM's pass without the mask) is drawn (headless figures)."""
        return self.parallel.wait_until_drawn(msecs)

    @property
    def fills_masks(self) -> bool:
        """The loaded model is a masked LM: the panel shows its [MASK] predictions."""
        return self.state.bundle is not None and self.state.bundle.fills_masks

    # -- the frame ----------------------------------------------------------------------------------
    def _on_frame(self, frame) -> None:
        """A new Frame: a masked LM's guesses, the decode, or why this input cannot be decoded."""
        if frame.bundle.fills_masks:
            return  # its forward (resultChanged) carries the guesses
        if not frame.bundle.has_output_layer:
            self._show_message("", "info")  # an earlier refusal is answered
            self.embedding_view.set_embedding(frame.embedding, frame.bundle.config.d_model)
            return
        if not frame.bundle.model_kind.has_decoder:
            self._clear("This model has no decoder (encoder-only): there is nothing to decode step by step.", "info")
        elif frame.decode is not None:
            self.smoothing = frame.bundle.label_smoothing  # (the bars' smoothed-target line: 0 when not known)
            if frame.decode is not self.run:
                self._on_run(frame.decode)
        elif frame.decode_error:
            self._refuse(frame.decode_error, "info" if frame.settings.strategy == "target" else "error")

    def _on_result(self, result) -> None:
        """A masked LM's [MASK] guesses are part of its recorded forward."""
        if self.fills_masks:
            self.mask_view.set_result(result)

    def _on_frame_failed(self, text: str) -> None:
        """The pipeline refused the input: say so here too, keeping the last good decode."""
        if self.state.bundle is not None and not self.fills_masks:
            self._refuse(text, "error")  # (shown above the embedding view too, for a sentence encoder)

    def _on_causal_mask(self, on: bool) -> None:
        if self.parallel.causal != on:
            self.parallel.remove_mask.setChecked(not on)

    def _on_run(self, run: DecodeRun) -> None:
        self.run = run
        self.controls.sharpest.setEnabled(True)
        self._show_message(unknown_note(run), "info")
        self.state.session.set_decode_step(None)  # arrive complete; Reset / Step walk through it
        self.parallel.set_run(run)
        if run.beam is not None:
            self.beam_view.set_result(run.beam, run.vocab)
            self.beam_summary.setText(beam_summary(run.beam, run.settings.beam_size, run.settings.alpha, run.beam_text,
                                                   run.n_prompt))
            self.state.set_view(self.panel_name, "beam")
        else:
            self.beam_view.clear_data()
            self.beam_summary.setText("Choose “Beam search” as the strategy to grow its tree of hypotheses here.")
            if self.state.session.view(self.panel_name) == "beam":  # no tree to show: the steps
                self.state.set_view(self.panel_name, "steps")  # (not "parallel": a greedy scene after a
                # beam scene opened on the masked table, a fresh window on the steps)
        self._show_step()

    def _refuse(self, text: str, level: str) -> None:
        """Input this model cannot decode: say why, and keep the last good run on screen."""
        if self.run is None:
            self._clear(text, level)
            return
        self._show_message(f"{text}  (Still showing {self.run.source_text!r}.)", level)
        self._update_step_label()

    def _on_busy(self, busy: bool, _what: str = "") -> None:
        if busy:
            self.controls.step_label.setText("decoding…")
        elif self.run is not None:
            self._update_step_label()

    def _clear(self, text: str, level: str) -> None:
        self._stop_play()
        self.run = None
        self.controls.sharpest.setEnabled(False)
        self.smoothing = 0.0
        for view in (self.mask_map, self.self_map, self.cross_map, self.bars, self.beam_view):
            view.clear_data()
        self.parallel.set_run(None)
        self.prefix.setText("")
        self.beam_summary.setText("")
        self.controls.step_label.setText("–")
        self._show_message(text, level)

    def _show_message(self, text: str, level: str) -> None:
        level = level if level in ("info", "warning", "error") else "info"
        style.set_sheet(self.banner, note_sheet(level))
        self.banner.setText(text)
        self.banner.setVisible(bool(text))

    # -- the model changed -----------------------------------------------------------------------
    def _on_bundle(self, bundle) -> None:
        self._clear("", "info")  # the old model's run means nothing for the new one
        if bundle.fills_masks:
            mask = bundle.mask_token
            example = next((e for e in bundle.examples if mask and mask in e.split()), None)
            self.mask_view.set_mask_token(mask, example)
            self.mask_view.set_result(None)
            self.pages.setCurrentWidget(self.mask_view)
            return
        self.mask_view.clear_data()
        if not bundle.has_output_layer:
            self.embedding_view.set_embedding(None, bundle.config.d_model)
            self.pages.setCurrentWidget(self.embedding_view)
            return
        self.pages.setCurrentWidget(self.decode_page)
        cfg = bundle.config
        self.controls.set_shape(max(cfg.n_decoder_layers, 1), cfg.n_heads)
        self.controls.set_target_label("Follow the continuation" if cfg.model_kind.continues_prompt
                                       else STRATEGIES["target"])
        self._on_attention_selected()

    # -- the head shown: the session's selection (no copy here; a scene sets it) -----------------
    @property
    def layer(self) -> int:
        n = self.state.bundle.config.n_decoder_layers if self.state.bundle is not None else 1
        return min(self.state.layer, max(n - 1, 0))

    @property
    def head(self) -> int:
        return self.state.head

    def _on_attention_selected(self, *_selection) -> None:
        self.controls.select_head(self.layer, self.head, announce=False)
        self.parallel.set_head(self.layer, self.head)
        self._show_step()

    def _on_head(self, layer: int, head: int) -> None:
        """A head picked here: the session's selection (a decoder kind), so every panel follows."""
        kind = self.state.kind if self.state.kind in DECODER_KINDS else "decoder_self"
        if self.state.bundle is not None and kind in self.state.available_kinds():
            self.state.select_attention(kind, layer, head)

    def show_sharpest_head(self) -> None:
        """Select the head whose rows align most clearly on the decoded text (`ParallelPass.alignment`
        over the masked parallel pass, i.e. every step's rows): cross-attention where the model has it."""
        run = self.run
        if run is None or self.state.bundle is None:
            return
        layer, head = run.masked.sharpest_head()
        kind = "cross" if run.masked.cross_attention is not None else "decoder_self"
        if kind in self.state.available_kinds():
            self.state.select_attention(kind, layer, head)

    def view_pages(self) -> dict:
        """Each view's page. "steps" is the step-by-step half: a tab of its own when the halves
        are folded into tabs, beside the parallel pass (the right half's page) when not."""
        steps = self.parallel if self.side_by_side else self.step_page
        return {"steps": steps, "parallel": self.parallel, "beam": self.beam_page}

    def _on_tab(self, index: int) -> None:
        page = self.tabs.widget(index)
        if self.side_by_side and page is self.parallel and self.state.session.view(self.panel_name) == "steps":
            return  # side by side, "steps" shows the parallel pass beside them: still "steps"
        # (side by side, "steps" and "parallel" share the parallel page: moving to it means "parallel")
        views = [v for v, widget in self.view_pages().items() if widget is page and not (v == "steps" and self.side_by_side)]
        if views:
            self.state.set_view(self.panel_name, views[0])

    def _on_view(self, panel: str, view: str) -> None:
        page = self.view_pages().get(view) if panel == self.panel_name else None
        if page is not None and self.tabs.indexOf(page) >= 0 and self.tabs.currentWidget() is not page:
            self.tabs.setCurrentWidget(page)

    # -- stepping -----------------------------------------------------------------------------------
    def _on_transport(self, action: str) -> None:
        if self.run is None:
            self.controls.play.setChecked(False)
            return
        if action != "play":
            self._stop_play()
            self.set_step({"reset": 0, "back": self.t - 1, "step": self.t + 1}[action])
        elif self.controls.play.isChecked():
            if self.t >= len(self.run.steps) - 1:
                self.set_step(0)
            self._player.start()
        else:
            self._stop_play()

    def _tick(self) -> None:
        if self.run is None or self.t >= len(self.run.steps) - 1:
            self._stop_play()
            return
        self.set_step(self.t + 1)

    def _stop_play(self) -> None:
        self._player.stop()
        self.controls.play.setChecked(False)

    def set_step(self, t: int) -> None:
        """Show decoding step t (clamped to the run)."""
        if self.run is None:
            return
        self.state.session.set_decode_step(max(0, min(int(t), len(self.run.steps) - 1)))
        self._show_step()

    @property
    def t(self) -> int:
        """The decoding step shown: the session's (None there = the last step of the run)."""
        if self.run is None:
            return 0
        t = self.state.session.decode_step
        return len(self.run.steps) - 1 if t is None else max(0, min(t, len(self.run.steps) - 1))

    def _update_step_label(self) -> None:
        n = len(self.run.steps)
        self.controls.step_label.setText(f"step {self.t + 1} / {n}")  # counted from 1, as the beam axis
        self.controls.back.setEnabled(self.t > 0)
        self.controls.step.setEnabled(self.t < n - 1)

    def apply_screen_class(self, cls: ScreenClass) -> None:
        """The maps and bars as `cls` declares them (`PlotGrid`)."""
        self.plots.apply_screen_class(cls)

    # -- reflow and lifetime ---------------------------------------------------------------------------
    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        room = offered_room(self)  # the dock's, not this panel's own size: no history in the choice
        self.set_side_by_side(room.width() >= SIDE_BY_SIDE[0] and room.height() >= SIDE_BY_SIDE[1])

    def set_side_by_side(self, on: bool) -> None:
        """Wide and tall: step by step beside the parallel pass. Otherwise one tab each, so no
        map shrinks below a readable size. The session's view stays what it was."""
        if on == self.side_by_side:
            return
        self.side_by_side = on
        blocker = QSignalBlocker(self.tabs)  # moving tabs is no choice of the user's
        current = self.tabs.currentWidget()
        if on:
            self.tabs.removeTab(self.tabs.indexOf(self.step_page))
            self.left_tabs.addTab(self.step_page, STEP_TAB)
            current = self.parallel if current is self.step_page else current
        else:
            self.left_tabs.removeTab(0)
            self.tabs.insertTab(0, self.step_page, STEP_TAB)
            current = self.view_pages().get(self.state.session.view(self.panel_name), current)
        self.left_tabs.setVisible(on)
        self.tabs.setCurrentWidget(current)
        blocker.unblock()

    def closeEvent(self, event) -> None:
        self._stop_play()
        super().closeEvent(event)
