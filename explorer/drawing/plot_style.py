"""Look of the heatmap panels (attention maps, positional encodings): projector-legible.

Big type, a perceptually uniform colormap for weights (viridis: 0 is dark, 1 is bright, and
it survives a washed-out projector and colour-blind viewers), a diverging map for signed
values (blue < 0 < red), and a grey hatch for blocked cells that no colormap value can be
mistaken for. Fonts come from `explorer.style`; colours from the current `explorer.theme` palette.
"""
from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QTextDocument

pg.setConfigOptions(imageAxisOrder="row-major")  # a [query, key] matrix must not show transposed

try:  # the main window's shared style, when it exists
    from explorer import style as _app  # type: ignore
except ImportError:  # pragma: no cover - depends on what the other panels ship
    _app = None

FONT_FAMILY = getattr(_app, "SANS_FAMILY", "DejaVu Sans")
TICK_PT = getattr(_app, "BASE_POINT_SIZE", 12)
LABEL_PT = TICK_PT + 1
TITLE_PT = getattr(_app, "TITLE_POINT_SIZE", 14)
# Colours: roles of the current theme's palette, read when something is drawn.
from explorer.theme import current  # noqa: E402


def colour(role: str, alpha: int | None = None) -> QColor:
    """`role` of the current palette as a QColor (optionally with an alpha of 0–255)."""
    c = QColor(getattr(current(), role))
    if alpha is not None:
        c.setAlpha(alpha)
    return c


WEIGHT_LEVELS = (0.0, 1.0)
from explorer.theme import DIVERGING, SEQUENTIAL  # noqa: E402,F401  (one map in every theme)


def weight_cmap() -> pg.ColorMap:
    """Attention weights in [0, 1]."""
    return pg.colormap.get(SEQUENTIAL)


def signed_cmap() -> pg.ColorMap:
    """Signed values (positional encodings, embeddings): blue − / white 0 / red +."""
    return pg.colormap.get(DIVERGING)


def font(pt: int = TICK_PT, bold: bool = False) -> QFont:
    """`pt` at the current presentation scale, so a panel restyled while presenting (its theme or
    scale changed) keeps its labels at the presentation's size, not the normal one."""
    f = QFont(FONT_FAMILY)
    f.setPointSizeF(pt * (_app.scale() if _app is not None else 1.0))
    f.setBold(bold)
    return f


def css_pt(pt: float) -> str:
    """A rich-text size at the current presentation scale (HTML sizes win over item fonts)."""
    return f"{pt * (_app.scale() if _app is not None else 1.0):.1f}pt"


def style_axis(axis: pg.AxisItem, label: str | None = None, line: bool = True) -> None:
    axis.setTickFont(font(TICK_PT))
    axis.setPen(current().muted if line else pg.mkPen(None))  # (setPen also recolours the label: first)
    axis.setTextPen(current().text)
    if label is not None:
        axis.setLabel(label, color=current().text, **{"font-size": css_pt(LABEL_PT)})


def set_title(plot: pg.PlotItem, text: str) -> None:
    """At the current presentation scale: a title set after F11 (a click, a new page of layers)
    is as large as the titles the scaling pass enlarged, and the next pass rescales it alike."""
    factor = _app.scale() if _app is not None else 1.0
    plot.setTitle(text, color=current().text, size=f"{TITLE_PT * factor:.1f}pt")
    fit_title_row(plot)


def span_title(plot: pg.PlotItem, whole: bool) -> None:
    """The title centred over the plot's data area (pyqtgraph's place), or (`whole`) over the
    plot with its axes: room for a title its data area cannot hold, without widening the data
    area for it (which moved an aspect-locked map's labels off the map)."""
    layout, label = plot.layout, plot.titleLabel
    if getattr(plot, "title_spans_axes", False) == whole:
        return
    plot.title_spans_axes = whole
    layout.removeItem(label)
    layout.addItem(label, 0, 0 if whole else 1, 1, 3 if whole else 1)


def fit_title_row(plot: pg.PlotItem) -> None:
    """pyqtgraph fixes a plot's title row at 30 px: a two-line or an enlarged (presentation)
    title would print over the plot. Give the row the title's real height."""
    label = plot.titleLabel
    if not label.isVisible() or not label.text:
        return
    height = max(30.0, label.item.boundingRect().height() + 4)
    label.setMaximumHeight(height)
    plot.layout.setRowFixedHeight(0, height)


def graphics_widget() -> pg.GraphicsLayoutWidget:
    """A plotting canvas in the theme's canvas colour (white in the light theme: it reads best on a
    projector in a lit room)."""
    w = pg.GraphicsLayoutWidget()
    w.setBackground(current().canvas)
    return w


def title_variants(label: str) -> tuple[str, ...]:
    """A title and its shorter forms, dropping leading words up to its ": " ("attention weight:
    0–1 on every map" → "weight: 0–1 on every map" → "0–1 on every map"); one form without one."""
    head, sep, rule = label.partition(": ")
    if not sep:
        return (label,)
    words = head.split()
    return tuple(" ".join(words[k:]) + sep + rule for k in range(len(words))) + (rule,)


def fit_axis_title(axis: pg.AxisItem, variants: tuple[str, ...]) -> None:
    """Keep the longest of `variants` that fits along the axis, now and whenever the axis is laid
    out or rescaled again, so an enlarged title (a colour bar's rule while presenting) never runs
    past its axis. The whole title stays in the axis' tooltip. Call it
    again with new variants when the title changes (never `setLabel` such an axis directly)."""
    axis._title_forms = tuple(variants)
    if not getattr(axis, "_title_fitting", False):  # one connection, however often the title changes
        axis._title_fitting = True
        axis.geometryChanged.connect(lambda: refit_axis_title(axis))
    axis.setToolTip(variants[0])
    refit_axis_title(axis)


def axis_title_width(axis: pg.AxisItem, text: str) -> float:
    """`text` as the axis would draw it for its title: its own HTML (size, colour), font and the
    text item's margins. (Font metrics of the nominal size fall short of the drawn text, so a
    title measured with them would run past its axis.)"""
    shown = axis.labelText
    axis.labelText = text
    try:
        doc = QTextDocument()
        doc.setDefaultFont(axis.label.font())
        doc.setDocumentMargin(axis.label.document().documentMargin())
        doc.setHtml(axis.labelString())
        return doc.size().width()
    finally:
        axis.labelText = shown


def refit_axis_title(axis: pg.AxisItem) -> None:
    """`fit_axis_title`'s choice again, for the axis' length and its title's size now."""
    variants = getattr(axis, "_title_forms", None)
    if not variants:
        return
    rect = axis.geometry()
    length = rect.height() if axis.orientation in ("left", "right") else rect.width()
    if length <= 1:
        return  # not laid out yet: the geometry change to come decides
    chosen = next((v for v in variants if axis_title_width(axis, v) <= length), variants[-1])
    if axis.labelText != chosen:
        axis.setLabel(chosen)  # (the label's style — colour, size — is kept)
        axis.resizeEvent()  # centred for its new length (pyqtgraph places a title only on a resize)


def colorbar(cmap: pg.ColorMap, values: tuple[float, float], label: str) -> pg.ColorBarItem:
    bar = pg.ColorBarItem(values=values, colorMap=cmap, interactive=False, width=22, pen=current().muted)
    style_axis(bar.axis, label)
    if label:
        fit_axis_title(bar.axis, title_variants(label))
    fit_colorbar_axis(bar, least=72)  # room for tick values *and* the label, which otherwise overlap
    return bar


def fit_colorbar_axis(bar: pg.ColorBarItem, least: float = 0.0) -> None:
    """pyqtgraph fixes a colour bar's axis at 45 px and silently leaves out every tick label
    wider than its box: at presentation size that is "−0.2" and "−0.1" — a diverging bar that
    shows only its positive half. Make the axis as wide as its widest tick label (at any bar
    length) plus its title, now, for the bar's current levels and font: a width pyqtgraph found
    only while painting would move the map beside it after it was drawn. Call again after
    `setLevels` or a new tick font (the presentation scale re-shows every view)."""
    axis = bar.axis
    lo, hi = sorted(float(v) for v in axis.range)
    metrics = QFontMetricsF(axis.style["tickFont"] or axis.font())
    widest = 0.0
    for length in (120.0, 240.0, 480.0, 960.0, float(axis.geometry().height())):
        for spacing, values in (axis.tickValues(lo, hi, length)[:2] if hi > lo and length > 0 else []):
            for text in axis.tickStrings(values, 1.0, spacing):  # the two labelled levels
                widest = max(widest, metrics.horizontalAdvance(text))
    title = axis.label.boundingRect().height() * 0.8 if axis.label.isVisible() else 0.0  # as pyqtgraph counts it
    room = widest + axis.style["tickTextOffset"][0] + max(0, axis.style["tickLength"]) + title + 4
    axis.setWidth(int(math.ceil(max(room, least))))


def let_shrink(label: pg.LabelItem, width: float = 40) -> None:
    """In a narrow dock a long title may be clipped, but must not push the plots out of view
    (pyqtgraph's LabelItem makes its whole text width its minimum, again on every resize)."""
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
    titles (a deliberate colour — green tokens in a title — stays). `presentation.apply_theme`
    does this for every canvas; a canvas that re-adds items after a theme change (the attention
    grid's colour bar, out of every scene until the first input) does it for itself."""
    p = p or current()
    legend_fill = p.q("canvas")
    legend_fill.setAlpha(230)
    view.setBackground(p.canvas)
    for item in view.scene().items():
        if isinstance(item, pg.AxisItem):
            if item.pen().style() != Qt.PenStyle.NoPen:  # an axis drawn without a line keeps none
                item.setPen(pg.mkPen(p.muted, width=item.pen().widthF()))  # as style_axis
            item.setTextPen(pg.mkPen(p.text))
        elif isinstance(item, pg.LegendItem):
            item.setBrush(pg.mkBrush(legend_fill))
            item.setPen(pg.mkPen(p.muted))
            item.setLabelTextColor(p.text)
            for _sample, label in item.items:  # setLabelTextColor stores the colour; the text keeps the old one
                label.setText(label.text)
        elif isinstance(item, pg.LabelItem) and not _in_legend(item) and _is_plain_text_colour(item.opts.get("color")):
            item.setText(item.text, color=p.text)  # titles in the theme's text colour
    # A QGraphicsView's update() does not repaint its viewport: on a real screen (X11) an axis
    # recoloured here would keep the old theme's text until something else repainted it.
    view.viewport().update()


def _in_legend(item) -> bool:
    """Legend entries are coloured with their legend (`setLabelTextColor`)."""
    parent = item.parentItem()
    while parent is not None:
        if isinstance(parent, pg.LegendItem):
            return True
        parent = parent.parentItem()
    return False


def _is_plain_text_colour(colour) -> bool:
    """Black-ish / white-ish title colours follow the theme; deliberate colours (a legend in the
    title: green tokens, red exact match) stay."""
    if colour is None:
        return True
    from explorer.theme import PALETTES
    plain = {QColor(c).name() for q in PALETTES.values() for c in (q.text, q.muted)}
    try:
        return pg.mkColor(colour).name() in plain
    except Exception:  # noqa: BLE001 - an unusual colour spec: leave it alone
        return False
