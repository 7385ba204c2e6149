"""Lecture legibility: every token label drawn at 1280×720, square query × key cells, one
numbering (from 1), one colour-scale rule (0–1), the masked key only where something is
masked, a guided first screen and a tour with its own controls. Measured, not pixel-compared."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import QPointF  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from support import make_main_window  # noqa: E402

LONG = "abcdefghijklmnopqrstuvwx"  # 24 letters: 24 source tokens for the reverse model


def settle(qtbot, ms: int = 60) -> None:
    for _ in range(3):
        QApplication.processEvents()
        qtbot.wait(ms // 3)


def drawn_labels(axis) -> list[str]:
    """The labels an axis draws now (its picture regenerated, as a paint would)."""
    axis.picture = None
    from PySide6.QtGui import QImage, QPainter
    image = QImage(4, 4, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [text for _i, text in axis.shown()]


def cell_px(plot_item) -> tuple[float, float]:
    vb = plot_item.vb if hasattr(plot_item, "vb") else plot_item.getViewBox()
    a, b = vb.mapViewToScene(QPointF(0, 0)), vb.mapViewToScene(QPointF(1, 1))
    return abs(b.x() - a.x()), abs(b.y() - a.y())


@pytest.fixture
def window(qtbot, tmp_path):
    w = make_main_window(qtbot, tmp_path, size=(1280, 720))
    w.runner.run(LONG)
    settle(qtbot)
    return w


def test_stepper_draws_all_24_labels_in_square_cells(window, qtbot):
    window.focus_panel("step")
    assert window.state.select_step_named("encoder.layers.0.self_attn.weights")
    settle(qtbot, 150)
    view = window.panels["step"].view
    pieces = window.state.axis_labels("src")
    assert len(pieces) >= 24
    assert len(drawn_labels(view.bottom)) == len(pieces)
    assert len(drawn_labels(view.left)) == len(pieces)
    assert min(view.bottom.fit.pt, view.left.fit.pt) >= 8
    w, h = cell_px(view.plot)
    assert abs(w - h) <= 1
    assert view.colorbar.levels() == (0.0, 1.0)


def test_debug(window, qtbot):
    window.focus_panel("step")
    window.state.select_step_named("encoder.layers.0.self_attn.weights")
    settle(qtbot, 150)
    view = window.panels["step"].view
    print("VIEW", view.size(), view.plot.vb.size(), view.left._measure(8), view.left.fit, view.bottom.fit)
    window.grab().save("/tmp/labels/t-step.png")
