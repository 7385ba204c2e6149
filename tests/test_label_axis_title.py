"""A token axis titled with its count ("output token · 11 of 21 labels") keeps the title centred
under the axis and whole: the long count where it fits, "11/21" where it does not."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pyqtgraph as pg  # noqa: E402
import pytest  # noqa: E402

pytest.importorskip("pytestqt")

from explorer.drawing import plot_style as st  # noqa: E402
from explorer.drawing.label_axis import LabelAxis  # noqa: E402


def axis_in(qtbot, width: int, n: int = 60) -> tuple[pg.GraphicsLayoutWidget, LabelAxis]:
    canvas = pg.GraphicsLayoutWidget()
    qtbot.addWidget(canvas)
    axis = LabelAxis("bottom")
    plot = canvas.addPlot(axisItems={"bottom": axis})
    st.style_axis(axis, "output token")
    axis.name_with_count("output token")
    axis.set_tokens([f"word{i}" for i in range(n)], numeric=False, origin=-0.5)
    plot.setXRange(-0.5, n - 0.5, padding=0)
    canvas.resize(width, 300)
    canvas.show()
    qtbot.waitExposed(canvas)
    qtbot.waitUntil(lambda: "·" in axis.labelText, timeout=3000)
    return canvas, axis


@pytest.mark.parametrize("width, form", [(700, "long"), (160, "short")])
def test_a_counted_title_is_centred_under_its_axis_and_whole(qtbot, width, form):
    _canvas, axis = axis_in(qtbot, width)
    title, under = axis.label.mapRectToScene(axis.label.boundingRect()), axis.sceneBoundingRect()
    assert 0 < axis.drawn < axis.in_view
    long_form = f"output token · {axis.drawn} of {axis.in_view} labels"
    short_form = f"output token · {axis.drawn}/{axis.in_view}"
    assert axis.labelText == (long_form if form == "long" else short_form)
    if form == "long":
        assert title.left() >= under.left() - 1 and title.right() <= under.right() + 1
    assert abs(title.center().x() - under.center().x()) <= 2
