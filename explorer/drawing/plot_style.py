"""The plots' look, legible on a projector: big type at the presentation scale, viridis for weights
(it survives a washed-out projector and colour-blind viewers), a diverging map for signed values,
colours from the current theme. `restyle_view` brings a canvas to the current theme and scale."""
from __future__ import annotations

import contextlib
from functools import partial

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QPen
from PySide6.QtWidgets import QGraphicsSimpleTextItem, QGraphicsTextItem

from explorer import style as _app
from explorer.theme import DIVERGING, PALETTES, SEQUENTIAL, colour, current  # noqa: F401  (one map in every theme)

TICK_PT = _app.FONT_ROLES["body"][0]  # the plots' sizes are the font roles' (one table decides them)
LABEL_PT = _app.FONT_ROLES["label"][0]
TITLE_PT = _app.FONT_ROLES["title"][0]
WEIGHT_LEVELS = (0.0, 1.0)
SCALE_PROPERTY = "plotScale"  # (a dynamic Qt property of a canvas) the scale its fonts and pens are drawn at


weight_cmap = partial(pg.colormap.get, SEQUENTIAL)  # attention weights in [0, 1]
signed_cmap = partial(pg.colormap.get, DIVERGING)  # signed values (encodings, embeddings): blue − / white 0 / red +


font = _app.font  # a font at the current presentation scale
css_pt = _app.css_pt  # a rich-text size at the current scale (HTML sizes win over item fonts)


def set_axis_pen(axis: pg.AxisItem, pen) -> None:
    """The axis line's pen; the axis title keeps the text's colour (pyqtgraph gives it the line's)."""
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
    plot.setTitle(text, color=current().text, size=css_pt(TITLE_PT))
    fit_title_row(plot)


def fit_title_row(plot: pg.PlotItem) -> None:
    """A plot's title row as high as its title (pyqtgraph fixes it at 30 px, too low for a large title)."""
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


# -- a canvas in the current theme and at the current scale, in place --------------------------------
def restyle_view(view, p=None) -> None:
    """Background, axes, legends, plain-coloured titles (a deliberate colour stays) in the palette's
    colours; fonts and line widths from the scale the canvas was drawn at to the current one."""
    p = p or current()
    ratio = _app.scale() / (view.property(SCALE_PROPERTY) or _app.scale())
    view.setProperty(SCALE_PROPERTY, _app.scale())
    view.setBackground(p.canvas)
    for item in view.scene().items():  # (a colour already right is not set again: each set re-lays text)
        if isinstance(item, pg.AxisItem):
            _restyle_axis(item, p, ratio)
        elif isinstance(item, pg.LegendItem):
            fill = p.q("canvas")
            fill.setAlpha(230)
            item.setBrush(pg.mkBrush(fill))
            item.setPen(pg.mkPen(p.muted))
            item.setLabelTextColor(p.text)
            for _sample, label in item.items:  # (the colour is stored; the text keeps the old one)
                label.setText(label.text)
        elif isinstance(item, pg.LabelItem):
            _restyle_label(item, p, ratio)
        elif ratio == 1.0:
            continue
        elif _own_pen(item):
            item.setPen(_scaled_pen(item.opts["pen"], ratio))
        elif isinstance(item, (QGraphicsSimpleTextItem, QGraphicsTextItem)) and not isinstance(
                item.parentItem(), pg.LabelItem):
            item.setFont(_scaled_font(item.font(), ratio))
    view.viewport().update()  # (a QGraphicsView's update() does not repaint its viewport)


def _restyle_axis(axis: pg.AxisItem, p, ratio: float) -> None:
    """Line (an axis without one keeps none) and text colours; tick font, line width and the title's
    size, which lives in its HTML (pyqtgraph's labelStyle)."""
    pen = axis.pen()
    if pen.style() != Qt.PenStyle.NoPen and (ratio != 1.0 or pen.color() != p.q("muted")):
        width = pen.widthF() if ratio == 1.0 else max(1.0, pen.widthF()) * ratio
        set_axis_pen(axis, pg.mkPen(p.muted, width=width))
    if axis.textPen().color() != p.q("text"):
        axis.setTextPen(pg.mkPen(p.text))
    if ratio == 1.0:
        return
    tick = axis.style.get("tickFont")
    axis.setStyle(tickFont=font(_app.SMALL_POINT_SIZE) if tick is None else _scaled_font(tick, ratio))
    size = axis.labelStyle.get("font-size")
    if isinstance(size, str) and size.endswith("pt") and axis.label.isVisible():
        with contextlib.suppress(ValueError):
            size = f"{max(6.0, float(size[:-2]) * ratio):.1f}pt"
            axis.setLabel(axis.labelText, axis.labelUnits, axis.labelUnitPrefix, **{**axis.labelStyle, "font-size": size})


def _restyle_label(label: pg.LabelItem, p, ratio: float) -> None:
    """A title or legend entry: the theme's text colour unless its colour is deliberate, its size scaled."""
    opts = {}
    now = label.opts.get("color")
    plain = isinstance(label.parentItem(), pg.LegendItem) or _is_plain_text_colour(now)  # legend entries: text
    if plain and (now is None or pg.mkColor(now) != p.q("text")):
        opts["color"] = p.text
    size = str(label.opts.get("size") or f"{_app.BASE_POINT_SIZE}pt")
    if ratio != 1.0 and size.endswith("pt"):
        with contextlib.suppress(ValueError):
            opts["size"] = f"{float(size[:-2]) * ratio:.1f}pt"
    if opts:
        label.setText(label.text, **opts)
    plot = label.parentItem()
    if "size" in opts and isinstance(plot, pg.PlotItem) and plot.titleLabel is label and label.isVisible():
        fit_title_row(plot)


def _scaled_font(f: QFont, ratio: float) -> QFont:
    f = QFont(f)  # (every font here is sized in points: `style.font`, Qt's and pyqtgraph's defaults)
    f.setPointSizeF(max(6.0, f.pointSizeF() * ratio))
    return f


def _scaled_pen(pen, ratio: float) -> QPen:
    pen = QPen(pg.mkPen(pen))
    pen.setWidthF(max(1.0, pen.widthF()) * ratio)
    return pen


def _own_pen(item) -> bool:
    """A curve with a pen of its own (a PlotDataItem's curve follows the PlotDataItem's)."""
    if isinstance(item, pg.PlotDataItem):
        return item.opts.get("pen") is not None
    return isinstance(item, pg.PlotCurveItem) and not isinstance(item.parentItem(), pg.PlotDataItem)


def _is_plain_text_colour(spec) -> bool:
    """Whether a title's colour is a theme's text or muted colour (others are deliberate)."""
    if spec is None:
        return True
    plain = {QColor(c).name() for q in PALETTES.values() for c in (q.text, q.muted)}
    try:
        return pg.mkColor(spec).name() in plain
    except Exception:  # noqa: BLE001 - an unusual colour spec: leave it alone
        return False
