"""Step axes space their labels for their width: 90 training steps in a narrow plot at a
projector's font read "020406080" (pyqtgraph spaces major ticks by length alone)."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pyqtgraph as pg  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtGui import QFont, QFontMetricsF  # noqa: E402

from layout_checks import drawn_labels  # noqa: E402

from explorer.drawing.spaced_axis import SpacedAxis, nice_at_least  # noqa: E402


def _gaps(axis) -> tuple[list[str], float]:
    labels = sorted(drawn_labels(axis), key=lambda rt: rt[0].left())
    texts = [t for _r, t in labels]
    gaps = [b.left() - a.right() for (a, _), (b, _) in zip(labels, labels[1:])]
    return texts, min(gaps) if gaps else float("inf")


def _plot(qtbot, axis, width: int, upto: float) -> pg.PlotWidget:
    widget = pg.PlotWidget(axisItems={"bottom": axis})
    qtbot.addWidget(widget)
    font = QFont()
    font.setPointSizeF(16.5)  # a small tick font at a 1.5× presentation scale
    axis.setTickFont(font)
    widget.resize(width, 160)
    widget.show()
    qtbot.waitExposed(widget)
    widget.getPlotItem().setXRange(0, upto)  # padded as an auto-range pads a curve (8% at 150 px)
    qtbot.wait(50)  # pyqtgraph lays out and ranges the axis on its next events
    return widget


@pytest.mark.parametrize("width, upto", [(200, 91), (300, 3000), (260, 0.9), (900, 91)])
def test_step_labels_keep_a_gap_where_pyqtgraphs_run_together(qtbot, width, upto):
    axis = SpacedAxis("bottom")
    keep = _plot(qtbot, axis, width, upto)  # noqa: F841 - the axis lives in it
    texts, gap = _gaps(axis)
    zero = QFontMetricsF(axis.style["tickFont"]).horizontalAdvance("0")
    assert len(texts) >= 2, texts  # still numbered: the start and at least one more
    assert gap >= 2 * zero - 1, (texts, gap)
    if width == 900:  # room enough: pyqtgraph's own spacing, untouched
        plain = pg.AxisItem("bottom")
        keep2 = _plot(qtbot, plain, width, upto)  # noqa: F841
        assert sorted(t for _r, t in drawn_labels(plain)) == sorted(texts)


def test_pyqtgraphs_own_axis_crowds_them(qtbot):
    """The case above, on the plain axis: the labels touch (what this axis is for)."""
    plain = pg.AxisItem("bottom")
    keep = _plot(qtbot, plain, 200, 91)  # noqa: F841
    texts, gap = _gaps(plain)
    zero = QFontMetricsF(plain.style["tickFont"]).horizontalAdvance("0")
    assert gap < 2 * zero - 1, (texts, gap)


@pytest.mark.parametrize("step, want", [(13, 20), (20, 20), (21, 50), (0.31, 0.5), (600, 1000), (1, 1)])
def test_nice_steps(step, want):
    assert nice_at_least(step) == pytest.approx(want)
