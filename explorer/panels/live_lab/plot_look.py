"""The labs' plots share one look: a title at the presentation scale, axes in the theme's
colours with small tick labels, and a legend in a row under the plot (never over the curves);
`StepPlot` is a plot over training steps with that look."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt

from explorer import style
from explorer.drawing.plot_style import fit_title_row, let_shrink
from explorer.drawing.spaced_axis import SpacedAxis


def set_title(plot: pg.PlotItem, text: str) -> None:
    plot.setTitle(text, color=style.TEXT.name(), size=f"{style.TITLE_POINT_SIZE * style.scale():.1f}pt")
    let_shrink(plot.titleLabel)
    fit_title_row(plot)


def colour_axes(plot: pg.PlotItem, bottom: str, left: str) -> None:
    """Both axes in the theme's colours, small ticks, and their labels ("" for none)."""
    for name, label in (("bottom", bottom), ("left", left)):
        axis = plot.getAxis(name)
        axis.setTickFont(style.font(style.SMALL_POINT_SIZE))
        axis.setPen(style.MUTED.name())
        axis.setTextPen(style.TEXT.name())
        if label:
            axis.setLabel(label, color=style.TEXT.name(), **{"font-size": style.css_pt(style.SMALL_POINT_SIZE)})


def legend_below(plot: pg.PlotItem, columns: int, **options) -> pg.LegendItem:
    legend = pg.LegendItem(colCount=columns, frame=False, labelTextColor=style.TEXT.name(),
                           labelTextSize=f"{style.SMALL_POINT_SIZE * style.scale():.0f}pt", **options)
    plot.layout.addItem(legend, 4, 1)
    plot.layout.setAlignment(legend, Qt.AlignHCenter)
    return legend


def recolour_legend(legend: pg.LegendItem) -> None:
    for _, label in legend.items:  # (pyqtgraph recolours a legend's text only when it is set again)
        label.setText(label.text, color=style.TEXT.name())


class StepPlot(pg.PlotWidget):
    """One still plot over training steps: its title, "step" under it, its y label, a y grid."""

    def __init__(self, title: str, y_label: str, tooltip: str = "", parent=None):
        super().__init__(parent=parent, enableMenu=False, axisItems={"bottom": SpacedAxis("bottom")})  # steps never run together
        plot = style.still_plot(self.getPlotItem())
        self.title_text, self.y_label = title, y_label
        plot.getAxis("left").enableAutoSIPrefix(False)
        plot.showGrid(y=True, alpha=0.2)
        self.setToolTip(tooltip)
        self._look()

    def _look(self) -> None:
        set_title(self.getPlotItem(), self.title_text)
        colour_axes(self.getPlotItem(), "step", self.y_label)

    def restyle(self) -> None:
        self._look()
