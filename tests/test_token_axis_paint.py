"""A token axis paints only inside its own bounds.

A label wider than the axis is at that moment (the axis grows to fit on the next layout pass)
used to be drawn past the axis's left edge; no repaint of the axis ever cleared those pixels, so
on X11 stray letters stayed beside the forward-pass map. Measured on the painted pixels."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

pytest.importorskip("pytestqt")

import pyqtgraph as pg  # noqa: E402
from PySide6.QtGui import QColor, QImage, QPainter  # noqa: E402

from explorer.drawing.token_axis import TokenAxis  # noqa: E402

MARGIN = 120  # px of canvas around the axis's bounds


@pytest.mark.parametrize("orientation", ["left", "bottom"])
def test_labels_wider_than_the_axis_are_not_painted_outside_it(qtbot, orientation):
    axis = TokenAxis(orientation)
    plot = pg.PlotWidget(axisItems={orientation: axis})
    qtbot.addWidget(plot)
    plot.resize(500, 400)
    plot.show()
    axis.set_tokens(["extraordinarily", "long", "tokens", "overflow"])
    plot.getPlotItem().setRange(xRange=(0, 4), yRange=(0, 4), padding=0)
    if orientation == "left":
        axis.setWidth(12)  # far narrower than "extraordinarily"
    else:
        axis.setHeight(12)
    qtbot.wait(50)
    bounds = axis.boundingRect()
    image = QImage(int(bounds.width()) + 2 * MARGIN, int(bounds.height()) + 2 * MARGIN, QImage.Format_ARGB32)
    image.fill(QColor(0, 0, 0, 0))
    painter = QPainter(image)
    painter.translate(MARGIN - bounds.left(), MARGIN - bounds.top())
    specs = axis.generateDrawSpecs(painter)
    assert specs is not None and specs[2], "the axis should have labels to draw"
    axis.drawPicture(painter, *specs)
    painter.end()
    inside = (MARGIN, MARGIN, MARGIN + int(bounds.width()), MARGIN + int(bounds.height()))
    outside = [(x, y) for y in range(0, image.height(), 2) for x in range(0, image.width(), 2)
               if not (inside[0] - 1 <= x <= inside[2] + 1 and inside[1] - 1 <= y <= inside[3] + 1)
               and image.pixelColor(x, y).alpha() > 0]
    painted_inside = any(image.pixelColor(x, y).alpha() > 0
                         for y in range(inside[1], inside[3], 2) for x in range(inside[0], inside[2], 2))
    assert painted_inside
    assert not outside, f"{len(outside)} pixels painted outside the axis, e.g. {outside[:3]}"


def titled_axis(qtbot, orientation: str, size: tuple[int, int], n: int):
    """A shown plot whose `orientation` axis, titled "key (source)", labels n long tokens over its whole range."""
    axis = TokenAxis(orientation)
    plot = pg.PlotWidget(axisItems={orientation: axis})
    qtbot.addWidget(plot)
    plot.resize(*size)
    plot.show()
    axis.setLabel("key (source)")
    axis.set_tokens([f"token{i}" for i in range(n)])
    plot.getPlotItem().setRange(xRange=(0, n), yRange=(0, n), padding=0)
    return axis, plot


@pytest.mark.parametrize("orientation", ["left", "bottom"])
def test_the_title_is_centred_again_when_its_note_comes_and_goes(qtbot, orientation):
    """pyqtgraph places an axis title only on a resize: a "(showing 5 of 40 labels …)" note
    added or dropped at an unchanged size left the title where the other text would have been
    centred — in a 1920-px window "key (source)" stood 60 px right of its map."""
    from PySide6.QtWidgets import QApplication

    axis, plot = titled_axis(qtbot, orientation, (500, 400), 120)

    def settle():
        for _ in range(5):
            QApplication.processEvents()
            qtbot.wait(10)

    def centre_offset() -> float:
        """How far the title's middle is from the axis' middle, along the axis."""
        box = axis.label.mapRectToParent(axis.label.boundingRect())
        if orientation == "bottom":
            return box.center().x() - axis.size().width() / 2
        return box.center().y() - axis.size().height() / 2

    settle()
    assert "of 120 labels" in axis.label.toPlainText()  # 120 long labels in 400 px: thinned, said (a form that fits)
    assert abs(centre_offset()) <= 1.5
    plot.getPlotItem().setRange(xRange=(0, 4), yRange=(0, 4), padding=0)  # zoomed in: every label, no note
    settle()
    assert axis.label.toPlainText().strip() == "key (source)"
    assert abs(centre_offset()) <= 1.5, centre_offset()


@pytest.mark.parametrize("orientation", ["left", "bottom"])
def test_on_a_short_axis_the_note_shortens_to_fit_and_still_says_what_is_left_out(qtbot, orientation):
    """A normal window's compare dock drew 78-px maps whose "key (source) (showing 5 of 9 labels,
    zoom in for all)" ran 440 px over the neighbouring maps' titles: the note takes the longest
    form that fits its axis, and says how many labels are shown in every form."""
    from PySide6.QtWidgets import QApplication

    axis, plot = titled_axis(qtbot, orientation, (230, 230), 60)
    for _ in range(5):
        QApplication.processEvents()
        qtbot.wait(10)
    text = axis.label.toPlainText()
    length = axis.size().height() if orientation == "left" else axis.size().width()
    wide = axis.label.boundingRect().width() - 2 * axis.label.document().documentMargin()
    assert "of 60 labels" in text and "zoom in for all" not in text, text  # shortened, the count kept
    assert wide <= length + 2, (text, wide, length)
    plot.resize(1400, 1400)  # room again: the whole note
    for _ in range(8):
        QApplication.processEvents()
        qtbot.wait(10)
    assert "zoom in for all" in axis.label.toPlainText() or "of 60" not in axis.label.toPlainText()
