"""A combo box that shows the session is refilled without a signal, and keeps items it already
offers (explorer.panels.knobs.refill)."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QPersistentModelIndex  # noqa: E402
from PySide6.QtWidgets import QComboBox  # noqa: E402

from explorer.panels.knobs import refill  # noqa: E402


def test_refill_offers_the_items_silently_and_keeps_unchanged_ones(qtbot):
    box = QComboBox()
    qtbot.addWidget(box)
    emitted = []
    box.currentIndexChanged.connect(emitted.append)
    refill(box, ["a", "b", "c"], 2)
    assert [box.itemText(i) for i in range(box.count())] == ["a", "b", "c"]
    assert [box.itemData(i) for i in range(box.count())] == [0, 1, 2] and box.currentIndex() == 2
    first = QPersistentModelIndex(box.model().index(0, 0))
    refill(box, ["a", "b", "c"], 0)
    assert first.isValid() and box.currentIndex() == 0  # the same items: not rebuilt
    refill(box, [("x", "enc"), ("y", "dec")], 1)
    assert not first.isValid() and box.currentData() == "dec" and box.currentText() == "y"
    assert emitted == []  # the session's, not the user's choice
