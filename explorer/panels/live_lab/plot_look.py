"""`LabPlot`, the look the labs' plots share: a title, axes in the theme's colours, a legend under
the plot (never over the curves), items recoloured after a theme change."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt

from explorer import style, theme
from explorer.drawing.map_plot import MapPlot
from explorer.drawing.plot_style import let_shrink
from explorer.drawing.spaced_axis import step_and_value_axes


def theme_colour(role: str | int) -> str:
    """A colour of the current theme: a role ("muted", "loss" …) or a data series by index."""
    palette = style.current()
    return palette.series[role % len(palette.series)] if isinstance(role, int) else getattr(palette, role)


def theme_pen(role: str | int, width: float, dash=Qt.SolidLine) -> Callable[[object], None]:
    """Sets an item's pen in a theme colour (for `LabPlot.keep`)."""
    return lambda item: item.setPen(pg.mkPen(theme_colour(role), width=width, style=dash))


def theme_text(role: str | int) -> Callable[[object], None]:
    """Sets a text item's colour (for `LabPlot.keep`)."""
    return lambda item: item.setColor(theme_colour(role))


def mark(line: pg.InfiniteLine, value: float | None, tip: str = "") -> None:
    """Show a reference line at `value` with its tooltip, or hide it (None)."""
    line.setVisible(value is not None)
    if value is not None:
        line.setValue(value)
        line.setToolTip(tip)


def style_axes(plot, labels: dict[str, str], label_point: float) -> None:
    """The plot's axes (name → its label; "" for none) in the theme's colours, ticks at the small size."""
    for name, label in labels.items():
        axis = plot.getAxis(name)
        axis.setTickFont(style.font(style.SMALL_POINT_SIZE))
        axis.setPen(style.MUTED.name())
        axis.setTextPen(style.TEXT.name())
        if label:
            axis.setLabel(label, color=style.TEXT.name(), **{"font-size": style.css_pt(label_point)})


def small_text(text: str = "", anchor=(0.5, 0.5)) -> pg.TextItem:
    item = pg.TextItem(text, anchor=anchor)
    item.setFont(style.font(style.SMALL_POINT_SIZE))
    return item


def extend(curve: pg.PlotDataItem, x: np.ndarray, y: np.ndarray) -> None:
    """Append points to a curve."""
    old_x, old_y = curve.getData()
    if old_x is not None:
        x, y = np.concatenate([old_x, x]), np.concatenate([old_y, y])
    curve.setData(x, y)


class LabPlot(pg.GraphicsLayoutWidget):
    """One still plot of a lab: its title, its axes' labels ("step" under it unless told), a y grid."""

    def __init__(self, title: str, y_label: str, tooltip: str = "", x_label: str = "step", parent=None):
        super().__init__(parent=parent)
        self.ci.setContentsMargins(0, 0, 0, 0)  # (as a PlotWidget: the plot has the room)
        self.ci.setSpacing(0)
        self.title_label = self.ci.addLabel(title, row=0, col=0)
        let_shrink(self.title_label)
        self.axes = MapPlot(step_and_value_axes())  # light to build; steps never run together
        self.axes.vb.setMouseEnabled(x=False, y=False)
        self.ci.addItem(self.axes, row=1, col=0)
        self.ci.layout.setRowStretchFactor(1, 100)  # the plot takes the height; title and legend their own
        self.title_text, self.x_label, self.y_label = title, x_label, y_label
        self.legend: pg.LegendItem | None = None
        self.themed: dict[object, Callable[[object], None]] = {}  # item → sets its theme colours
        self.axes.getAxis("left").setGrid(51)  # a faint value grid
        self.setToolTip(tooltip)
        self.restyle()
        theme.notifier().changed.connect(self.restyle)  # (a bound method: dropped with the plot)

    def plot(self, *args, **kwargs) -> pg.PlotDataItem:
        """A curve in the plot (as `PlotWidget.plot`)."""
        curve = pg.PlotDataItem(*args, **kwargs)
        self.axes.addItem(curve)
        return curve

    def keep(self, item, paint: Callable[[object], None]):
        """Colour `item` with `paint(item)` now and after every theme change; returns the item."""
        paint(item)
        self.themed[item] = paint
        return item

    def line(self, angle: int, pen, label: str | None = None, role: str = "muted", **label_opts) -> pg.InfiniteLine:
        """A reference line (a floor, a phase change), hidden until `mark`ed, with its small label in
        `role`'s colour; a vertical one never widens the step range."""
        line = self.keep(pg.InfiniteLine(angle=angle, movable=False, label=label, labelOpts=label_opts), pen)
        if label:
            line.label.setFont(style.font(style.SMALL_POINT_SIZE))
            self.keep(line.label, theme_text(role))
        self.axes.addItem(line, ignoreBounds=angle == 90)
        line.hide()
        return line

    def legend_below(self, columns: int, **options) -> pg.LegendItem:
        self.legend = pg.LegendItem(colCount=columns, frame=False, labelTextColor=style.TEXT.name(),
                                    labelTextSize=f"{style.SMALL_POINT_SIZE * style.scale():.0f}pt", **options)
        self.ci.addItem(self.legend, row=2, col=0)
        self.ci.layout.setAlignment(self.legend, Qt.AlignHCenter)
        return self.legend

    def restyle(self) -> None:
        self.title_label.setText(self.title_text, color=style.TEXT.name(),
                                 size=f"{style.TITLE_POINT_SIZE * style.scale():.1f}pt")
        style_axes(self.axes, {"bottom": self.x_label, "left": self.y_label}, style.BASE_POINT_SIZE)
        for item, paint in self.themed.items():
            paint(item)
        for _, label in self.legend.items if self.legend is not None else ():
            label.setText(label.text, color=style.TEXT.name())  # (pyqtgraph recolours it only when set again)
