"""Which layers the all-heads grid shows: all of them when their rows are tall enough to read
and to name every token, else a page of consecutive layers holding the selected one (a 6-layer
MiniLM at 1280×720 would squeeze 6 rows of 12 maps into ~40 px rows; three layers at a time keep
each map legible).

The page is a function of the model, the selected layer and the room on screen only, never of
earlier clicks: a scene draws the same whatever was shown before."""
from __future__ import annotations

MIN_ROW_PX = 80.0  # the least height of one layer's row of maps (its tokens still readable)
CHROME_PX = 150.0  # the plot's title, head numbers and the key tokens under the maps


def layers_fitting(room_px: float, row_px: float = MIN_ROW_PX) -> int:
    """How many rows of maps, each at least `row_px` high, fit a canvas `room_px` high (at least
    one). A row that would not fit even alone (a long input's labels) asks only MIN_ROW_PX: its
    labels are thinned, with a count, whatever the page, and the overview keeps its layers."""
    if row_px > room_px - CHROME_PX:
        row_px = MIN_ROW_PX
    return max(1, int((room_px - CHROME_PX) // max(MIN_ROW_PX, row_px)))


def label_row_px(tokens: int, cell_px: float) -> float:
    """The height one layer's row of maps needs for all of its `tokens` query labels, each in
    a cell of `cell_px` (the token axis' legible minimum), and the gap below the row."""
    return (tokens + 1) * cell_px


def layer_page(n_layers: int, selected: int, room_px: float, row_px: float = MIN_ROW_PX) -> tuple[int, int]:
    """(first layer, number of layers) to draw: every layer if they fit, else the page of
    `layers_fitting` layers in a fixed partition (1–3, 4–6, …; the last page ends at the last
    layer) that holds `selected`. `row_px`: the height a row needs (its token labels: a
    16-token input's two layers at 1280×720 drew every other label; one layer a page names all)."""
    per_page = layers_fitting(room_px, row_px)
    if n_layers <= per_page:
        return 0, n_layers
    first = min((max(0, selected) // per_page) * per_page, n_layers - per_page)
    return first, per_page


def page_note(first: int, count: int, n_layers: int) -> str:
    """The left axis's title: which layers are drawn, counted from 1."""
    if count >= n_layers:
        return "layer"
    if count == 1:
        return f"layer {first + 1} of {n_layers} (Layer: pages)"
    return f"layers {first + 1}–{first + count} of {n_layers} (Layer: pages)"
