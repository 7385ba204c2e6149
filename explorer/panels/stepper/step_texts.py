"""What the stepper says about a step, apart from the map: how to colour it, its statistics,
its axis titles, and the jump list of every step grouped by block."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QStandardItem, QStandardItemModel

from explorer import style
from explorer.panels.stepper.inspector_view import AXIS_TITLES, TOKEN_AXES
from model.nn.steps import readable_step_name

STEP_ROLE = Qt.UserRole + 1  # the jump list's item data: the step's index in the trace
ATTENTION_MAPS = (".scores", ".masked_scores", ".weights", ".mask")  # steps whose rows query their columns


def tensor_stats(t: np.ndarray) -> str:
    """min, max and mean of the finite entries and the count of −∞ ones; a mask's allowed and blocked counts."""
    if t.dtype == bool:
        return f"allowed {int(t.sum())} of {t.size} entries, blocked {int((~t).sum())}"
    finite = t[np.isfinite(t)]
    if finite.size == 0:
        return "no finite entries"
    nb = "\u00a0"  # a wrapped line never ends in a name whose value starts the next ("max⏎0.9748")
    text = (f"min{nb}{style.format_value(float(finite.min()))}   max{nb}{style.format_value(float(finite.max()))}"
            f"   mean{nb}{style.format_value(float(finite.mean()))}")
    n_inf = int(np.isneginf(t).sum())
    return text + (f"   (−∞{nb}entries:{nb}{n_inf})" if n_inf else "")


def step_axis_titles(name: str, row_axis: str, col_axis: str, axis_title) -> tuple[str | None, str | None]:
    """Axis titles (`axis_title(axis)` names an axis, or None): an attention map's rows are its
    queries and its columns its keys ("query (source tokens)", not "source tokens" on both axes
    of a self-attention map)."""
    titles = [axis_title(row_axis), axis_title(col_axis)]
    if name.endswith(ATTENTION_MAPS) and row_axis in TOKEN_AXES and col_axis in TOKEN_AXES:
        for i, (role, axis) in enumerate((("query", row_axis), ("key", col_axis))):
            titles[i] = f"{role} ({titles[i] or AXIS_TITLES[axis]})"
    return titles[0], titles[1]


def fill_jump_list(model: QStandardItemModel, trace) -> None:
    """One row per step, under an unselectable header per block; each row's STEP_ROLE is its index."""
    model.clear()
    block = None
    bold = QFont(style.font(style.BASE_POINT_SIZE, bold=True))
    for i, step in enumerate(trace):
        if step.block != block:
            block = step.block
            header = QStandardItem(readable_step_name(block))
            header.setToolTip(block)
            header.setFlags(Qt.NoItemFlags)
            header.setFont(bold)
            model.appendRow(header)
        item = QStandardItem(f"    {step.name.rsplit('.', 1)[-1]}   {style.format_shape(step.shape)}")
        item.setData(i, STEP_ROLE)
        item.setToolTip(step.name)
        model.appendRow(item)
