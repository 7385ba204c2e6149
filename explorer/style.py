"""Fonts, colours and colormaps every panel shares, chosen for a projector at the back of a room.

Why one module: a lecturer's audience should learn one visual language — the same orange
for multi-head attention in the diagram and in the stepper, the same diverging map for
every signed tensor, the same grey hatching for "blocked by the mask" everywhere.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QApplication

# pyqtgraph's default image order is column-major: a [query, key] map would show transposed.
pg.setConfigOptions(imageAxisOrder="row-major", antialias=True, background="w", foreground="#222222")

BASE_POINT_SIZE = 12  # ≥ 11 pt everywhere: readable from the back of a lecture hall
SMALL_POINT_SIZE = 11
TITLE_POINT_SIZE = 14
MONO_FAMILY = "DejaVu Sans Mono"
SANS_FAMILY = "DejaVu Sans"

TEXT = QColor("#1f2328")
MUTED = QColor("#57606a")
ACCENT = QColor("#0969da")  # the current selection (highlighted block, current step)
ERROR = QColor("#cf222e")
OK = QColor("#1a7f37")
MASKED = QColor("#9aa0a6")  # cells blocked by a mask (drawn hatched on top of this grey)
MASKED_HATCH = QColor("#4a4f55")

# The paper's Figure 1 palette, slightly deepened so it survives a washed-out projector.
BLOCK_COLOURS = {
    "embedding": QColor("#f4c7c3"),  # pink: input / output embedding
    "positional": QColor("#ffffff"),
    "attention": QColor("#fbd38d"),  # orange: multi-head attention
    "norm": QColor("#f2ee9b"),  # yellow: Add & Norm
    "ffn": QColor("#a9d8f0"),  # blue: feed forward
    "linear": QColor("#c9c3ef"),  # lavender: final linear
    "softmax": QColor("#b7e4b5"),  # green: softmax
    "stack": QColor("#eef0f3"),  # the grey N× box
    "add": QColor("#ffffff"),
}

DIVERGING = "CET-D1A"  # blue–white–red: signed values, white is exactly zero
SEQUENTIAL = "viridis"  # probabilities, weights, non-negative activations


# Lecture mode (explorer.presentation) enlarges everything by this factor; widgets built after a
# change read it through `font()`, widgets already built are rescaled by the presentation module.
_scale = 1.0


def scale() -> float:
    """The current font / line-width factor (1.0 normally, larger in presentation mode)."""
    return _scale


def set_scale(factor: float) -> None:
    global _scale
    _scale = max(0.5, min(float(factor), 4.0))


def font(point_size: int = BASE_POINT_SIZE, bold: bool = False, mono: bool = False) -> QFont:
    f = QFont(MONO_FAMILY if mono else SANS_FAMILY)
    f.setPointSizeF(point_size * _scale)
    f.setBold(bold)
    return f


def colormap(name: str) -> pg.ColorMap:
    return pg.colormap.get(name)


def mask_colormap() -> pg.ColorMap:
    """Two colours for boolean masks: blocked (0) dark grey, allowed (1) bright green."""
    return pg.ColorMap(np.array([0.0, 1.0]), [MASKED_HATCH.getRgb(), (80, 200, 120, 255)])


def apply_app_style(app: QApplication) -> None:
    """Big default font and a light, high-contrast palette for the whole application."""
    app.setStyle("Fusion")
    app.setFont(font(BASE_POINT_SIZE))
    pal = app.palette()
    pal.setColor(QPalette.Window, QColor("#f6f8fa"))
    pal.setColor(QPalette.Base, QColor("#ffffff"))
    pal.setColor(QPalette.Text, TEXT)
    pal.setColor(QPalette.WindowText, TEXT)
    pal.setColor(QPalette.Highlight, ACCENT)
    pal.setColor(QPalette.HighlightedText, QColor("#ffffff"))
    app.setPalette(pal)
    app.setStyleSheet(
        "QDockWidget::title { background: #e7ebf0; padding: 5px; font-weight: bold; }"
        "QToolTip { font-size: 12pt; }"
    )


def still_plot(plot: pg.PlotItem) -> pg.PlotItem:
    """A plot shown as a fixed picture: no context menu, no autoscale button, no mouse pan or
    zoom (a stray drag in a lecture must not move the view)."""
    plot.setMenuEnabled(False)
    plot.hideButtons()
    plot.setMouseEnabled(x=False, y=False)
    return plot


def format_value(value: float) -> str:
    """A tensor value as a lecturer would read it aloud: −∞ for masked, 4 significant digits."""
    if np.isneginf(value):
        return "−∞"
    if np.isposinf(value):
        return "+∞"
    if np.isnan(value):
        return "NaN"
    if value != 0 and (abs(value) >= 1e4 or abs(value) < 1e-3):
        return f"{value:.3e}".replace("-", "−")
    return f"{value:.4f}".replace("-", "−")


def format_shape(shape) -> str:
    return "(" + ", ".join(str(int(s)) for s in shape) + ("," if len(shape) == 1 else "") + ")"
