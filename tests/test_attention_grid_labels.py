"""The all-heads grid's token labels sit against its square-celled mosaic, not at the far edge of a
plot wider than the mosaic, and where they sit depends only on the window and the frame: the same
after any history of clicks (a scene must draw the same whatever was clicked before).

Measured in screen pixels from item rectangles: the mosaic's edges mapped from data to scene
coordinates by the view box, against the token axes' scene rectangles."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import QPointF  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from explorer.panels.attention.panel import AttentionPanel  # noqa: E402
from explorer.state import SessionState  # noqa: E402
from support import small_bundle  # noqa: E402

MOST_GAP = 8.0  # screen px between the mosaic's edge and its token labels (half a gap's margin + the axis's)


def settle(qtbot) -> None:
    for _ in range(4):
        QApplication.processEvents()
        qtbot.wait(5)


def label_gaps(pane) -> dict[str, float]:
    """Screen px from the mosaic's right edge to the query labels and from its bottom edge to the
    key labels; also the mosaic's on-screen rectangle, to compare two histories."""
    rows, cols = pane.layout.shape
    vb = pane.plot.vb
    top_left, bottom_right = vb.mapViewToScene(QPointF(0, 0)), vb.mapViewToScene(QPointF(cols, rows))
    return {"right": pane.query_axis.sceneBoundingRect().left() - bottom_right.x(),
            "below": pane.key_axis.sceneBoundingRect().top() - bottom_right.y(),
            "x0": top_left.x(), "y0": top_left.y(), "x1": bottom_right.x(), "y1": bottom_right.y()}


@pytest.fixture(scope="module")
def wide(qapp):
    """A panel much wider than its 2-layer mosaic is long: the aspect-locked plot has room to spare."""
    state = SessionState()
    panel = AttentionPanel(state)
    panel.resize(1400, 520)
    panel.show()
    bundle = small_bundle()
    state.set_bundle(bundle)
    state.set_result(bundle.run("abcdefg", target="gfedcba"))
    panel.set_view("grid")
    yield state, panel
    panel.close()


def test_labels_sit_against_the_mosaic_and_cells_stay_square(wide, qtbot):
    state, panel = wide
    settle(qtbot)
    pane = panel.grid.pane("encoder")
    gaps = label_gaps(pane)
    assert 0 <= gaps["right"] <= MOST_GAP, gaps
    assert 0 <= gaps["below"] <= MOST_GAP, gaps
    rows, cols = pane.layout.shape
    cell_w, cell_h = (gaps["x1"] - gaps["x0"]) / cols, (gaps["y1"] - gaps["y0"]) / rows
    assert cell_w == pytest.approx(cell_h, rel=0.01)  # square cells: rows and columns are tokens
    assert pane.plot.vb.width() >= 160 and pane.plot.vb.height() >= 120


def test_the_same_picture_after_another_history_of_clicks(wide, qtbot):
    state, panel = wide
    settle(qtbot)
    before = label_gaps(panel.grid.pane("encoder"))
    # another history: other heads and kinds selected, every kind shown, the window resized, back
    state.select_attention("encoder", 1, 3)
    state.select_attention("cross", 0, 2)
    panel.all_kinds.setChecked(True)
    settle(qtbot)
    panel.resize(900, 700)
    settle(qtbot)
    panel.all_kinds.setChecked(False)
    state.select_attention("encoder", 0, 0)
    panel.resize(1400, 520)
    settle(qtbot)
    after = label_gaps(panel.grid.pane("encoder"))
    for key in before:
        assert after[key] == pytest.approx(before[key], abs=0.6), (key, before, after)
