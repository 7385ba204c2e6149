"""Layout invariants of a panel on screen, measured from widget and item rectangles and the
fonts' own metrics (no pixel constants to match, no glyph arithmetic).

Each check returns a list of problems in words (empty: fine), so one assertion can report
every problem of a panel at once. Used by tests/test_layout.py (the sweep over panels × screen
classes × themes) and a few behaviour tests."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QRect, QRectF, Qt
from PySide6.QtGui import QFontMetricsF, QImage, QPainter, QTextDocument
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractScrollArea,
    QCheckBox,
    QGraphicsSimpleTextItem,
    QLabel,
    QPushButton,
    QRadioButton,
    QStyle,
    QStyleOptionButton,
    QWidget,
)

from explorer.drawing.colour_bar import ColourBar
from explorer.panels.architecture.figure_view import FigureView

MIN_PLOT = (160, 120)  # the smallest plot area (ViewBox) a back row can read, in screen pixels
READABLE_PT = 8  # the smallest tick / token label a view may draw; fewer labels (counted) instead
BUTTON_MARGIN = 6  # a tool button's frame and padding, both sides together


def layout_signature(root: QWidget) -> tuple:
    """Where everything under `root` is: each shown widget's geometry, and each shown plot's
    view boxes and axes (pyqtgraph lays its items out in posted events of its own)."""
    out = []
    for widget in [root, *root.findChildren(QWidget)]:
        if widget.isVisible():
            g = widget.geometry()
            out.append((g.x(), g.y(), g.width(), g.height()))
        if isinstance(widget, pg.GraphicsView) and widget.isVisible():
            for item in widget.scene().items():
                if isinstance(item, (pg.ViewBox, pg.AxisItem)) and item.isVisible():
                    r = item.sceneBoundingRect()
                    out.append((round(r.x()), round(r.y()), round(r.width()), round(r.height())))
    return tuple(out)


def settle_until_still(qtbot, root: QWidget, least: int = 3, most: int = 40) -> bool:
    """Process events until the layout under `root` stops moving (two rounds alike, after at
    least `least`): a resize runs through several rounds of posted layout events. False when
    it never stops moving (a layout that flips back and forth — assert on it)."""
    from PySide6.QtWidgets import QApplication
    from shiboken6 import isValid
    last = None
    for i in range(most):
        QApplication.processEvents()
        qtbot.wait(2)
        if not isValid(root):
            return True
        now = layout_signature(root)
        if i + 1 >= least and now == last:
            return True
        last = now
    return False


def drawn_labels(axis) -> list[tuple[QRectF, str]]:
    """(rectangle in the axis' coordinates, text) of every tick label a pyqtgraph axis draws now."""
    image = QImage(4, 4, QImage.Format_ARGB32)
    painter = QPainter(image)
    try:
        _axis, _ticks, texts = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [(rect, text) for rect, _flags, text in texts]


def shown(widget: QWidget) -> bool:
    """On screen: visible (a hidden tab's page is not) and not of zero size. (visibleRegion()
    is empty for every widget on the offscreen platform, so it cannot tell.)"""
    return widget.isVisible() and widget.width() > 0 and widget.height() > 0


def elides(widget: QWidget) -> bool:
    """An eliding widget (superqt's QElidingLabel, the app's RichElidingLabel / ElidingComboBox):
    it shortens its own text with "…" on purpose."""
    return any("Elid" in cls.__name__ for cls in type(widget).__mro__)


def _label_text_fits(label: QLabel) -> str | None:
    text = label.text()
    if not text:
        return None
    room = label.contentsRect()
    margin = label.margin() * 2 + max(label.indent(), 0)
    width = room.width() - margin
    rich = label.textFormat() == Qt.RichText or (label.textFormat() == Qt.AutoText and Qt.mightBeRichText(text))
    if rich:
        doc = QTextDocument()
        doc.setDefaultFont(label.font())
        doc.setDocumentMargin(0)
        doc.setHtml(text)
        if label.wordWrap():
            doc.setTextWidth(width)
        need_w, need_h = doc.idealWidth(), doc.size().height()
        if need_w > width + 1 or need_h > room.height() + 2:
            return f"needs {need_w:.0f}×{need_h:.0f}, has {width}×{room.height()}"
        return None
    if label.wordWrap():
        need_h = label.heightForWidth(room.width() + label.contentsMargins().left() + label.contentsMargins().right())
        if need_h > label.height() + 2:
            return f"wraps to {need_h} px high, has {label.height()}"
        return None
    fm = QFontMetricsF(label.font())
    need = max(fm.horizontalAdvance(line) for line in text.split("\n"))
    if need > width + 1:
        if "…" in text and label.toolTip():
            return None  # shortened on purpose, the whole text in its tooltip
        return f"needs {need:.0f} px, has {width}"
    return None


def _button_room(button: QAbstractButton) -> int:
    """The width the style leaves for the text (its contents rectangle, as the style draws it)."""
    if isinstance(button, (QCheckBox, QRadioButton, QPushButton)):
        opt = QStyleOptionButton()
        opt.initFrom(button)
        element = (QStyle.SE_CheckBoxContents if isinstance(button, QCheckBox) else
                   QStyle.SE_RadioButtonContents if isinstance(button, QRadioButton) else QStyle.SE_PushButtonContents)
        return button.style().subElementRect(element, opt, button).width()
    return button.width() - BUTTON_MARGIN


def _button_text_fits(button: QAbstractButton) -> str | None:
    text = button.text().replace("&&", "\0").replace("&", "").replace("\0", "&")
    if not text:
        return None
    need = QFontMetricsF(button.font()).horizontalAdvance(text)
    if not button.icon().isNull():
        need += button.iconSize().width() + 4
    room = _button_room(button)
    if need > room + 1:
        return f"needs {need:.0f} px, has {room}"
    return None


def clipped_texts(root: QWidget) -> list[str]:
    """Every shown QLabel / QAbstractButton under `root` whose text does not fit its widget
    (eliding widgets excepted: they shorten their text with "…" on purpose)."""
    problems = []
    for label in root.findChildren(QLabel):
        if shown(label) and not elides(label):
            why = _label_text_fits(label)
            if why:
                problems.append(f"label {label.text()[:50]!r}: {why}")
    for button in root.findChildren(QAbstractButton):
        if shown(button) and button.parent() is not None and "qt_" not in button.objectName() and not elides(button):
            why = _button_text_fits(button)
            if why:
                problems.append(f"button {button.text()!r}: {why}")
    return problems


def _views(root: QWidget):
    return [v for v in root.findChildren(pg.GraphicsView) if shown(v)]


def small_plots(root: QWidget, least: tuple[int, int] = MIN_PLOT) -> list[str]:
    """Every shown pyqtgraph plot area (ViewBox; colour bars excepted) smaller than `least`."""
    problems = []
    for view in _views(root):
        for item in view.scene().items():
            if not isinstance(item, pg.ViewBox) or not item.isVisible() or _in_colorbar(item):
                continue
            rect = view.mapFromScene(item.sceneBoundingRect()).boundingRect()
            if rect.width() < least[0] or rect.height() < least[1]:
                problems.append(f"plot {_plot_title(item)!r} in {type(view.parentWidget()).__name__}: "
                                f"{rect.width()}×{rect.height()} px < {least[0]}×{least[1]}")
    return problems


def long_axis_titles(root: QWidget) -> list[str]:
    """Every shown axis title (a colour bar's included) longer than its axis, or drawn outside
    its canvas: its ends are cut."""
    problems = []
    for view in _views(root):
        canvas = view.mapToScene(view.viewport().rect()).boundingRect()
        for item in view.scene().items():
            if not (isinstance(item, pg.AxisItem) and item.isVisible() and item.label.isVisible() and item.labelText):
                continue
            rect = item.geometry()
            length = rect.height() if item.orientation in ("left", "right") else rect.width()
            if length <= 20:
                continue
            need = item.label.boundingRect().width()
            if need > length + 2:
                problems.append(f"axis title {item.labelText!r}: {need:.0f} px along a {length:.0f}-px axis")
            m = item.label.document().documentMargin()  # (the text item's padding may stand outside)
            drawn = item.label.mapRectToScene(item.label.boundingRect().adjusted(m, m, -m, -m))
            if not canvas.adjusted(-2, -2, 2, 2).contains(drawn):
                problems.append(f"axis title {item.labelText!r} drawn at {_r(drawn)}, outside its canvas {_r(canvas)}")
    return problems


def cramped_titles(root: QWidget) -> list[str]:
    """Every shown plot title taller than the row its plot gives it (printed over the plot) or
    wider than its place (cut at the canvas' edge)."""
    problems = []
    for view in _views(root):
        for item in view.scene().items():
            if not (isinstance(item, pg.PlotItem) and item.isVisible() and item.titleLabel.isVisible()
                    and item.titleLabel.text):
                continue
            text = item.titleLabel.item
            need, has = text.boundingRect().height(), item.titleLabel.geometry().height()
            if need > has + 2:
                problems.append(f"plot title {item.titleLabel.text[:40]!r}: {need:.0f} px high in a {has:.0f}-px row")
            wide = text.boundingRect().width() - 2 * text.document().documentMargin()
            room = item.titleLabel.geometry().width()
            if room > 20 and wide > room + 2:
                problems.append(f"plot title {item.titleLabel.text[:40]!r}: {wide:.0f} px wide in a {room:.0f}-px place")
    return problems


def overflowing_canvases(root: QWidget) -> list[str]:
    """pyqtgraph canvases laid out larger than their view: the overflow is cut off without a
    scroll bar."""
    problems = []
    for view in _views(root):
        central = view.centralWidget
        if central is None:
            continue
        size = central.geometry()
        if size.width() > view.width() + 1 or size.height() > view.height() + 1:
            problems.append(f"{type(view).__name__} canvas {size.width():.0f}×{size.height():.0f} px in a "
                            f"{view.width()}×{view.height()} view")
    return problems


def tick_point_size(axis) -> float:
    """The point size an axis draws its tick labels at (a token axis: the size it chose)."""
    fit = getattr(axis, "fit", None)
    if fit is not None and hasattr(fit, "pt"):
        return float(fit.pt)
    font = axis.style.get("tickFont") or axis.font()
    return font.pointSizeF()


def counted_by_its_map(view) -> bool:
    """The map that owns `view` says how many labels it shows (a Heatmap's "k of n labels")."""
    widget = view
    while widget is not None:
        count_text = getattr(widget, "count_text", None)
        if callable(count_text):
            return " of " in count_text()
        widget = widget.parentWidget()
    return False


def unreadable_ticks(root: QWidget, floor: float = READABLE_PT) -> list[str]:
    """Every shown axis drawing tick labels smaller than `floor` pt, and every token axis that
    names fewer of its tokens than it has without saying so ("k of n" in its title)."""
    from support import plain_text
    problems = []
    for view in _views(root):
        if view.visibleRegion().isEmpty():  # scrolled out of sight: drawn (and counted) when scrolled to
            continue
        for axis in view.scene().items():
            if not (isinstance(axis, pg.AxisItem) and axis.isVisible() and axis.style.get("showValues", True)):
                continue
            labels = [t for _r, t in drawn_labels(axis) if t]
            if labels and tick_point_size(axis) < floor:
                problems.append(f"axis {axis.labelText or axis.orientation!r} of {_plot_title(axis)!r}: "
                                f"labels at {tick_point_size(axis):.1f} pt < {floor}")
            tokens = getattr(axis, "tokens", None)
            if isinstance(tokens, list) and tokens and not getattr(axis, "numeric", False):
                expected = len(tokens) * max(1, int(getattr(axis, "repeats", 1) or 1))
                if (len(labels) < expected and " of " not in plain_text(axis.labelString())
                        and not counted_by_its_map(view)):
                    problems.append(f"token axis {axis.labelText or axis.orientation!r} of {_plot_title(axis)!r} "
                                    f"names {len(labels)} of {expected} tokens without saying so")
    return problems


def _in_colorbar(item) -> bool:
    parent = item.parentItem()
    while parent is not None:
        if isinstance(parent, (ColourBar, pg.ColorBarItem, pg.HistogramLUTItem)):
            return True
        parent = parent.parentItem()
    return False


def _plot_title(item) -> str:
    parent = item.parentItem()
    while parent is not None and not isinstance(parent, pg.PlotItem):
        parent = parent.parentItem()
    if parent is not None and parent.titleLabel.text:
        return parent.titleLabel.text[:40]
    return ""


def _scrolled_inside(widget: QWidget, root: QWidget) -> bool:
    """Inside a scroll area of the panel's own (a grid of maps): reached by scrolling."""
    parent = widget.parentWidget()
    while parent is not None and parent is not root:
        if isinstance(parent.parentWidget(), QAbstractScrollArea) and parent is parent.parentWidget().viewport():
            return True
        parent = parent.parentWidget()
    return False


def outside_window(root: QWidget, window: QWidget) -> list[str]:
    """Shown widgets of `root` reaching outside the window, and scroll bars on the panel's scroll
    area (the panel is larger than its dock: part of it is off screen)."""
    problems = []
    frame = window.rect().adjusted(-1, -1, 1, 1)
    for widget in [root] + root.findChildren(QWidget):
        if not shown(widget) or widget.isWindow() or _scrolled_inside(widget, root):
            continue
        rect = QRect(widget.mapTo(window, widget.rect().topLeft()), widget.size())
        if not frame.contains(rect):
            problems.append(f"{type(widget).__name__} {widget.objectName()!r} at {rect.getRect()} "
                            f"outside the window {window.rect().getRect()}")
    scroll = root.parentWidget().parentWidget() if root.parentWidget() is not None else None
    if isinstance(scroll, QAbstractScrollArea):
        for bar in (scroll.horizontalScrollBar(), scroll.verticalScrollBar()):
            if bar.isVisible() and bar.maximum() > 0:
                problems.append(f"the panel scrolls ({'horizontal' if bar.orientation() == Qt.Horizontal else 'vertical'}"
                                f" by {bar.maximum()} px): part of it is off screen")
    return problems


def figure_problems(panel) -> list[str]:
    """Each Figure 1 shown (`FigureView`: the architecture and 2017 vs 2024 panels): every block's
    texts inside its box, no two texts overlapping, all of the figure in the view."""
    return [p for view in panel.findChildren(FigureView) if shown(view) for p in _figure_problems(view)]


def _figure_problems(view) -> list[str]:
    problems = []
    figure, scene = view.figure, view.scene()
    for block in figure.elements:
        if type(block).__name__ != "BlockItem":
            continue  # ⊕ and ∿ carry their texts beside them, checked by the overlap rule
        box = block.mapRectToScene(block.rect())
        for t in block.texts():
            r = t.sceneBoundingRect()
            if not box.contains(r):
                problems.append(f"{t.text()!r} {_r(r)} sticks out of its block {block.title!r} {_r(box)}")
    texts = [i for i in scene.items() if isinstance(i, QGraphicsSimpleTextItem) and i.isVisible() and i.text()]
    for i, a in enumerate(texts):
        for b in texts[i + 1:]:
            overlap = a.sceneBoundingRect().intersected(b.sceneBoundingRect())
            if overlap.width() > 0.5 and overlap.height() > 0.5:
                problems.append(f"{a.text()!r} overlaps {b.text()!r}")
    in_view = view.mapToScene(view.viewport().rect()).boundingRect().adjusted(-1, -1, 1, 1)
    for t in texts:
        if not in_view.contains(t.sceneBoundingRect()):
            problems.append(f"{t.text()!r} is outside the view")
    return problems


def panel_problems(panel: QWidget, window: QWidget) -> list[str]:
    """Every layout invariant of one shown panel: no text cut, nothing off the window, plots
    large enough, tick labels readable or their omission counted."""
    return (outside_window(panel, window) + overflowing_canvases(panel) + clipped_texts(panel)
            + cramped_titles(panel) + long_axis_titles(panel) + small_plots(panel) + unreadable_ticks(panel)
            + figure_problems(panel))


def _r(rect: QRectF) -> str:
    return f"({rect.x():.0f},{rect.y():.0f} {rect.width():.0f}×{rect.height():.0f})"
