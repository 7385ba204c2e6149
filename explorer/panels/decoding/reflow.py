"""The decoding panel's reflow: its two halves side by side when there is room, one tab each
when there is not (a 1280×720 beamer, a dock of a normal window)."""
from __future__ import annotations

from PySide6.QtCore import QSignalBlocker

STEP_TAB = "Step by step (autoregressive)"


def set_side_by_side(panel, on: bool) -> None:
    """Wide and tall: step by step beside the parallel pass. Otherwise (a 1280×720 beamer,
    a dock of a normal window) one tab each, so no map shrinks below a readable size."""
    if on == panel.side_by_side:
        return
    panel.side_by_side = on
    blocker = QSignalBlocker(panel.tabs)  # moving tabs is no choice of the user's: the session's view
    current = panel.tabs.currentWidget()  # stays (it turned "steps" into "parallel" on widening)
    if on:
        panel.tabs.removeTab(panel.tabs.indexOf(panel.step_page))
        panel.left_tabs.addTab(panel.step_page, STEP_TAB)
        panel.left_tabs.show()
        if current is panel.step_page:
            current = panel.parallel
    else:
        panel.left_tabs.removeTab(0)
        panel.tabs.insertTab(0, panel.step_page, STEP_TAB)
        panel.left_tabs.hide()
        current = panel.view_pages().get(panel.state.session.view(panel.panel_name), current)
    panel.tabs.setCurrentWidget(current)
    blocker.unblock()
