"""Controls declared as data: a panel lists its knobs (`Knob`: a kind, its words, the method it
calls) and `make_knobs` builds them in one loop, each an attribute of the panel under its name."""
from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QSignalBlocker
from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit, QPushButton, QSpinBox, QWidget


@dataclass(frozen=True)
class Knob:
    """`kind`: "button", "spin", "choice", "line" or "label"; `text`: a button's or a label's words,
    a spin box's suffix, a line's placeholder; `on`: the owner's method a click, a changed choice
    or Return calls; `options`: a choice's (text, data) pairs, a spin box's (least, most, one click)."""

    name: str
    kind: str
    text: str = ""
    tip: str = ""
    on: str = ""
    options: tuple = ()
    editable: bool = False


def _make(knob: Knob) -> QWidget:
    if knob.kind == "button":
        return QPushButton(knob.text)
    if knob.kind == "label":
        return QLabel(knob.text)
    if knob.kind == "line":
        return QLineEdit(placeholderText=knob.text)
    if knob.kind == "spin":
        low, high, single = knob.options
        return QSpinBox(minimum=low, maximum=high, singleStep=single, suffix=knob.text)
    if knob.kind == "choice":
        box = QComboBox(editable=knob.editable, sizeAdjustPolicy=QComboBox.SizeAdjustPolicy.AdjustToContents)
        for text, data in knob.options:
            box.addItem(text, data)
        return box
    raise ValueError(f"A knob of kind {knob.kind!r} cannot be made: use button, label, line, spin or choice.")


SIGNALS = {"button": "clicked", "line": "returnPressed", "choice": "currentIndexChanged"}


def make_knobs(owner: QWidget, knobs: tuple[Knob, ...]) -> list[QWidget]:
    """Each knob built, set as `owner.<name>` and wired to `owner.<on>()`; the widgets in order."""
    widgets = []
    for knob in knobs:
        widget = _make(knob)
        if knob.tip:
            widget.setToolTip(knob.tip)
        if knob.on:
            method = getattr(owner, knob.on)
            getattr(widget, SIGNALS[knob.kind]).connect(lambda *_args, method=method: method())
        setattr(owner, knob.name, widget)
        widgets.append(widget)
    return widgets


def refill(box: QComboBox, options: list[tuple[str, object]], chosen: int = 0) -> None:
    """A choice's (text, data) options anew, `chosen` current; no change is signalled meanwhile
    (an editable box keeps its typed text)."""
    typed = box.currentText()
    with QSignalBlocker(box):
        box.clear()
        for text, data in options:
            box.addItem(text, data)
        box.setCurrentIndex(chosen)
        if box.isEditable():
            box.setEditText(typed)
