"""What the forward-pass stepper says about a recorded step, apart from drawing it: numbers as a
lecturer reads them aloud, the tensor's statistics, its axis titles, and the colour scale its
map is drawn on (chosen by what the values mean)."""
from __future__ import annotations

import numpy as np

from model.nn.steps import readable_step_name

TOKEN_AXES = ("src", "tgt")
AXIS_TITLES = {"src": "source tokens", "tgt": "target tokens", "d_model": "feature (d_model)",
               "d_k": "feature within a head (d_k)", "d_ff": "hidden unit (d_ff)", "vocab": "vocabulary",
               "head": "head", "batch": "batch"}
ATTENTION_MAPS = (".scores", ".masked_scores", ".weights", ".mask")  # steps whose rows query their columns
WEIGHT_LEVELS = (0.0, 1.0)


def format_value(value: float) -> str:
    """A tensor value as a lecturer would read it aloud: −∞ for masked, 4 significant digits."""
    if np.isneginf(value):
        return "−∞"
    if np.isposinf(value):
        return "+∞"
    if np.isnan(value):
        return "NaN"
    if value != 0 and (abs(value) >= 1e4 or abs(value) < 1e-3):
        return f"{value:.3e}".replace("-", "−")
    return f"{value:.4f}".replace("-", "−")


def format_shape(shape) -> str:
    return "(" + ", ".join(str(int(s)) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def tensor_stats(t: np.ndarray) -> str:
    """min, max and mean of the finite entries and the count of −∞ ones; a mask's allowed and blocked counts."""
    if t.dtype == bool:
        return f"allowed {int(t.sum())} of {t.size} entries, blocked {int((~t).sum())}"
    finite = t[np.isfinite(t)]
    if finite.size == 0:
        return "no finite entries"
    nb = "\u00a0"  # a wrapped line never ends in a name whose value starts the next ("max⏎0.9748")
    text = (f"min{nb}{format_value(float(finite.min()))}   max{nb}{format_value(float(finite.max()))}"
            f"   mean{nb}{format_value(float(finite.mean()))}")
    n_inf = int(np.isneginf(t).sum())
    return text + (f"   (−∞{nb}entries:{nb}{n_inf})" if n_inf else "")


def step_axis_titles(name: str, row_axis: str, col_axis: str, axis_title) -> tuple[str, str]:
    """Axis titles (`axis_title(axis)` names an axis, or None: AXIS_TITLES): an attention map's
    rows are its queries and its columns its keys ("query (source tokens)", not "source tokens"
    on both axes of a self-attention map)."""
    titles = [axis_title(axis) or AXIS_TITLES.get(axis, axis) for axis in (row_axis, col_axis)]
    if name.endswith(ATTENTION_MAPS) and row_axis in TOKEN_AXES and col_axis in TOKEN_AXES:
        titles = [f"query ({titles[0]})", f"key ({titles[1]})"]
    return titles[0], titles[1]


def colour_scale(data: np.ndarray, kind: str) -> tuple[str, tuple[float, float]]:
    """The map a step's values are drawn on and its levels: "mask" for a boolean mask,
    "sequential" 0–1 for probabilities (as on every other map) and for other non-negative values
    up to their largest, else "diverging", symmetric so that white is exactly zero.
    kind: "probs" | "signed" | "mask" | "auto" (`steps.view_kind`)."""
    if data.dtype == bool:
        return "mask", (0.0, 1.0)
    finite = data[np.isfinite(data)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    if kind == "probs":
        return "sequential", WEIGHT_LEVELS
    if kind == "auto" and lo >= 0:
        return "sequential", (0.0, hi if hi > 0 else 1.0)
    a = max(abs(lo), abs(hi)) or 1.0
    return "diverging", (-a, a)


def visible_text(piece: str) -> str:
    """Spaces and control characters as visible symbols, so a label is never blank."""
    return piece.replace(" ", "␣").replace("\n", "⏎").replace("\t", "⇥") if piece.strip() else "␣" * len(piece) or "∅"


def cell_readout(value: float, is_bool: bool, row: str, col: str) -> str:
    """A cell's hover line: its row and column (named) and its value, saying when it is masked."""
    if is_bool:
        shown = "1  (may attend)" if value else "0  (blocked)"
    else:
        shown = format_value(float(value)) + ("  (masked)" if np.isneginf(value) else "")
    return f"{row},  {col}  =  {shown}"


def jump_rows(trace) -> list[tuple[str, str, int | None]]:
    """The jump list's rows (text, tooltip, step index): a header per block (index None), then
    each of its steps by its last name and shape."""
    rows, block = [], None
    for i, step in enumerate(trace):
        if step.block != block:
            block = step.block
            rows.append((readable_step_name(block), block, None))
        rows.append((f"    {step.name.rsplit('.', 1)[-1]}   {format_shape(step.shape)}", step.name, i))
    return rows


def find_step(names: list[str], text: str, current: int) -> int | None:
    """The first step after `current` whose name contains `text`, else the first overall (Enter
    again: the next match); None when no name contains it."""
    hits = [i for i, name in enumerate(names) if text in name]
    later = [i for i in hits if i > current]
    return (later or hits or [None])[0]


def shape_and_stats(step, head: int) -> tuple[str, str, str]:
    """(shape text, what the map shows of it, statistics): the statistics are the whole tensor's,
    saying so when the map shows one head of several."""
    heads = step.tensor.shape[step.axes.index("head")] if "head" in step.axes else 1
    shown = "Shown: batch item 0" + (f", head {head + 1}" if "head" in step.axes else "")
    stats = tensor_stats(step.tensor.numpy())
    return (f"shape {format_shape(step.shape)}\n= {' × '.join(step.axes)}", shown,
            f"all {heads} heads: {stats}" if heads > 1 else stats)
