"""The labs' plots share one look: a title at the presentation scale, axes in the theme's
colours with small tick labels, and a legend in a row under the plot (never over the curves)."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt

from explorer import style
from explorer.drawing.plot_style import fit_title_row, let_shrink


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
