"""The words of a logit-lens picture: what its rows and columns are, each cell's text, a cell's
top-k (HTML) and why a label-smoothed model's last layer reads less sure. Qt-free."""
from __future__ import annotations

import html

from model.inference.bundle import smoothed_target
from model.inference.labels import display_piece
from model.interpret.input_texts import printable
from model.interpret.lens import LensView

NO_HEAD = ("{name} has no output layer (no language-model head): there is nothing to read its layers "
           "through, so it has no logit lens. It is a sentence encoder: its sentence embeddings and their "
           "similarities are in the Decoding panel.")
SMOOTHING_WHY = (" The model was trained on label-smoothed targets (Section 5.4), which give the right token "
                 "1 − ε + ε/V: its last layer is never sure, while an earlier layer read through the same output "
                 "layer is not held to that (1.00 under 0.91 is no contradiction).")


def reading_note(lens: LensView, norm_first: bool) -> str:
    """What a row, a column and a colour are."""
    reads = ("the token the decoder reads (the cell: its guess for the next one)" if lens.stack == "decoder"
             else "an input token (the cell: the guess for that position)")
    marked = " Dashed columns: [MASK]." if lens.marked else ""
    return (f"Each row: one {lens.stack} layer's output read through the output layer"
            f"{' (after the final LayerNorm)' if norm_first else ''}; each column: {reads}. Top row: the last "
            f"layer (the model's output). Colour = probability; click a cell for its top 5.{marked}")


def position_labels(pieces: list[str]) -> list[str]:
    """Each column's position and the token read there ("3 frog", a thin space between)."""
    return [f"{t}\u2009{display_piece(printable(piece))}" for t, piece in enumerate(pieces)]


def cell_texts(lens: LensView, layers: list[int]) -> list[list[list[str]]]:
    """Each cell's lines, rows in `layers` order: the top token and its probability."""
    probs = lens.top_probs[..., 0]
    return [[[display_piece(printable(lens.top_pieces[layer][t][0])), f"{float(probs[layer, t]):.2f}"]
             for t in range(len(lens.positions))] for layer in layers]


def cell_hover(lens: LensView, layer: int, t: int) -> str:
    """A cell's hover line: where it reads, its top token and that token's probability."""
    token, prob = cell_texts(lens, [layer])[0][t]
    piece = display_piece(printable(lens.positions[t]))
    return f"Layer {layer + 1}, position {t} ({piece}): {token} {prob} · click for the top 5"


def default_cell(lens: LensView, cell: tuple[int, int] | None) -> tuple[int, int]:
    """(layer, position) of `cell`, clamped; by default the last layer at the first [MASK] (or the end)."""
    if cell is None:
        return lens.n_layers - 1, lens.marked[0] if lens.marked else len(lens.positions) - 1
    return min(cell[0], lens.n_layers - 1), min(cell[1], len(lens.positions) - 1)


def smoothing_note(epsilon: float, output_size: int, fills_masks: bool, muted: str) -> str:
    """HTML: where a label-smoothed model's last layer aims (1 − ε + ε/V); "" when ε is 0."""
    if epsilon <= 0:
        return ""
    where = "at a [MASK] " if fills_masks else ""  # (a masked LM is scored only there)
    return (f"<p style='color:{muted};'>Label smoothing (ε = {epsilon:g}): {where}the last layer "
            f"aims at {smoothed_target(epsilon, output_size):.2f}.</p>")


def cell_detail(lens: LensView, layer: int, t: int, note: str = "") -> str:
    """HTML: the cell's layer and position, the token it reads, its top-k and the last layer's pick."""
    rows = "".join(f"<tr><td>{k + 1}.&nbsp;</td><td><b>{html.escape(printable(piece))}</b>&nbsp;&nbsp;</td>"
                   f"<td align='right'>{float(lens.top_probs[layer, t, k]):.3f}</td></tr>"
                   for k, piece in enumerate(lens.top_pieces[layer][t]))
    final = html.escape(printable(lens.top_pieces[-1][t][0]))
    return (f"<b>Layer {layer + 1}, position {t}</b><br>reads “{html.escape(printable(lens.positions[t]))}”<br>"
            f"<table>{rows}</table>Last layer: <b>{final}</b>{note}")
