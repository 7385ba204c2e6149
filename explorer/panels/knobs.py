"""Controls declared as data: a panel lists its knobs (`Knob`: a kind, its words, the method it
calls) and `make_knobs` builds them in one loop, each an attribute of the panel under its name."""
from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QSignalBlocker
from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit, QPushButton, QSpinBox, QWidget


@dataclass(frozen=True)
class Knob:
    """`kind`: one of MAKERS; `text`: a button's or a label's words, a spin box's suffix, a line's
    placeholder; `on`: the owner's method a click, a changed choice or Return calls; `options`: a
    choice's (text, data) pairs, a spin box's (least, most, one click, value)."""

    name: str
    kind: str
    text: str = ""
    tip: str = ""
    on: str = ""
    options: tuple = ()
    editable: bool = False


def _spin(knob: Knob) -> QSpinBox:
    low, high, single, value = knob.options
    return QSpinBox(minimum=low, maximum=high, singleStep=single, value=value, suffix=knob.text)


def _choice(knob: Knob) -> QComboBox:
    box = QComboBox(editable=knob.editable, sizeAdjustPolicy=QComboBox.SizeAdjustPolicy.AdjustToContents)
    refill(box, knob.options)
    return box


MAKERS = {"button": lambda knob: QPushButton(knob.text), "label": lambda knob: QLabel(knob.text),
          "line": lambda knob: QLineEdit(placeholderText=knob.text), "spin": _spin, "choice": _choice}
SIGNALS = {"button": "clicked", "line": "returnPressed", "choice": "currentIndexChanged"}


def make_knobs(owner: QWidget, knobs: tuple[Knob, ...]) -> list[QWidget]:
    """Each knob built, set as `owner.<name>` and wired to `owner.<on>()`; the widgets in order."""
    widgets = []
    for knob in knobs:
        if knob.kind not in MAKERS:
            raise ValueError(f"A knob of kind {knob.kind!r} cannot be made: the kinds are {', '.join(MAKERS)}.")
        widget = MAKERS[knob.kind](knob)
        widget.setToolTip(knob.tip)
        if knob.on:
            method = getattr(owner, knob.on)
            getattr(widget, SIGNALS[knob.kind]).connect(lambda *_args, method=method: method())
        setattr(owner, knob.name, widget)
        widgets.append(widget)
    return widgets


def refill(box: QComboBox, options: list, chosen: int = 0) -> None:
    """Offer `options` — (text, data) pairs, or texts whose data is their index — with `chosen`
    current, without a signal: the box shows the session, not a choice of the user's. Items
    already offered are kept; an editable box keeps its typed text."""
    pairs = [(option, i) if isinstance(option, str) else tuple(option) for i, option in enumerate(options)]
    typed = box.currentText()
    with QSignalBlocker(box):
        if [(box.itemText(i), box.itemData(i)) for i in range(box.count())] != pairs:
            box.clear()
            for text, data in pairs:
                box.addItem(text, data)
        box.setCurrentIndex(chosen)
        if box.isEditable():
            box.setEditText(typed)
