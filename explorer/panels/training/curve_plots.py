"""The plots and curves the training curves are drawn with: a plot with the theme's title and
axes, a curve in its theme colour, and what sizes the value axes."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from explorer import style
from explorer.drawing.plot_style import let_shrink
from explorer.drawing.spaced_axis import SpacedAxis

# the widest tick label of each plot (loss, accuracy, learning rate in units of its power of
# ten, k tokens/s)
WIDEST_VALUES = ("10.5", "0.8", "2.5", "1000")
SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def make_plot(layout: pg.GraphicsLayoutWidget, row: int, col: int, title: str, y_label: str,
              tooltip: str = "") -> pg.PlotItem:
    plot = layout.addPlot(row=row, col=col, axisItems={"bottom": SpacedAxis("bottom")})  # steps never run together
    plot.setTitle(title, color=style.TEXT.name(), size=f"{style.TITLE_POINT_SIZE}pt")
    let_shrink(plot.titleLabel)
    # the title centred over the whole plot, its value axis included (pyqtgraph's place is over
    # the data area alone): a short title then has the plot's full width on any screen
    plot.layout.removeItem(plot.titleLabel)
    plot.layout.addItem(plot.titleLabel, 0, 0, 1, 3)
    plot.setMenuEnabled(False)
    plot.setToolTip(tooltip)  # what the short title leaves out
    for name, label in (("bottom", "step"), ("left", y_label)):
        axis = plot.getAxis(name)
        axis.setTickFont(style.font(style.SMALL_POINT_SIZE))
        axis.setPen(style.MUTED.name())
        axis.setTextPen(style.TEXT.name())
        axis.setLabel(label, color=style.TEXT.name(), **{"font-size": style.css_pt(style.SMALL_POINT_SIZE)})
    plot.getAxis("left").setWidth(62)
    plot.getAxis("left").enableAutoSIPrefix(False)  # relabelling the axis on every range change costs
    return plot


# each curve's theme colour (Palette field): used when the curves are made and on a theme change
CURVE_ROLES = {"loss_raw": "loss", "loss": "loss", "accuracy": "accuracy", "exact": "exact", "lr": "lr",
               "lr_now": "lr", "lr_plan": "lr", "tokens_per_s": "speed"}
FAINT = ("loss_raw", "lr_plan")  # drawn faint: the raw loss behind its smoothed curve, the rate ahead of the run


def curve_colour(key: str) -> QColor:
    """A curve's colour in the current theme: the raw loss faint (`raw_alpha`), the planned rate
    lighter than the run's own (alpha 150)."""
    colour = pg.mkColor(getattr(style.current(), CURVE_ROLES[key]))
    # the plan lighter than the run's own rates, yet a dashed line a projector still shows
    colour.setAlpha(255 if key not in FAINT else raw_alpha() if key == "loss_raw" else 150)
    return colour


def raw_alpha() -> int:
    """The raw (unsmoothed) loss: faint behind the smoothed curve, yet visible (stronger on the
    dark canvas, where a faint blue would vanish into black)."""
    return 150 if style.current().name == "dark" else 70


def make_curve(plot: pg.PlotItem, key: str, width: float, name: str | None = None, dashed: bool = False,
               **kwargs) -> pg.PlotDataItem:
    c = curve_colour(key)
    # No antialiasing: it doubles the paint time, and every ms the GUI thread paints (holding
    # the GIL) is taken from the training thread.
    pen = pg.mkPen(c, width=width, style=Qt.DashLine if dashed else Qt.SolidLine)
    return plot.plot([], [], pen=pen, name=name, clipToView=True, autoDownsample=True,
                     downsampleMethod="peak", antialias=False, **kwargs)
