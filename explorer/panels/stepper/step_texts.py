"""The stepper's jump list: every step of the trace, grouped by block under unselectable headers."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QStandardItem, QStandardItemModel

from explorer import style
from model.nn.step_summary import format_shape
from model.nn.steps import readable_step_name

STEP_ROLE = Qt.UserRole + 1  # the jump list's item data: the step's index in the trace


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
        item = QStandardItem(f"    {step.name.rsplit('.', 1)[-1]}   {format_shape(step.shape)}")
        item.setData(i, STEP_ROLE)
        item.setToolTip(step.name)
        model.appendRow(item)
