"""`explorer.drawing.hug`: margins that give an aspect-locked view box its map's shape, and the
one re-entry guard every hugging plot shares."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pyqtgraph as pg  # noqa: E402

from explorer.drawing.hug import hug_margins, not_reentrant  # noqa: E402


def test_a_hug_called_from_inside_itself_returns_at_once_per_object():
    class Plot:
        def __init__(self, other=None):
            self.calls, self.other = 0, other

        @not_reentrant
        def hug(self, depth=0):
            self.calls += 1
            if depth < 3:
                self.hug(depth + 1)  # (a resize signal calling back while the margins change)
            if self.other is not None:
                self.other.hug()  # another plot's hug is not blocked by this one's
            return "done"

    inner = Plot()
    outer = Plot(other=inner)
    assert outer.hug() == "done" and outer.calls == 1 and inner.calls == 1
    assert outer.hug() == "done" and outer.calls == 2  # free again once it returned


def test_hug_margins_give_the_view_box_the_maps_shape(qapp):
    widget = pg.GraphicsLayoutWidget()
    widget.resize(900, 400)
    plot = widget.addPlot()
    widget.show()
    qapp.processEvents()
    spare_w, spare_h = hug_margins(plot.layout, plot.vb, 1.0)  # a square map in a wide plot
    box = plot.vb.geometry()
    assert spare_w > 300 and spare_h == 0.0
    assert abs(box.width() - box.height()) <= 2
    widget.close()
