"""Geometry checks of a panel on screen, measured with QFontMetrics (no pixel comparisons).

Each check returns a list of problems in words (empty: fine), so a test can report every
problem of a panel at once. Used by tests/test_presentation_layout.py."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QRect, QRectF, Qt
from PySide6.QtGui import QFontMetricsF, QImage, QPainter, QTextDocument
from superqt import QElidingLabel
from PySide6.QtWidgets import (QAbstractButton, QAbstractScrollArea, QCheckBox, QGraphicsSimpleTextItem, QLabel,
                               QPushButton, QRadioButton, QStyle, QStyleOptionButton, QWidget)

MIN_PLOT = (160, 120)  # the smallest plot area (ViewBox) a back row can read, in screen pixels
MIN_CAP_HEIGHT = 11.0  # Figure 1's text at 1280×720 presentation, in screen pixels
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


def settle_until_still(qtbot, root: QWidget, least: int = 4, most: int = 60) -> bool:
    """Process events until the layout under `root` stops moving (two rounds alike, after at
    least `least`). A fixed number of rounds was not enough on a loaded CI machine: a resize
    runs through several rounds of posted layout events (the decoding panel folds into tabs,
    its plots re-arrange, pyqtgraph re-lays its items), and a check in between measured a
    half-made layout (a side-by-side map at 216×126 px). False when it never stops moving (a
    layout that flips back and forth — assert on it)."""
    from PySide6.QtWidgets import QApplication
    from shiboken6 import isValid
    last = None
    for i in range(most):
        QApplication.processEvents()
        qtbot.wait(5)
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


def _label_text_fits(label: QLabel) -> str | None:
    text = label.text()
    if not text or (isinstance(label, QElidingLabel) and label.toolTip() == text):
        return None  # elides by design, the whole text in its tooltip
    room = label.contentsRect()
    margin = label.margin() * 2 + label.indent() if label.indent() > 0 else label.margin() * 2
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
        else:
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
            return None  # elided on purpose, the whole text in its tooltip
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
    """Every shown QLabel / QAbstractButton under `root` whose text does not fit its widget."""
    problems = []
    for label in root.findChildren(QLabel):
        if shown(label):
            why = _label_text_fits(label)
            if why:
                problems.append(f"label {label.text()[:50]!r}: {why}")
    for button in root.findChildren(QAbstractButton):
        if shown(button) and button.parent() is not None and "qt_" not in button.objectName():
            why = _button_text_fits(button)
            if why:
                problems.append(f"button {button.text()!r}: {why}")
    return problems


def small_plots(root: QWidget, least: tuple[int, int] = MIN_PLOT) -> list[str]:
    """Every shown pyqtgraph plot area (ViewBox; colour bars excepted) smaller than `least`."""
    problems = []
    for view in root.findChildren(pg.GraphicsView):
        if not shown(view):
            continue
        for item in view.scene().items():
            if not isinstance(item, pg.ViewBox) or not item.isVisible():
                continue
            if isinstance(item.parentItem(), pg.ColorBarItem) or _in_colorbar(item):
                continue
            rect = view.mapFromScene(item.sceneBoundingRect()).boundingRect()
            if rect.width() < least[0] or rect.height() < least[1]:
                title = _plot_title(item)
                problems.append(f"plot {title!r} in {type(view.parentWidget()).__name__}: "
                                f"{rect.width()}×{rect.height()} px < {least[0]}×{least[1]}")
    return problems


LEAST_FILL = 0.6  # the share of its plot area an aspect-locked map covers at least


def loose_maps(root: QWidget, least: float = LEAST_FILL) -> list[str]:
    """Every shown aspect-locked heatmap (square cells: query × key) that covers less than
    `least` of its plot area in either direction: a small map in a wide (or tall) plot, its
    token labels a hand's width from the rows and columns they name."""
    problems = []
    for view in root.findChildren(pg.GraphicsView):
        if not shown(view):
            continue
        for item in view.scene().items():
            if not isinstance(item, pg.ViewBox) or not item.isVisible() or _in_colorbar(item):
                continue
            if not item.state.get("aspectLocked"):
                continue
            images = [c for c in item.addedItems if isinstance(c, pg.ImageItem) and c.isVisible() and c.image is not None]
            if not images:
                continue
            box = item.sceneBoundingRect()
            drawn = images[0].sceneBoundingRect().intersected(box)
            fill_w, fill_h = drawn.width() / max(box.width(), 1), drawn.height() / max(box.height(), 1)
            if min(fill_w, fill_h) < least:
                problems.append(f"map in {_plot_title(item)!r} ({type(view.parentWidget()).__name__}) covers "
                                f"{fill_w:.0%} × {fill_h:.0%} of its {box.width():.0f}×{box.height():.0f}-px plot")
    return problems


def long_axis_titles(root: QWidget) -> list[str]:
    """Every shown axis title (a colour bar's rule included) longer than its axis, or drawn
    outside its canvas: its ends are cut ("…tention weight: 0–1 on every ma" on a beamer; a
    title enlarged in place kept the position of its smaller self and ran off the top)."""
    problems = []
    for view in root.findChildren(pg.GraphicsView):
        if not shown(view):
            continue
        for item in view.scene().items():
            if not (isinstance(item, pg.AxisItem) and item.isVisible() and item.label.isVisible() and item.labelText):
                continue
            rect = item.geometry()
            length = rect.height() if item.orientation in ("left", "right") else rect.width()
            need = item.label.boundingRect().width()
            if length > 20 and need > length + 2:
                problems.append(f"axis title {item.labelText!r}: {need:.0f} px along a {length:.0f}-px axis")
            m = item.label.document().documentMargin()  # (the text item's padding may stand outside)
            drawn = item.label.mapRectToScene(item.label.boundingRect().adjusted(m, m, -m, -m))
            canvas = view.mapToScene(view.viewport().rect()).boundingRect()
            if length > 20 and not canvas.adjusted(-2, -2, 2, 2).contains(drawn):
                problems.append(f"axis title {item.labelText!r} drawn at {_r(drawn)}, outside its canvas {_r(canvas)}")
    return problems


def cramped_titles(root: QWidget) -> list[str]:
    """Every shown plot title (pyqtgraph PlotItem) taller than the row the plot gives it (its
    text would print over the plot) or wider than its place (it runs past the plot, cut at the
    canvas' edge: a 1024-px beamer's "tokens · exact")."""
    problems = []
    for view in root.findChildren(pg.GraphicsView):
        if not shown(view):
            continue
        for item in view.scene().items():
            if isinstance(item, pg.PlotItem) and item.isVisible() and item.titleLabel.isVisible() \
                    and item.titleLabel.text:
                need = item.titleLabel.item.boundingRect().height()
                has = item.titleLabel.geometry().height()
                if need > has + 2:
                    problems.append(f"plot title {item.titleLabel.text[:40]!r}: {need:.0f} px high in a {has:.0f}-px row")
                text = item.titleLabel.item
                wide = text.boundingRect().width() - 2 * text.document().documentMargin()
                room = item.titleLabel.geometry().width()
                if room > 20 and wide > room + 2:
                    problems.append(f"plot title {item.titleLabel.text[:40]!r}: {wide:.0f} px wide "
                                    f"in a {room:.0f}-px place")
    return problems


def _in_colorbar(item) -> bool:
    parent = item.parentItem()
    while parent is not None:
        if isinstance(parent, (pg.ColorBarItem, pg.HistogramLUTItem)):
            return True
        parent = parent.parentItem()
    return False


def _plot_title(view_box) -> str:
    parent = view_box.parentItem()
    while parent is not None and not isinstance(parent, pg.PlotItem):
        parent = parent.parentItem()
    if parent is not None and parent.titleLabel.text:
        return parent.titleLabel.text[:40]
    return ""


def overflowing_canvases(root: QWidget) -> list[str]:
    """pyqtgraph canvases laid out wider or taller than their view: the overflow is cut off
    without a scroll bar (a title or legend, its plot's least width, ran plots past the window)."""
    problems = []
    for view in root.findChildren(pg.GraphicsView):
        central = view.centralWidget
        if not shown(view) or central is None:
            continue
        size = central.geometry()
        if size.width() > view.width() + 1 or size.height() > view.height() + 1:
            problems.append(f"{type(view).__name__} canvas {size.width():.0f}×{size.height():.0f} px in a "
                            f"{view.width()}×{view.height()} view ({_plot_title(central) if isinstance(central, pg.PlotItem) else ''})")
    return problems


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
    frame = window.rect()
    for widget in [root] + root.findChildren(QWidget):
        if not shown(widget) or widget.isWindow() or _scrolled_inside(widget, root):
            continue
        rect = QRect(widget.mapTo(window, widget.rect().topLeft()), widget.size())
        if not frame.adjusted(-1, -1, 1, 1).contains(rect):
            problems.append(f"{type(widget).__name__} {widget.objectName()!r} at {rect.getRect()} "
                            f"outside the window {frame.getRect()}")
    scroll = root.parentWidget().parentWidget() if root.parentWidget() is not None else None
    if isinstance(scroll, QAbstractScrollArea):
        for bar in (scroll.horizontalScrollBar(), scroll.verticalScrollBar()):
            if bar.isVisible() and bar.maximum() > 0:
                problems.append(f"the panel scrolls ({'horizontal' if bar.orientation() == Qt.Horizontal else 'vertical'}"
                                f" by {bar.maximum()} px): part of it is off screen")
    return problems


def figure_problems(panel, min_cap: float | None) -> list[str]:
    """Figure 1: every block's texts inside its box, no two texts overlapping, all of the
    figure in the view, and (min_cap) every text's cap height on screen at least that."""
    problems = []
    view, scene = panel.view, panel.scene
    for e in panel.figure.elements:
        block = e.item
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
    shown_rect = view.mapToScene(view.viewport().rect()).boundingRect()
    for t in texts:
        if not shown_rect.adjusted(-1, -1, 1, 1).contains(t.sceneBoundingRect()):
            problems.append(f"{t.text()!r} is outside the view")
    if min_cap is not None:
        zoom = view.transform().m11()
        for t in texts:
            cap = QFontMetricsF(t.font()).capHeight() * zoom
            if cap < min_cap:
                problems.append(f"{t.text()!r}: cap height {cap:.1f} px < {min_cap}")
    return problems


def block_name_caps(panel) -> list[float]:
    """Figure 1: the cap height on screen (px) of every block's name: the name font's cap height
    times the scale its item is drawn at (scene zoom × any item transform)."""
    caps = []
    for e in panel.figure.elements:
        if type(e.item).__name__ != "BlockItem":
            continue
        title = e.item.title_item
        on_screen = title.deviceTransform(panel.view.viewportTransform())
        caps.append(QFontMetricsF(title.font()).capHeight() * on_screen.m22())
    return caps


def _r(rect: QRectF) -> str:
    return f"({rect.x():.0f},{rect.y():.0f} {rect.width():.0f}×{rect.height():.0f})"


def colorbar_problems(root: QWidget) -> list[str]:
    """Every shown colour bar of a diverging scale (below and above 0) draws its tick labels
    whole: a negative one, 0 and a positive one, each inside what the axis paints and the view, each
    as wide as its text (QFontMetricsF). pyqtgraph silently leaves out a label wider than a
    colour bar's axis — "−0.2" went missing while "0.2" stayed."""
    from PySide6.QtGui import QImage, QPainter
    problems = []
    for view in root.findChildren(pg.GraphicsView):
        if not shown(view):
            continue
        for bar in [i for i in view.scene().items() if isinstance(i, pg.ColorBarItem) and i.isVisible()]:
            axis = bar.axis
            lo, hi = sorted(float(v) for v in axis.range)
            if not lo < 0 < hi:
                continue
            image = QImage(4, 4, QImage.Format_ARGB32)
            painter = QPainter(image)
            try:
                texts = axis.generateDrawSpecs(painter)[2]
            finally:
                painter.end()
            values = [float(t.replace("−", "-")) for _r, _f, t in texts]
            if not (any(v < 0 for v in values) and 0.0 in values and any(v > 0 for v in values)):
                problems.append(f"colour bar {lo:.2g}…{hi:.2g} labels only {[t for _r, _f, t in texts]}")
            box = axis.boundingRect().adjusted(-1, -1, 1, 1)  # what it paints (an end label may overhang)
            screen = QRectF(view.viewport().rect()).adjusted(-1, -1, 1, 1)
            metrics = QFontMetricsF(axis.style["tickFont"] or axis.font())
            for rect, _flags, text in texts:
                if not box.contains(rect):
                    problems.append(f"colour bar tick {text!r} {_r(rect)} outside its axis {_r(box)}")
                if not screen.contains(QRectF(view.mapFromScene(axis.mapRectToScene(rect)).boundingRect())):
                    problems.append(f"colour bar tick {text!r} outside the view")
                if metrics.horizontalAdvance(text) > rect.width() + 1:
                    problems.append(f"colour bar tick {text!r} needs {metrics.horizontalAdvance(text):.0f} px, "
                                    f"has {rect.width():.0f}")
    return problems
