"""The words of an activation-patching picture: the run's summary, a cell's hover line and its
detail (HTML), and which cell is shown by default. Qt-free, so a GUI only draws them."""
from __future__ import annotations

import html

from model.inference.labels import display_piece
from model.interpret.input_texts import printable
from model.interpret.patching import SITE_TITLES, SUBLAYER_TITLES, PatchingResult, PatchMap

FLAT_BELOW = 0.01  # a map whose every |share| is below this reads as one flat colour: its caption says so


def summary(result: PatchingResult, stack: str | None = None) -> str:
    """What the maps measure, for this run; `stack`: the stack whose maps are shown (their cells counted)."""
    where = f"after “{display_piece(printable(result.position_piece))}” (position {result.position})"
    cells = sum(m.restored.size for m in result.maps)
    shown = sum(m.restored.size for m in result.maps if m.stack == stack)
    counted = f"{shown} on these maps, {cells} in all" if stack is not None and shown != cells else f"{cells}"
    return (f"Logit difference “{printable(result.answer)}” − “{printable(result.wrong)}” {where}: clean "
            f"{result.clean_diff:+.2f}, corrupted {result.corrupted_diff:+.2f}. Each cell: the share of it one "
            f"patch restores (1 = all, 0 = none); one patched run a cell ({counted}), batched into "
            f"{result.forwards} forwards, {result.seconds:.2f} s. "
            "Bars: the clean input's direct logit attribution (LayerNorms frozen at their scale).")


def flat_caption(restored) -> str:
    """The caption under a map whose cells all restore less than FLAT_BELOW (it reads as one colour)."""
    return f"all |Δ| < {FLAT_BELOW}" if restored.size and abs(restored).max() < FLAT_BELOW else ""


def map_title(m: PatchMap) -> str:
    """A map's title under its stack's name (the stack is chosen above the maps): "Self-attention heads"."""
    words = [SUBLAYER_TITLES[m.sublayer], SITE_TITLES[m.site]]
    title = " ".join(w for w in words if w)
    return title[:1].upper() + title[1:]


def patched_what(m: PatchMap, col: int) -> str:
    """The column a cell patches: a head (at every position) or a position and its token."""
    return f"head {col + 1} (all positions)" if m.site == "head" else f"position {col} “{printable(m.columns[col])}”"


def cell_hover(m: PatchMap, layer: int, col: int) -> str:
    return (f"{m.title}, layer {layer + 1}, {patched_what(m, col)}: restores {m.restored[layer, col] + 0.0:.2f} "
            "of the logit difference · click for the patched output")


def cell_detail(result: PatchingResult, m: PatchMap, layer: int, col: int, muted: str) -> str:
    """HTML: the cell's share restored, its logit difference, the patched run's top tokens."""
    tops = " · ".join(f"<b>{html.escape(printable(piece))}</b> {float(m.top_probs[layer, col, k]):.2f}"
                      for k, piece in enumerate(m.top_pieces[layer][col]))
    return (f"<b>{html.escape(m.title)}</b>, layer {layer + 1}, {html.escape(patched_what(m, col))} patched:<br>"
            f"restores <b>{m.restored[layer, col]:.2f}</b> (logit difference {m.logit_diff[layer, col]:+.2f})"
            f"<br>top: {tops}<br><span style='color:{muted};'>clean: {html.escape(printable(result.clean_top[0][0]))}, "
            f"corrupted: {html.escape(printable(result.corrupted_top[0][0]))}</span>")


def chosen_cell(result: PatchingResult, maps: list[PatchMap], cell: tuple | None,
                output_stack: str) -> tuple[PatchMap, int, int] | None:
    """(map, layer, column) of `cell` (key, layer, column), clamped; by default the first map's last
    layer at the measured position (on the output stack; elsewhere the last position)."""
    if not maps:
        return None
    by_key = {m.key: m for m in maps}
    if cell is not None and cell[0] in by_key:
        m = by_key[cell[0]]
        return m, min(cell[1], len(m.rows) - 1), min(cell[2], len(m.columns) - 1)
    m = maps[0]
    position = result.position if m.stack == output_stack else len(m.columns) - 1
    return m, len(m.rows) - 1, min(position, len(m.columns) - 1)


def attribution_table(labels: list[str], values, drawn: int) -> str:
    """HTML: every head's and MLP's direct effect on the logit difference, and how many are drawn."""
    rows = "".join(f"<tr><td>{html.escape(label)}</td><td align='right'>{value:+.3f}</td></tr>"
                   for label, value in zip(labels, values))
    return (f"Each head's and MLP's direct effect on the logit difference (the {drawn} largest are drawn):"
            f"<table>{rows}</table>")
