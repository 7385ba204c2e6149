"""The decoding panel's step-by-step half drawn for the step shown: the prefix as chips, the
mask in force, the masked self-attention and cross-attention of the selected head (this step's
query row framed), and the next-token bars. A mixin of `DecodingPanel`, which builds the
widgets (`prefix`, `mask_map`, `self_map`, `cross_map`, `bars`, `plots`) and knows the run,
the step `t` and the head (`layer`, `head`).
"""
from __future__ import annotations

from PySide6.QtCore import QEvent

from explorer import style
from explorer.drawing.token_heatmap import display_piece
from explorer.panels.decoding.chips import chip, chips_room, prefix_chips
from model.interpret.decode_texts import StepMaps, chosen_how


class StepDrawing:
    """`DecodingPanel`'s drawing of decoding step t into its step-by-step half."""

    def _draw_prefix(self) -> None:
        """The step's input as chips, as many of the newest as the row holds now (drawn again
        when the row is resized or shown: `eventFilter`)."""
        run = self.run
        if run is None:
            return
        step = run.steps[self.t]
        prefix = run.pieces(step.prefix)
        chosen = run.vocab[step.chosen]
        chips = prefix_chips(prefix, run.n_prompt, chips_room(self.prefix, prefix, chosen))
        self.prefix.setText(f"<b>Step {self.t + 1}</b>&nbsp; {chips} &nbsp;→&nbsp;"
                            f"{chip(chosen, style.current().chosen, style.current().on_chosen)}")
        self._prefix_width = self.prefix.width() if self.prefix.isVisible() else -1  # hidden: again when shown

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        if obj is self.prefix and event.type() in (QEvent.Resize, QEvent.Show) and self.prefix.width() != self._prefix_width:
            self._draw_prefix()
        return False

    def _on_theme(self, _name: str) -> None:
        """The step's chips and bars pick their colours as they are drawn: draw them again in the
        new theme's."""
        self._show_step()

    def _show_step(self) -> None:
        run = self.run
        if run is None:
            return
        t, step = self.t, run.steps[self.t]
        m = StepMaps.of(run, t, self.layer, self.head)
        frame = dict(highlight_row=m.query, frame=(m.n, m.n))
        self.mask_map.set_data(m.mask.astype("float32"), m.rows, m.rows, blocked=~m.mask, separator=m.separator, **frame)
        self.mask_map.set_title(*m.titles["mask"])
        self.self_map.set_data(m.self_attention, m.rows, m.rows, blocked=~m.mask, separator=m.separator, **frame)
        self.self_map.set_title(*m.titles["self"])
        self.plots.set_shown(self.cross_map, m.cross is not None)
        if m.cross is not None:
            self.cross_map.set_data(m.cross, m.rows, run.src_pieces, frame=(m.n, len(run.src_pieces)), highlight_row=m.query)
            self.cross_map.set_title(*m.titles["cross"])
        sampled = step.probs if run.settings.strategy == "sample" else None
        self.bars.set_smoothing(self.smoothing, len(run.vocab))
        self.bars.set_data(step.model_probs.numpy(), run.vocab, step.chosen,
                           None if sampled is None else sampled.numpy())
        p = float(step.model_probs[step.chosen])
        self._draw_prefix()
        how = chosen_how(run)
        note = " (dashed: after T / top-k / top-p)" if sampled is not None else ""
        self.bars.set_caption(how, f"{display_piece(run.vocab[step.chosen])!r},", f"p = {p:.2f}")
        self.bars.setToolTip(f"Next token at step {t + 1}: {how} {display_piece(run.vocab[step.chosen])!r}, "
                             f"p = {p:.3f}{note}")
        self.parallel.set_step(t)
        self.beam_view.set_current_step(t if run.beam is not None else None)
        self._update_step_label()
