"""A panel taller than its dock scrolls up and down only: the vertical scroll bar's breadth comes
out of the panel's width, so no second, horizontal, bar hides the panel's right edge."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication, QWidget  # noqa: E402

from explorer.panel_dock import PanelScroll  # noqa: E402


def test_a_tall_panel_scrolls_vertically_and_keeps_its_right_edge_in_view(qtbot):
    panel = QWidget()
    panel.setMinimumSize(200, 900)
    scroll = PanelScroll(panel)
    qtbot.addWidget(scroll)
    scroll.resize(500, 400)
    scroll.show()
    QApplication.processEvents()
    assert scroll.verticalScrollBar().isVisible()
    assert not scroll.horizontalScrollBar().isVisible()
    assert panel.width() <= scroll.viewport().width()


def test_a_panel_that_fits_fills_the_viewport_without_scroll_bars(qtbot):
    panel = QWidget()
    panel.setMinimumSize(200, 200)
    scroll = PanelScroll(panel)
    qtbot.addWidget(scroll)
    scroll.resize(500, 400)
    scroll.show()
    QApplication.processEvents()
    assert not scroll.verticalScrollBar().isVisible() and not scroll.horizontalScrollBar().isVisible()
    assert panel.size() == scroll.viewport().size()
