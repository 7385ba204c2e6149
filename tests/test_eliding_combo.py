"""The model choosers show a "name — what it does" entry too long for them as the name alone,
and end what still does not fit with "…" (measured with the box's font metrics), instead of
Qt's cut at the edge ("dates — human-writter")."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

pytest.importorskip("pytestqt")

from PySide6.QtWidgets import QStyle, QStyleOptionComboBox  # noqa: E402

from explorer.eliding_combo import ElidingComboBox  # noqa: E402

LONG = "dates — human-written dates to ISO 8601 (2+2 layers, d_model 128)"


def field_width(box) -> int:
    opt = QStyleOptionComboBox()
    box.initStyleOption(opt)
    return box.style().subControlRect(QStyle.ComplexControl.CC_ComboBox, opt,
                                      QStyle.SubControl.SC_ComboBoxEditField, box).width()


def test_a_long_entry_shows_its_name_then_is_elided_and_whole_in_the_tooltip(qtbot):
    box = ElidingComboBox()
    qtbot.addWidget(box)
    box.addItems(["short", LONG])
    box.setCurrentIndex(1)
    box.setFixedWidth(220)
    box.show()
    assert box.shown_text() == "dates"  # not "dates — human-wr…": the name, whole
    assert box.toolTip() == LONG
    box.setFixedWidth(box.width() - field_width(box) + box.fontMetrics().horizontalAdvance("dat"))
    shown = box.shown_text()
    assert shown.endswith("…") and LONG.startswith(shown[:-1].rstrip())
    assert box.fontMetrics().horizontalAdvance(shown) <= field_width(box)
    box.setFixedWidth(220)
    box.addItem("a name without a description that is too long for the box")
    box.setCurrentIndex(2)
    assert box.shown_text().endswith("…")  # no separator: elided as before
    box.setCurrentIndex(1)
    box.setFixedWidth(box.fontMetrics().horizontalAdvance(LONG) + 80)
    assert box.shown_text() == LONG  # room enough: nothing cut
    box.grab()  # paints without error


def test_the_training_panels_model_chooser_names_the_lecture_preset(qtbot):
    from explorer.panels.training.controls import TrainingControls
    from model.train.request import LECTURE

    controls = TrainingControls()
    qtbot.addWidget(controls)
    box = controls.model_box
    box.setCurrentIndex(box.findData(LECTURE))
    box.setFixedWidth(200)
    controls.show()
    assert isinstance(box, ElidingComboBox) and box.shown_text() == "lecture"
    assert box.fontMetrics().horizontalAdvance(box.shown_text()) <= field_width(box)
