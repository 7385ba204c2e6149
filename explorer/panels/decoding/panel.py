"""Masked vs. unmasked decoding (Section 3.2.3): one token at a time (the prefix, the growing causal
mask, the step's attention and next-token bars) beside the teacher-forced parallel pass with its
mask switch, or the beam tree. A masked LM gets its [MASK] guesses, a sentence encoder its similarities."""
from __future__ import annotations

from PySide6.QtWidgets import QStackedWidget, QWidget

from explorer import style, theme
from explorer.drawing.token_heatmap import TokenHeatmap, display_piece
from explorer.panel_dock import offered_room
from explorer.panels.base import Panel
from explorer.panels.decoding.bars import TopKBars
from explorer.panels.decoding.beam_view import BeamTreeView
from explorer.panels.decoding.controls import DecodingControls
from explorer.panels.decoding.decode_tabs import DecodeTabs, step_views
from explorer.panels.decoding.embedding_view import EmbeddingView
from explorer.panels.decoding.mask_predictions_view import MaskPredictionsView
from explorer.panels.decoding.parallel_view import ParallelPassView
from explorer.panels.layouts import column
from explorer.panels.texts import say, text_label
from explorer.rich_eliding_label import RichElidingLabel
from explorer.screen import ScreenClass
from model.inference.beam_tree import beam_summary
from model.interpret.decode_run import STRATEGIES, DecodeRun
from model.interpret.decode_texts import StepMaps, step_caption, unknown_note
from model.interpret.token_chips import step_line

SIDE_BY_SIDE = (1200, 680)  # below this the halves become tabs, each with readable maps
DECODER_KINDS = ("decoder_self", "cross")
NO_BEAM = "Choose “Beam search” as the strategy to grow its tree of hypotheses here."


def page(*widgets: QWidget, margins: int = 4) -> QWidget:
    """A page of `widgets` one under the other, the last taking the room left."""
    holder = QWidget()
    column(*widgets[:-1], (widgets[-1], 1), parent=holder, margins=margins)
    return holder


class DecodingPanel(Panel):
    """Decoding step by step, the parallel pass with/without the causal mask, and beam search."""

    panel_name = "decoding"
    title = "Decoding"

    def __init__(self, state, parent=None):
        super().__init__(state, parent)
        self.run: DecodeRun | None = None
        self._build()
        self.job = self.parallel.job  # the pass without the mask: what figures and tests wait for
        self.controls.show_settings(state.session.decoding)
        self._clear("Load a model to watch it decode.", "info")
        self.follow(bundle=self._on_bundle, frame=self._on_frame, result=self._on_result)
        self.seen.follow(state.decodeStepChanged, self._show_step)
        self.seen.follow(state.attentionSelected, self._on_attention_selected)
        state.decodingChanged.connect(self.controls.show_settings)
        state.causalMaskChanged.connect(lambda on: self.parallel.remove_mask.setChecked(not on))
        state.frameFailed.connect(self._on_frame_failed)
        state.busyChanged.connect(self._on_busy)
        state.viewChanged.connect(self._on_view)
        theme.notifier().changed.connect(self._show_step)  # (colours taken as drawn) a bound method: disconnected with the panel

    def _build(self) -> None:
        self.controls = DecodingControls()
        self.controls.settingsChanged.connect(self.state.set_decoding)
        self.controls.transport.moved.connect(self.set_step)
        for combo in (self.controls.layer, self.controls.head):
            combo.currentIndexChanged.connect(self._on_head)
        self.controls.sharpest.clicked.connect(self.show_sharpest_head)
        self.banner = text_label(bold=True)
        self.prefix = style.set_font_role(RichElidingLabel(), "title")
        self.mask_map = TokenHeatmap("Mask", style.mask_colormap())
        self.self_map = TokenHeatmap("Self")
        self.cross_map = TokenHeatmap("Cross")
        self.bars = TopKBars()
        self.parallel = ParallelPassView()
        self.parallel.causalChanged.connect(self.state.session.set_causal_mask)
        self.beam_summary = text_label()
        self.beam_view = BeamTreeView()
        self.beam_page = page(self.beam_summary, self.beam_view)
        self.views = DecodeTabs({"mask": self.mask_map, "self": self.self_map, "cross": self.cross_map, "bars": self.bars,
                               "parallel": self.parallel, "beam": self.beam_page})
        self.views.viewChosen.connect(self._on_tab)
        self.tabs = self.views.tabs
        self.decode_page = page(self.controls, self.prefix, self.views, margins=0)
        self.mask_view = MaskPredictionsView()  # a masked LM has no decoder: its [MASK] guesses
        self.embedding_view = EmbeddingView()  # no LM head: what it computes instead
        self.pages = QStackedWidget()
        for widget in (self.decode_page, self.mask_view, self.embedding_view):
            self.pages.addWidget(widget)
        column(self.banner, (self.pages, 1), parent=self, margins=4)

    # -- the frame and the model ----------------------------------------------------------------
    def _on_frame(self, frame) -> None:
        """A new Frame: the decode, a sentence encoder's similarities, or why this input cannot be
        decoded (a masked LM's guesses come with its forward: `_on_result`)."""
        bundle = frame.bundle
        if bundle.fills_masks:
            return
        if not bundle.has_output_layer:
            self._show_message("", "info")  # an earlier refusal is answered
            self.embedding_view.set_embedding(frame.embedding, bundle.config.d_model)
        elif not bundle.model_kind.has_decoder:
            self._clear("This model has no decoder (encoder-only): there is nothing to decode step by step.", "info")
        elif frame.decode is not None:
            if frame.decode is not self.run:
                self._on_run(frame.decode)
        elif frame.decode_error:
            self._refuse(frame.decode_error, "info" if frame.settings.strategy == "target" else "error")

    def _on_result(self, result) -> None:
        if self.state.bundle is not None and self.state.bundle.fills_masks:
            self.mask_view.set_result(result)

    def _on_frame_failed(self, text: str) -> None:
        if self.state.bundle is not None and not self.state.bundle.fills_masks:
            self._refuse(text, "error")

    def _on_run(self, run: DecodeRun) -> None:
        self.run = run
        self.controls.sharpest.setEnabled(True)
        self._show_message(unknown_note(run), "info")
        self.state.session.set_decode_step(None)  # arrive complete; the transport walks through it
        self.parallel.set_run(run)
        if run.beam is not None:
            self.beam_view.set_result(run.beam, run.vocab)
            self.beam_summary.setText(beam_summary(run.beam, run.settings.beam_size, run.settings.alpha,
                                                   run.beam_text, run.n_prompt))
            self.state.set_view(self.panel_name, "beam")
        else:
            self.beam_view.clear_data()
            self.beam_summary.setText(NO_BEAM)
            if self.state.session.view(self.panel_name) == "beam":  # no tree to show: the steps instead
                self.state.set_view(self.panel_name, "steps")
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
            self.controls.transport.counter.setText("decoding…")
        elif self.run is not None:
            self._update_step_label()

    def _clear(self, text: str, level: str) -> None:
        self.controls.transport.stop()
        self.run = None
        self.controls.sharpest.setEnabled(False)
        for view in (self.mask_map, self.self_map, self.cross_map, self.bars, self.beam_view):
            view.clear_data()
        self.parallel.set_run(None)
        self.prefix.setText("")
        self.beam_summary.setText("")
        self.controls.transport.show_position(0, 0)
        self._show_message(text, level)

    def _show_message(self, text: str, level: str) -> None:
        say(self.banner, text, level)
        self.banner.setVisible(bool(text))

    def _on_bundle(self, bundle) -> None:
        self._clear("", "info")  # the old model's run means nothing for the new one
        mask = bundle.mask_token if bundle.fills_masks else None
        self.mask_view.set_mask_token(mask, next((e for e in bundle.examples if mask and mask in e.split()), None))
        self.mask_view.set_result(None)
        if bundle.fills_masks:
            self.pages.setCurrentWidget(self.mask_view)
        elif not bundle.has_output_layer:
            self.embedding_view.set_embedding(None, bundle.config.d_model)
            self.pages.setCurrentWidget(self.embedding_view)
        else:
            self.pages.setCurrentWidget(self.decode_page)
            self.views.arrange(self.state.session.view(self.panel_name), shown=step_views(bundle.model_kind.attention_kinds))
            self.controls.set_target_label("Follow the continuation" if bundle.config.model_kind.continues_prompt
                                           else STRATEGIES["target"])
            self._on_attention_selected()

    # -- the head shown: the session's selection ---------------------------------------------------
    @property
    def layer(self) -> int:
        n = self.state.bundle.config.n_decoder_layers if self.state.bundle is not None else 1
        return min(self.state.layer, max(n - 1, 0))

    def _on_attention_selected(self) -> None:
        if self.state.bundle is not None:
            cfg = self.state.bundle.config
            self.controls.show_heads(max(cfg.n_decoder_layers, 1), cfg.n_heads, self.layer, self.state.head)
        self._show_step()

    def _on_head(self, *_) -> None:
        """A head picked here: the session's selection (a decoder kind), so every panel follows."""
        kind = self.state.kind if self.state.kind in DECODER_KINDS else "decoder_self"
        if self.state.bundle is not None and kind in self.state.available_kinds():
            self.state.select_attention(kind, self.controls.layer.currentIndex(), self.controls.head.currentIndex())

    def show_sharpest_head(self) -> None:
        """Select the head whose rows align most clearly on the decoded text (`ParallelPass.alignment`):
        cross-attention where the model has it."""
        if self.run is not None:
            kind = "cross" if self.run.masked.cross_attention is not None else "decoder_self"
            self.state.select_attention(kind, *self.run.masked.sharpest_head())

    # -- the views as tabs ---------------------------------------------------------------------------
    @property
    def step_page(self) -> QWidget:
        """The first page of the step's plots."""
        return self.views.step_pages[0][0]

    def _on_tab(self, view: str) -> None:
        """A tab the user picked: the session's view (side by side, "steps" shows the parallel pass)."""
        shown = self.state.session.view(self.panel_name)
        if view != shown and not (self.views.side_by_side and (view, shown) == ("parallel", "steps")):
            self.state.set_view(self.panel_name, view)

    def _on_view(self, panel: str, view: str) -> None:
        if panel == self.panel_name:
            self.views.show_view(view)

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        room = offered_room(self)  # the dock's, not this panel's own size: no history in the choice
        self.set_side_by_side(room.width() >= SIDE_BY_SIDE[0] and room.height() >= SIDE_BY_SIDE[1])

    def set_side_by_side(self, on: bool) -> None:
        """The step's pages beside the parallel pass, or among its tabs so no map shrinks below a
        readable size. The session's view stays what it was."""
        self.views.arrange(self.state.session.view(self.panel_name), side_by_side=on)

    def apply_screen_class(self, cls: ScreenClass) -> None:
        self.views.arrange(self.state.session.view(self.panel_name), cls)

    # -- stepping and drawing a step -----------------------------------------------------------------
    def set_step(self, t: int) -> None:
        """Show decoding step t (clamped to the run)."""
        if self.run is not None:
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
        self.controls.transport.show_position(self.t, len(self.run.steps))

    def _show_step(self, *_) -> None:
        """Step t: the prefix chips, the mask in force, the selected head's masked self- and
        cross-attention (the query row framed) and the next-token bars."""
        run = self.run
        if run is None:
            return
        t, step = self.t, run.steps[self.t]
        m = StepMaps.of(run, t, self.layer, self.state.head)
        framed = dict(highlight_row=m.query, frame=(m.n, m.n), blocked=~m.mask, separator=m.separator)
        self.mask_map.set_data(m.mask.astype("float32"), m.rows, m.rows, **framed)
        self.self_map.set_data(m.self_attention, m.rows, m.rows, **framed)
        self.mask_map.set_title(*m.titles["mask"])
        self.self_map.set_title(*m.titles["self"])
        if m.cross is not None:
            self.cross_map.set_data(m.cross, m.rows, run.src_pieces, frame=(m.n, len(run.src_pieces)),
                                    highlight_row=m.query)
            self.cross_map.set_title(*m.titles["cross"])
        sampled = step.probs.numpy() if run.settings.strategy == "sample" else None
        self.bars.set_smoothing(self.state.bundle.label_smoothing, len(run.vocab))  # (0 when not known)
        self.bars.set_data(step.model_probs.numpy(), run.vocab, step.chosen, sampled)
        caption, tip = step_caption(run, t, display_piece)
        self.bars.set_title(*caption)
        self.bars.setToolTip(tip)
        prefix = run.pieces(step.prefix)  # the step's line: as many of its chips as the width holds
        forms = [step_line(t, prefix, run.vocab[step.chosen], run.n_prompt, style.current(), keep, style.MONO_FAMILY)
                 for keep in (None, *range(len(prefix) - 2, -1, -1))]
        self.prefix.setText(forms[0], shorter=forms[1:])
        self.parallel.show_step(t, self.layer, self.state.head)
        self.beam_view.set_current_step(t if run.beam is not None else None)
        self._update_step_label()

    def shutdown(self) -> None:
        self.controls.transport.stop()
        super().shutdown()
