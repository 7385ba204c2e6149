"""Which layers the all-heads grid shows: all of them when their rows are tall enough to read,
else a page of consecutive layers holding the selected one (a 6-layer MiniLM at 1280×720 would
squeeze 6 rows of 12 maps into ~40 px rows; three layers at a time keep each map legible).

The page is a function of the model, the selected layer and the room on screen only, never of
earlier clicks: a scene draws the same whatever was shown before."""
from __future__ import annotations

MIN_ROW_PX = 80.0  # the least height of one layer's row of maps (its tokens still readable)
CHROME_PX = 150.0  # the plot's title, head numbers and the key tokens under the maps


def layers_fitting(room_px: float) -> int:
    """How many rows of maps fit a canvas `room_px` high (at least one)."""
    return max(1, int((room_px - CHROME_PX) // MIN_ROW_PX))


def layer_page(n_layers: int, selected: int, room_px: float) -> tuple[int, int]:
    """(first layer, number of layers) to draw: every layer if they fit, else the page of
    `layers_fitting` layers in a fixed partition (1–3, 4–6, …; the last page ends at the last
    layer) that holds `selected`."""
    per_page = layers_fitting(room_px)
    if n_layers <= per_page:
        return 0, n_layers
    first = min((max(0, selected) // per_page) * per_page, n_layers - per_page)
    return first, per_page


def page_note(first: int, count: int, n_layers: int) -> str:
    """The left axis's title: which layers are drawn, counted from 1."""
    if count >= n_layers:
        return "layer"
    return f"layers {first + 1}–{first + count} of {n_layers} (Layer: pages)"
