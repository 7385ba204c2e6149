"""How the explorer's figures label tokens, without Qt: the one label policy of every map (upright,
turned, or every k-th, from measured widths), token texts for labels and bar-chart ticks, round
steps for number axes, the runs of a mask's blocked cells and the columns of a grid of maps."""
from __future__ import annotations

import math

import numpy as np

GAP_PX = 3  # between two neighbouring labels, px
LINE_SHARE = 0.85  # of a line's height, each stacked label
STACK_GAP_PX = 2  # between two stacked labels (their lines have air of their own)


def display_piece(piece: str) -> str:
    """A token as a label: spaces made visible, long words shortened."""
    piece = piece.replace(" ", "␣")
    return piece if len(piece) <= 9 else piece[:8] + "…"


def plan(widths: list[float], line: float, cell_px: float, horizontal: bool) -> tuple[bool, int]:
    """(turned, stride) for labels of these widths and line height in cells of `cell_px` px:
    upright when they fit side by side or turning would not draw more, else turned; then every
    `stride`-th. Stacked labels (a row axis, or turned) take LINE_SHARE of a line each."""
    if not widths or cell_px <= 0:
        return False, 1
    across = max(1, math.ceil((LINE_SHARE * line + STACK_GAP_PX) / cell_px))
    if not horizontal:
        return False, across
    pairs = [(a + b) / 2 for a, b in zip(widths, widths[1:])] or widths
    upright = 1 if max(pairs) + GAP_PX <= cell_px else max(1, math.ceil((max(widths) + GAP_PX) / cell_px))
    return (True, across) if across < upright else (False, upright)


def nice_at_least(step: float) -> float:
    """The smallest 1, 2 or 5 × 10ⁿ at least `step`."""
    if step <= 0:
        return 1.0
    power = 10.0 ** math.floor(math.log10(step))
    return next((m * power for m in (1.0, 2.0, 5.0) if m * power >= step * (1 - 1e-9)), 10.0 * power)


def fitted_ticks(labels: list[str], slot_px: float, char_px: float, offset: float = 0.0) -> list[tuple[float, str]]:
    """Tick labels for bar charts, `slot_px` pixels each: shortened with … to fit, or only every
    k-th where not one character fits."""
    fit = int((slot_px - 2) / char_px)
    step = 1
    if fit < 1:
        step = int(np.ceil(2 * char_px / max(slot_px, 1.0)))
        fit = 1
    out = []
    for i, label in enumerate(labels[::step]):
        text = display_piece(label)
        if len(text) > fit:
            text = text[: fit - 1] + "…" if fit >= 2 else text[0]
        out.append((i * step + offset, text))
    return out


def masked_runs(masked: np.ndarray) -> list[tuple[int, int, int]]:
    """(row, first column, one past the last) for every horizontal run of True cells: a causal
    mask gives T − 1 runs, not T²/2 cells."""
    masked = np.asarray(masked, dtype=bool)
    padded = np.zeros((masked.shape[0], masked.shape[1] + 2), dtype=np.int8)
    padded[:, 1:-1] = masked
    edges = np.diff(padded, axis=1)  # +1 where a run starts, -1 one past where it ends
    starts, stops = np.nonzero(edges == 1), np.nonzero(edges == -1)
    return list(zip(starts[0].tolist(), starts[1].tolist(), stops[1].tolist()))


def label_count(counts: list[tuple[int, int, int]]) -> tuple[str, str]:
    """A map's count of its labels, short and in full ("8/24", "8 of 24 labels"), for the axis missing
    most of its (drawn, in view, in all); ("", "") when no label is missing."""
    short = [c for c in counts if c[0] < c[2]]
    if not short:
        return "", ""
    drawn, in_view, total = min(short, key=lambda c: c[0] / max(c[2], 1))
    some = in_view < total  # the view shows only some cells: the rest is a drag away
    brief = (f"{in_view} of {total} in view" if drawn == in_view
             else f"{drawn}/{in_view}" + (f" of {total}" if some else "") + " labels")  # says what it counts
    return brief, f"{drawn} of {in_view} labels" + (f", {total} in all" if some else "")


def grid_layout(counts: list[int], width: float, height: float, heading: float, least: float,
                spacing: float) -> tuple[int, int]:
    """(columns, map side) for sections of `counts` square maps, each under a heading: the largest
    maps that all fit; below `least`, whole rows as wide as fit (the grid then scrolls)."""
    n = max(counts, default=0)
    sections = max(len(counts), 1)
    room = height - sections * heading  # the headings' lines are not the maps'
    cols = best_columns(n, width, room / sections, least)
    side = int(min(width / cols - spacing, room / max(1, sum(math.ceil(c / cols) for c in counts)) - spacing))
    if side < least:
        most = max(1, min(n, int(width // (least + spacing))))
        cols = max(c for c in range(1, most + 1) if n % c == 0 or c == most and most == n)
        side = max(least, int(min(width / cols - spacing, height - heading - spacing)))
    return cols, side


def best_columns(n: int, width: float, height: float, least: float) -> int:
    """Columns for `n` maps in width × height: the largest square maps, never below `least`
    wide (then the grid scrolls down)."""
    if n <= 0:
        return 1
    most = max(1, min(n, int(width // max(least, 1))))
    return max(range(1, most + 1), key=lambda c: min(width / c, height / math.ceil(n / c)))
