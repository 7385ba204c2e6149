"""The plots' look, legible on a projector: big type at the presentation scale, viridis for weights
(it survives a washed-out projector and colour-blind viewers), a diverging map for signed values,
colours from the current theme."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from explorer import style as _app
from explorer.theme import DIVERGING, SEQUENTIAL, current  # noqa: F401  (one map in every theme)

TICK_PT = _app.BASE_POINT_SIZE
LABEL_PT = TICK_PT + 1
TITLE_PT = _app.TITLE_POINT_SIZE
WEIGHT_LEVELS = (0.0, 1.0)


def colour(role: str, alpha: int | None = None) -> QColor:
    """`role` of the current palette as a QColor (optionally with an alpha of 0–255)."""
    c = QColor(getattr(current(), role))
    if alpha is not None:
        c.setAlpha(alpha)
    return c


def weight_cmap() -> pg.ColorMap:
    """Attention weights in [0, 1]."""
    return pg.colormap.get(SEQUENTIAL)


def signed_cmap() -> pg.ColorMap:
    """Signed values (positional encodings, embeddings): blue − / white 0 / red +."""
    return pg.colormap.get(DIVERGING)


font = _app.font  # a font at the current presentation scale
css_pt = _app.css_pt  # a rich-text size at the current scale (HTML sizes win over item fonts)


def set_axis_pen(axis: pg.AxisItem, pen) -> None:
    """The axis line's pen. pyqtgraph gives the axis title the line's colour too (a muted grey,
    pale from the back row): the title keeps the text pen's colour."""
    axis.setPen(pen)
    axis.setTextPen(axis.textPen())


def style_axis(axis: pg.AxisItem, label: str | None = None, line: bool = True) -> None:
    axis.setTickFont(font(TICK_PT))
    set_axis_pen(axis, current().muted if line else pg.mkPen(None))
    axis.setTextPen(current().text)
    if label is not None:
        axis.setLabel(label, color=current().text, **{"font-size": css_pt(LABEL_PT)})


def set_title(plot: pg.PlotItem, text: str) -> None:
    """A plot title at the current presentation scale, its row as high as the title."""
    factor = _app.scale()
    plot.setTitle(text, color=current().text, size=f"{TITLE_PT * factor:.1f}pt")
    fit_title_row(plot)


def fit_title_row(plot: pg.PlotItem) -> None:
    """Give a plot's title row the title's real height (pyqtgraph fixes it at 30 px: a larger title
    would print over the plot)."""
    label = plot.titleLabel
    if not label.isVisible() or not label.text:
        return
    height = max(30.0, label.item.boundingRect().height() + 4)
    label.setMaximumHeight(height)
    plot.layout.setRowFixedHeight(0, height)


def graphics_widget() -> pg.GraphicsLayoutWidget:
    """A plotting canvas in the theme's canvas colour."""
    w = pg.GraphicsLayoutWidget()
    w.setBackground(current().canvas)
    return w


def let_shrink(label: pg.LabelItem, width: float = 40) -> None:
    """A long title may be clipped but never pushes the plots out of view (pyqtgraph's LabelItem
    makes its whole text width its minimum, again on every resize)."""
    original = label.updateMin

    def update_min() -> None:
        original()
        label.setMinimumWidth(width)  # (an explicit minimum outranks the text-wide size hint)
        label.updateGeometry()

    label.updateMin = update_min
    update_min()


# -- recolouring a canvas in place ------------------------------------------------------------------
def restyle_view(view, p=None) -> None:
    """One pyqtgraph canvas in the palette's colours: background, axes, legends and plain-coloured
    titles (a deliberate colour stays); `presentation.apply_theme` does it for every canvas."""
    p = p or current()
    legend_fill = p.q("canvas")
    legend_fill.setAlpha(230)
    view.setBackground(p.canvas)
    muted, text = p.q("muted"), p.q("text")
    for item in view.scene().items():  # (a colour already right is not set again: each set re-lays text)
        if isinstance(item, pg.AxisItem):
            pen = item.pen()
            if pen.style() != Qt.PenStyle.NoPen and pen.color() != muted:  # an axis without a line keeps none
                set_axis_pen(item, pg.mkPen(p.muted, width=pen.widthF()))  # as style_axis
            if item.textPen().color() != text:
                item.setTextPen(pg.mkPen(p.text))
        elif isinstance(item, pg.LegendItem):
            item.setBrush(pg.mkBrush(legend_fill))
            item.setPen(pg.mkPen(p.muted))
            item.setLabelTextColor(p.text)
            for _sample, label in item.items:  # setLabelTextColor stores the colour; the text keeps the old one
                label.setText(label.text)
        elif isinstance(item, pg.LabelItem) and not _in_legend(item):
            colour = item.opts.get("color")
            if _is_plain_text_colour(colour) and (colour is None or pg.mkColor(colour) != text):
                item.setText(item.text, color=p.text)  # titles in the theme's text colour
    view.viewport().update()  # (a QGraphicsView's update() does not repaint its viewport)


def _in_legend(item) -> bool:
    """Legend entries are coloured with their legend (`setLabelTextColor`)."""
    parent = item.parentItem()
    while parent is not None:
        if isinstance(parent, pg.LegendItem):
            return True
        parent = parent.parentItem()
    return False


def _is_plain_text_colour(colour) -> bool:
    """Whether a title's colour is a theme's text or muted colour (others are deliberate)."""
    if colour is None:
        return True
    from explorer.theme import PALETTES
    plain = {QColor(c).name() for q in PALETTES.values() for c in (q.text, q.muted)}
    try:
        return pg.mkColor(colour).name() in plain
    except Exception:  # noqa: BLE001 - an unusual colour spec: leave it alone
        return False
