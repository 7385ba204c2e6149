"""The logit lens (model.interpret.lens): layer × position, each cell the token the output layer
would pick from that layer's stream (last layer on top, as in Figure 1); a click lists its top 5.
An LLM's lens is computed off the GUI thread, only when the panel is shown (`Frame.lens_deferred`)."""
from __future__ import annotations

import html

from PySide6.QtGui import QFontMetricsF

from explorer import style, theme
from explorer.drawing.cell_text import CellText
from explorer.drawing.heatmap import Heatmap
from explorer.drawing.label_axis import display_piece, label_font
from explorer.input_text import printable
from explorer.panels.base import Panel
from explorer.panels.layouts import column, row
from explorer.panels.texts import cell_view, parse_cell, say, text_label
from model.inference.bundle import smoothed_target
from model.interpret.frame import forward_lens

NO_HEAD = ("{name} has no output layer (no language-model head): there is nothing to read its layers "
           "through, so it has no logit lens. It is a sentence encoder: its sentence embeddings and their "
           "similarities are in the Decoding panel.")


class TokenCellText(CellText):
    """Cell text asking for columns as wide as its widest line, so a predicted token is never cut
    (columns that do not fit are a drag away, and the map counts them)."""

    def room(self) -> tuple[float, float]:
        block, number = super().room()
        metrics = QFontMetricsF(label_font())
        lines = (line for row in self.texts for cell in row for line in cell)
        return block, max(number, max(map(metrics.horizontalAdvance, lines), default=0.0) + 8)


def position_labels(pieces: list[str]) -> list[str]:
    """Each column's position and the token read there ("3 frog")."""
    return [f"{t}\u2009{display_piece(printable(piece))}" for t, piece in enumerate(pieces)]


class LensPanel(Panel):
    panel_name = "lens"
    title = "Logit lens"

    def __init__(self, state, parent=None):
        super().__init__(state, parent)
        self.lens = None
        self.waiting = None  # the frame whose deferred lens is asked for
        self.computing = None  # the frame whose lens the job computes
        self.add_job(self._on_lens, self._on_lens_failed)
        self.note = text_label()
        self.grid = Heatmap(colour_bar=True, square=False)  # layers × positions: cells fill the room
        self.grid.plot.removeItem(self.grid.cell_text)
        self.grid.cell_text = TokenCellText()
        self.grid.plot.addItem(self.grid.cell_text)
        self.grid.set_axis_names("", "position · token read")
        self.grid.cellClicked.connect(self._on_cell_clicked)
        self.detail = text_label(rich=True, top_left=True)
        self.detail.setMinimumWidth(180)
        column(self.note, (row((self.grid, 4), (self.detail, 1)), 1), parent=self, margins=4)
        state.viewChanged.connect(self._on_view)
        theme.notifier().changed.connect(self._show_cell)  # the label-smoothing note's colour is in its HTML
        self.follow(bundle=self._on_bundle, frame=self._on_frame)

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
        rows = list(range(lens.n_layers - 1, -1, -1))  # the output layer's row on top, as in Figure 1
        probs = lens.top_probs[..., 0].numpy()  # (L, T)
        texts = [[[display_piece(printable(lens.top_pieces[layer][t][0])), f"{probs[layer, t]:.2f}"]
                  for t in range(len(lens.positions))] for layer in rows]
        self.grid.set_data(probs[rows], [f"Layer {layer + 1}" for layer in rows],
                           position_labels(lens.positions), texts=texts, row_names=True)
        self.grid.mark_columns(lens.marked)
        self.grid.describe = self._describe
        self._show_cell()

    def showEvent(self, event) -> None:  # noqa: N802
        super().showEvent(event)
        self._start_lens()

    def _start_lens(self) -> None:
        frame = self.waiting
        if frame is not None and frame is not self.computing and self.isVisible():
            self.computing = frame
            self.job.submit(lambda: (frame, forward_lens(frame.bundle, frame.forward)))

    def wait_until_drawn(self, msecs: int = 60000) -> bool:
        self.draw_now()
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
        token, prob = self.grid.texts[row][col]
        piece = display_piece(printable(self.lens.positions[col]))
        return f"{self.grid.row_labels[row]}, position {col} ({piece}): {token} {prob} · click for the top 5"

    def _on_view(self, panel: str, _view: str) -> None:
        if panel == self.panel_name:
            self._show_cell()

    def _on_cell_clicked(self, row: int, col: int) -> None:
        if self.lens is not None:
            self.state.set_view(self.panel_name, cell_view(self.lens.n_layers - 1 - row, col))

    def _selected(self) -> tuple[int, int]:
        """The session's cell, clamped; by default the last layer at the first [MASK] (or the last position)."""
        lens = self.lens
        cell = parse_cell(self.state.session.view(self.panel_name), 2)
        if cell is None:
            return lens.n_layers - 1, lens.marked[0] if lens.marked else len(lens.positions) - 1
        return min(cell[0], lens.n_layers - 1), min(cell[1], len(lens.positions) - 1)

    def _show_cell(self, *_) -> None:
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
        """Why the last layer is less sure than an earlier one: label-smoothed targets (Section 5.4)."""
        frame = self.state.frame
        epsilon = frame.bundle.label_smoothing if frame is not None else 0.0
        if epsilon <= 0:
            return ""
        top = smoothed_target(epsilon, frame.bundle.output_size)
        where = "at a [MASK] " if frame.bundle.fills_masks else ""  # (a masked LM is scored only there)
        return (f"<p style='color:{style.MUTED.name()};'>Label smoothing (ε = {epsilon:g}): {where}the last layer "
                f"aims at {top:.2f}.</p>")
