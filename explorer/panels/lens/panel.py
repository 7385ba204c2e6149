"""The logit lens: each layer's residual stream read through the output layer (model.interpret.lens).

A layer × position grid, the output layer's row on top as in Figure 1: each cell shows the
token the output layer would pick from that layer's stream at that position and its
probability (colour = probability, the theme's sequential map). Clicking a cell shows its
top 5. For a masked LM the [MASK] columns are framed. A model without an output layer
(all-MiniLM-L6-v2) has no lens, and the panel says so instead of drawing anything.

The panel draws `Frame.lens`, computed in the one compute step; an LLM's lens (49k tokens × 30
layers × every position: `Frame.lens_deferred`) is computed here instead, off the GUI thread and
only when the panel is shown, then kept on the frame. The clicked cell is session state: the
panel's view, "cell <layer> <position>", so a scene restores it.
"""
from __future__ import annotations

import html

from PySide6.QtWidgets import QHBoxLayout, QVBoxLayout, QWidget

from explorer import style, theme
from explorer.drawing.heatmap import Heatmap
from explorer.drawing.label_axis import display_piece
from explorer.input_text import printable
from explorer.latest_job import LatestJob
from explorer.panels.texts import say, text_label
from model.inference.bundle import smoothed_target
from model.interpret.frame import forward_lens

NO_HEAD = ("{name} has no output layer (no language-model head): there is nothing to read its layers "
           "through, so it has no logit lens. It is a sentence encoder: its sentence embeddings and their "
           "similarities are in the Decoding panel.")


def cell_view(layer: int, position: int) -> str:
    return f"cell {layer} {position}"


def parse_cell(view: str | None) -> tuple[int, int] | None:
    """The (layer, position) a lens view names, or None."""
    parts = (view or "").split()
    if len(parts) == 3 and parts[0] == "cell" and parts[1].isdigit() and parts[2].isdigit():
        return int(parts[1]), int(parts[2])
    return None


class LensPanel(QWidget):
    """Layer × position: the output layer's top token from every layer; click for the top 5."""

    panel_name = "lens"
    title = "Logit lens"

    def __init__(self, state, parent=None):
        super().__init__(parent)
        self.state = state
        self.lens = None
        self.waiting = None  # the frame whose deferred lens is asked for (computed when the panel is shown)
        self.computing = None  # the frame whose lens the job computes
        self.job = LatestJob(self)
        self.job.done.connect(self._on_lens)
        self.job.failed.connect(self._on_lens_failed)
        self.note = text_label()
        self.grid = Heatmap(colour_bar=True, square=False)  # layers × positions: cells fill the room
        self.grid.cellClicked.connect(self._on_cell_clicked)
        self.detail = text_label(rich=True, top_left=True)
        self.detail.setMinimumWidth(180)
        row = QHBoxLayout()
        row.addWidget(self.grid, 4)
        row.addWidget(self.detail, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.note)
        layout.addLayout(row, 1)
        state.bundleChanged.connect(self._on_bundle)
        state.frameChanged.connect(self._on_frame)
        state.viewChanged.connect(self._on_view)
        theme.notifier().changed.connect(self._on_theme)  # (a bound method: dropped with the panel)
        if state.bundle is not None:
            self._on_bundle(state.bundle)
        if state.frame is not None:
            self._on_frame(state.frame)

    # -- session -> view ----------------------------------------------------------------------------
    def _on_bundle(self, bundle) -> None:
        self.lens = None
        self.grid.clear_data()
        self.detail.setText("")
        if bundle.has_output_layer:
            say(self.note, "Run an input to read every layer through the output layer.", "info")
        else:
            say(self.note, NO_HEAD.format(name=bundle.name), "warning")

    def _on_frame(self, frame) -> None:
        if frame.lens is None and frame.lens_deferred and frame.bundle.has_output_layer:
            self.lens, self.waiting = None, frame
            self.grid.clear_data()
            self.detail.setText("")
            say(self.note, "Reading every layer at every position through the output layer "
                      f"({frame.bundle.output_size:,} tokens)…", "info")
            self._start_lens()
            return
        self.waiting = None
        if not frame.bundle.has_output_layer or frame.lens is None:
            self._on_bundle(frame.bundle)
            return
        self.lens = lens = frame.lens
        reads = ("the token the decoder reads (the cell: its guess for the next one)" if lens.stack == "decoder"
                 else "an input token (the cell: the guess for that position)")
        marked = " Dashed columns: [MASK]." if lens.marked else ""
        say(self.note, f"Each row: one {lens.stack} layer's output read through the output layer"
                  f"{' (after the final LayerNorm)' if frame.bundle.config.norm_first else ''}; "
                  f"each column: {reads}. Top row: the last layer (the model's output). Colour = probability; "
                  f"click a cell for its top 5.{marked}", "info")
        n = lens.n_layers
        rows = list(range(n - 1, -1, -1))  # the output layer's row on top, as in Figure 1
        probs = lens.top_probs[..., 0].numpy()  # (L, T)
        values = probs[rows]
        texts = [[[display_piece(printable(lens.top_pieces[layer][t][0])), f"{probs[layer, t]:.2f}"]
                  for t in range(len(lens.positions))] for layer in rows]
        labels = [f"Layer {layer + 1}" for layer in rows]
        columns = [display_piece(printable(p)) for p in lens.positions]
        self.grid.set_data(values, labels, columns, texts=texts, row_names=True)
        self.grid.mark_columns(lens.marked)
        self.grid.describe = self._describe
        self._show_cell()

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        self._start_lens()

    def _start_lens(self) -> None:
        """Compute the waiting frame's lens off the GUI thread, once the panel is on screen."""
        frame = self.waiting
        if frame is not None and frame is not self.computing and self.isVisible():
            self.computing = frame
            self.job.submit(lambda: (frame, forward_lens(frame.bundle, frame.forward)))

    def wait_until_drawn(self, msecs: int = 60000) -> bool:
        """Block until a deferred lens is computed and drawn (headless figures, tests)."""
        self._start_lens()
        return self.job.wait(msecs)

    def _on_lens(self, done) -> None:
        frame, lens = done
        self.computing = None
        frame.lens, frame.lens_deferred = lens, False  # kept on the frame: shown again without recomputing
        if frame is self.waiting:
            self._on_frame(frame)

    def _on_lens_failed(self, message: str) -> None:
        self.computing = self.waiting = None
        say(self.note, f"The logit lens could not be computed: {message}", "warning")

    def _describe(self, row: int, col: int) -> str:
        """A cell's hover text: its layer, position, top token and probability."""
        token, prob = self.grid.texts[row][col]
        return f"{self.grid.row_labels[row]}, position {col} ({self.grid.col_labels[col]}): {token} {prob} · click for the top 5"

    def _on_view(self, panel: str, _view: str) -> None:
        if panel == self.panel_name:
            self._show_cell()

    def _on_theme(self, *_) -> None:
        self._show_cell()  # the label-smoothing note's colour is in its HTML

    def _on_cell_clicked(self, row: int, col: int) -> None:
        if self.lens is not None:
            self.state.set_view(self.panel_name, cell_view(self.lens.n_layers - 1 - row, col))

    # -- drawing ------------------------------------------------------------------------------------
    def _selected(self) -> tuple[int, int]:
        """The session's cell, clamped; by default the last layer at the first [MASK] (or the last position)."""
        lens = self.lens
        cell = parse_cell(self.state.session.view(self.panel_name))
        if cell is None:
            return lens.n_layers - 1, lens.marked[0] if lens.marked else len(lens.positions) - 1
        return min(cell[0], lens.n_layers - 1), min(cell[1], len(lens.positions) - 1)

    def _show_cell(self) -> None:
        lens = self.lens
        if lens is None or not lens.positions:
            return
        layer, t = self._selected()
        self.grid.select((lens.n_layers - 1 - layer, t))
        token = html.escape(printable(lens.positions[t]))
        rows = "".join(
            f"<tr><td>{k + 1}.&nbsp;</td><td><b>{html.escape(printable(piece))}</b>&nbsp;&nbsp;</td>"
            f"<td align='right'>{float(lens.top_probs[layer, t, k]):.3f}</td></tr>"
            for k, piece in enumerate(lens.top_pieces[layer][t]))
        final = html.escape(printable(lens.top_pieces[-1][t][0]))
        note = self._smoothing_note()
        self.detail.setText(f"<b>Layer {layer + 1}, position {t}</b><br>reads “{token!s}”<br>"
                            f"<table>{rows}</table>Last layer: <b>{final}</b>{note}")
        why = (" The model was trained on label-smoothed targets (Section 5.4), which give the right token "
               "1 − ε + ε/V: its last layer is never sure, while an earlier layer read through the same output "
               "layer is not held to that (1.00 under 0.91 is no contradiction).") if note else ""
        self.detail.setToolTip(f"Top {len(lens.top_pieces[layer][t])} of layer {layer + 1} at position {t}.{why}")

    def _smoothing_note(self) -> str:
        """Why the last layer is less sure than an earlier one (1.00 under 0.91): it was trained
        on label-smoothed targets (Section 5.4), which put 1 − ε + ε/V on the right token; an
        earlier layer read through the same output layer was never held to that."""
        frame = self.state.frame
        epsilon = frame.bundle.label_smoothing if frame is not None else 0.0
        if epsilon <= 0:
            return ""
        top = smoothed_target(epsilon, frame.bundle.output_size)
        where = "at a [MASK] " if frame.bundle.fills_masks else ""  # (a masked LM is scored only there)
        return (f"<p style='color:{style.MUTED.name()};'>Label smoothing (ε = {epsilon:g}): {where}the last layer "
                f"aims at {top:.2f}.</p>")  # (the rest in the tooltip: a projector's column is short)


__all__ = ["LensPanel", "parse_cell", "cell_view"]
