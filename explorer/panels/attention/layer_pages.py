"""Which layers the all-heads grid shows: all of them when their rows are tall enough to read
and to name every token, else a page of consecutive layers holding the selected one (a 6-layer
MiniLM at 1280×720 would squeeze 6 rows of 12 maps into ~40 px rows; three layers at a time keep
each map legible).

The page is a function of the model, the selected layer and the room on screen only, never of
earlier clicks: a scene draws the same whatever was shown before."""
from __future__ import annotations

from explorer.drawing.mosaic import gap_for

MIN_ROW_PX = 80.0  # the least height of one layer's row of maps (its tokens still readable)
CHROME_PX = 150.0  # a default for the title, head numbers and key tokens (the grid measures its own)


def layers_fitting(room_px: float, row_px: float = MIN_ROW_PX, chrome_px: float = CHROME_PX) -> int:
    """How many rows of maps, each at least `row_px` high, fit a canvas `room_px` high (at least
    one) beside `chrome_px` of titles and axes. A row that would not fit even alone (a long
    input's labels) asks only MIN_ROW_PX: its labels are thinned, with a count, whatever the
    page, and the overview keeps its layers."""
    if row_px > room_px - chrome_px:
        row_px = MIN_ROW_PX
    return max(1, int((room_px - chrome_px) // max(MIN_ROW_PX, row_px)))


def label_row_px(tokens: int, cell_px: float) -> float:
    """The height one layer's row of maps needs for all of its `tokens` query labels, each in
    a cell of `cell_px` (the token axis' legible minimum), and the gap below the row."""
    return (tokens + 1) * cell_px


def layer_page(n_layers: int, selected: int, room_px: float, row_px: float = MIN_ROW_PX,
               chrome_px: float = CHROME_PX) -> tuple[int, int]:
    """(first layer, number of layers) to draw: every layer if they fit, else the page of
    `layers_fitting` layers that holds `selected`: pages 1–3, 4–6, …, the last one ending at
    the last layer (so it may share layers with the page before). `row_px`: the height a row needs (its token labels: a
    16-token input's two layers at 1280×720 drew every other label; one layer a page names all)."""
    per_page = layers_fitting(room_px, row_px, chrome_px)
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


def lone_note(first: int, count: int, n_layers: int, head: int, n_heads: int) -> str:
    """The left axis's title on a page of one map: which layer and head, and what turns the page.
    (The plot's title keeps to "Encoder self-attention · L1 H2": with the page note it was wider
    than a lone map and its axes, and a view box that wide set the token labels off the map.)"""
    heads = f"head {head + 1} of {n_heads}"
    if count >= n_layers:
        return f"{heads} (Head: pages)"
    return f"layer {first + 1} of {n_layers} · {heads} (Layer, Head: pages)"


def head_note(first: int, count: int, n_heads: int) -> str:
    """Which heads a page of some of a layer's heads draws (for the title), else ""."""
    if count in (0, n_heads):
        return ""
    heads = f"head {first + 1}" if count == 1 else f"heads {first + 1}–{first + count}"
    return f"{heads} of {n_heads}"


WRAP_SAFETY = 1.08  # wrapped pages must estimate this much more than the labels need
BOX_PAD = 0.35  # the selection box's distance from its map, in gaps (inside the gap between maps)
WRAPPED_BOX_PAD = 0.1  # heads wrapped into rows: the gap under a map also holds the next map's name
NAME_LIFT = 0.0  # a wrapped map's name ("H3") stands this many gaps above its map (its line's descent is gap enough)


def frame_margin(gap: float, tokens: int) -> float:
    """Cells fitted around the mosaic: room for the selection box and its 3-px pen. (0.7 of a
    gap before: a single row of 24-token maps lost 2 cells of height to it on a projector.)"""
    return (BOX_PAD + 0.15) * gap + 0.02 * max(tokens, 1) ** 0.5


def names_all(cell: float, need: float, rows: int = 1) -> bool:
    """Do cells of `cell` px name every token whose labels need `need` px? Wrapped rows' room is
    the rougher estimate (each map's name above it), so they must show WRAP_SAFETY more: four
    16-token maps in 2 rows at 1024×768 came out 0.3 px a cell short and dropped half the labels."""
    return cell >= need * (WRAP_SAFETY if rows > 1 else 1.0)


def lone_margin(tokens: int) -> float:
    """`frame_margin` of a page of one map: no selection box around it (the map is the head the
    title names), only the hair of room the box's frame leaves any mosaic."""
    return frame_margin(0, tokens)


def mosaic_cell_px(rows: int, cols: int, t_q: int, t_k: int, gap: float, room_w: float, room_h: float) -> float:
    """The side of a square cell when `rows` × `cols` maps of t_q × t_k cells, `gap` cells apart
    and framed (the selection box's margin), fill at most `room_w` × `room_h` pixels."""
    frame = 2 * frame_margin(gap, max(t_q, t_k)) + 0.5
    return min(room_w / (cols * t_k + (cols - 1) * gap + frame), room_h / (rows * t_q + (rows - 1) * gap + frame))


def head_rows(heads: int, t_q: int, t_k: int, room_w: float, room_h: float, need_q: float, need_k: float,
              gap: float = 1.0) -> int:
    """Into how many rows one layer's `heads` maps are wrapped so that every token label fits:
    the fewest (a divisor of `heads`) whose square cells are at least `need_q` (a query label's
    height) and `need_k` (a key label's width, turned if need be) pixels, in a `room_w` × `room_h`
    canvas; else the one with the largest cells. Four 16-token maps side by side in a 1920×1080
    window's dock drew every other label; two rows of two name them all."""
    best, best_cell = 1, -1.0
    for rows in (r for r in range(1, heads + 1) if heads % r == 0):
        cell = mosaic_cell_px(rows, heads // rows, t_q, t_k, gap, room_w, room_h)
        if names_all(cell, max(need_q, need_k), rows):
            return rows
        if cell > best_cell * 1.05:  # a near tie keeps fewer rows
            best, best_cell = rows, cell
    return best


def wrapped_gap(t_q: int, t_k: int) -> int:
    """The gap between wrapped rows of maps, in cells: room above each map for its head's name."""
    return max(3, round(max(t_q, t_k) / 6))


def head_page(heads: int, selected: int, t_q: int, t_k: int, room_w: float, room_h: float, wrapped_room_h: float,
              need: float) -> tuple[int, int, int] | None:
    """(first head, heads a page, rows) of one layer's page that names every token: the most
    heads whose maps, side by side or wrapped into rows, get cells of at least `need` px in a
    `room_w` × `room_h` canvas (`wrapped_room_h` when wrapped, or for a lone map: no row of head
    numbers then, each map is named above it or in the title), that holds `selected`: pages of n
    from the first head, the last one ending at the last head (heads 1–3 and 2–4 for three of
    four). None when not even one map has the room: the labels are thinned, with a count.
    Four 24-token maps on a 1280×720 projector named every other token; three a page name all;
    a 31-token input names every token one map a page (it drew 22 of 62 labels)."""
    for n in range(heads, 0, -1):
        for rows in (r for r in range(1, n + 1) if n % r == 0):
            # a lone map has no selection box to frame (`lone_margin`) and no row of head numbers
            gap = 0 if n == 1 else gap_for(t_q, t_k) if rows == 1 else wrapped_gap(t_q, t_k)
            h = room_h if rows == 1 and n > 1 else wrapped_room_h
            if names_all(mosaic_cell_px(rows, n // rows, t_q, t_k, gap, room_w, h), need, rows):
                first = min((max(0, selected) // n) * n, heads - n)
                return first, n, rows
    return None
