"""`Heatmap`, the one map component: a matrix as cells labelled with tokens (`LabelAxis`, the one
label policy), an optional colour bar, text in the cells where it fits, hatched blocked cells, a
selected cell, an elided title and the honest count of the labels drawn; wheel zooms, drag pans."""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QFontMetricsF, QPainterPath, QPen
from PySide6.QtWidgets import QFrame, QGraphicsItem, QGraphicsPathItem, QGraphicsRectItem, QLabel, QWidget
from superqt import QElidingLabel

from explorer import style
from explorer.drawing.cell_text import CellText
from explorer.drawing.colour_bar import colour_bar_canvas
from explorer.drawing.label_axis import LabelAxis, display_piece, label_font, plan
from explorer.drawing.map_overlays import MaskOverlay
from explorer.drawing.map_plot import MapPlot
from explorer.panels.layouts import column, row
from explorer.theme import notifier
from model.inference.labels import label_count

FRAME_SHEET = ".QFrame {{ border: 3px solid %s; }}"  # a `set_sheet` template: the frame alone, not the canvas in it


def edge_cells(room: float, columns: int, ends: tuple[float, float], most: float = math.inf) -> tuple[float, float, float]:
    """(column width, room left of the first column, room right of the last): the widest columns, at
    most `most`, that leave labels `ends` px wide (beyond what is already free) centred on the first
    and the last column room to end inside `room`."""
    wide = sorted(ends, reverse=True)
    for k in range(3 if columns > 1 else 2):  # k: how many ends are wider than their column
        cell = (room - sum(wide[:k]) / 2) / (columns - k / 2)
        if all(end <= cell for end in wide[k:]):
            break
    cell = max(1.0, min(cell, most))
    return cell, *(max(0.0, (end - cell) / 2) for end in ends)


class Heatmap(QWidget):
    """A (rows × cols) matrix with token axes. `cellClicked(row, col)`; `hovered(text)`."""

    cellClicked = Signal(int, int)
    hovered = Signal(str)

    def __init__(self, title: str = "", colormap: pg.ColorMap | None = None,
                 levels: tuple[float, float] = (0.0, 1.0), colour_bar: bool | str = False, square: bool = True,
                 numbers: bool = False, parent=None):
        """`colour_bar`: a bar beside the map (a string: its name); `square`: square cells (else they
        fill the room); `numbers`: values in the cells."""
        super().__init__(parent)
        self.square = square
        self.framed: bool | None = None  # the selection frame drawn now (`mark`)
        self.title = QElidingLabel(self)
        self.count = style.set_font_role(QLabel(self), "small")  # "12 of 24 labels": drawn of those in view
        style.set_sheet(self.count, "color: {muted};")
        self.canvas = pg.GraphicsLayoutWidget()
        self.canvas.setMinimumSize(60, 60)
        self.map_frame = QFrame()  # the selection frame (`mark`) around the canvas: pyqtgraph lays its scene
        column((self.canvas, 1), parent=self.map_frame, margins=0)  # out at the canvas' whole size, border or not
        self.rows_axis, self.cols_axis = LabelAxis("left"), LabelAxis("bottom")
        self.rows_axis.sizes_itself = self.cols_axis.sizes_itself = False  # `_square` sizes them
        self.plot = MapPlot({"left": self.rows_axis, "bottom": self.cols_axis})
        self.canvas.addItem(self.plot)
        self.plot.invertY(True)  # row 0 at the top, as in the paper's figures
        self.plot.vb.setDefaultPadding(0.0)
        self.canvas.ci.setContentsMargins(0, 0, 0, 0)
        self.cmap = colormap or style.colormap(style.SEQUENTIAL)
        self.levels = (float(levels[0]), float(levels[1]))
        self.image = pg.ImageItem()
        self.image.setColorMap(self.cmap)
        self.image.setLevels(self.levels)
        self.hatch = MaskOverlay()
        self.cell_text = CellText(self.image, numbers)
        for item in (self.hatch, self.image, self.cell_text):
            self.plot.addItem(item)
        self.overlays: list[QGraphicsItem] = []
        self.axis_titles = self.axis_names = ("", "")  # the whole names given, the names shown (`set_axis_names`)
        self.edges = self.overlay(QGraphicsRectItem(), "map_edge", 1, 2)  # an edge on either canvas
        self.selection = self.overlay(QGraphicsRectItem(), "selected", 3, 5)
        self.selection.hide()
        self.selected: tuple[int, int] | None = None
        self.marks = self.overlay(QGraphicsPathItem(), "text", 2, 4, dash=True)  # marked columns ([MASK])
        self.user_view = False  # zoomed or panned by the user: a resize keeps the view
        self.plot.vb.sigRangeChangedManually.connect(self._on_user_view)
        self.plot.vb.sigResized.connect(self._on_view_resized)
        self.bar_canvas, self.bar = colour_bar_canvas(self.cmap, self.levels, colour_bar) if colour_bar else (None, None)
        maps = row((self.map_frame, 1), margins=0)
        if self.bar_canvas is not None:
            maps.addWidget(self.bar_canvas)
        column(row((self.title, 1), self.count, margins=0), (maps, 1), parent=self, margins=0).setSpacing(2)
        self.set_title(title)
        self.values = np.zeros((0, 0), dtype=np.float32)
        self.allowed: np.ndarray | None = None
        self.row_labels: list[str] = []
        self.col_labels: list[str] = []
        self.describe = self.default_description  # (row, col) → hover text; a panel may replace it
        for axis in (self.rows_axis, self.cols_axis):
            axis.counted.connect(self._show_count, Qt.ConnectionType.QueuedConnection)
        self.canvas.installEventFilter(self)  # its resize: the margins first, pyqtgraph then lays out within them
        self.canvas.scene().sigMouseMoved.connect(self._hover)
        self.canvas.scene().sigMouseClicked.connect(self._click)
        notifier().changed.connect(self.recolour)

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """The base font changed (presenting): the axes sized again once the canvas wears it."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            QTimer.singleShot(0, self, self._square)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt's name
        if watched is self.canvas and event.type() == QEvent.Type.Resize:
            self._square()
        return False

    def overlay(self, item, role: str, width: float, z: float, dash: bool = False):
        """`item` drawn over the map in `role`'s colour, `width` screen pixels wide at any zoom."""
        pen = QPen(style.colour(role), width, Qt.PenStyle.DashLine if dash else Qt.PenStyle.SolidLine)
        pen.setCosmetic(True)
        item.setPen(pen)
        item.setZValue(z)
        item.setData(0, role)
        self.plot.addItem(item, ignoreBounds=True)
        self.overlays.append(item)
        return item

    def recolour(self, *_) -> None:
        """The overlays and the axis names (their colour is in their HTML) in the current theme."""
        if any(self.axis_titles):
            self.set_axis_names(*self.axis_titles)
        for item in self.overlays:
            pen = item.pen()
            pen.setColor(style.colour(item.data(0)))
            item.setPen(pen)

    # -- data -----------------------------------------------------------------------------------------
    def set_data(self, values: np.ndarray, row_labels: list[str], col_labels: list[str],
                 allowed: np.ndarray | None = None, texts: list[list[list[str]]] | None = None,
                 row_names: bool = False) -> None:
        """`values` (rows × cols) with these labels; cells where `allowed` is False hatched; `texts[r][c]`:
        a cell's lines; `row_names`: rows are names ("Layer 2"), not tokens."""
        values = np.asarray(values, dtype=np.float32)
        if values.ndim != 2:
            raise ValueError(f"a heatmap shows a matrix (rows × columns), not an array of shape {values.shape}")
        rows, cols = values.shape
        shape_changed = values.shape != self.values.shape
        self.values, self.allowed = values, allowed
        self.row_labels, self.col_labels = list(row_labels), list(col_labels)
        shown = values if allowed is None else np.where(allowed, values, np.nan).astype(np.float32)
        if rows and cols:
            self.image.setImage(shown, levels=self.levels, autoLevels=False)
            self.image.setRect(QRectF(0, 0, cols, rows))
        self.image.setVisible(bool(rows and cols))
        self.hatch.set_mask(allowed)
        self.edges.setRect(QRectF(0, 0, cols, rows))
        self.edges.setVisible(bool(rows and cols))
        self.cell_text.set_texts(texts or [], shown)
        self.rows_axis.set_tokens(list(row_labels) if row_names else [display_piece(t) for t in row_labels])
        self.cols_axis.set_tokens([display_piece(t) for t in col_labels])
        if shape_changed or not (rows and cols):
            self.plot.vb.setLimits(xMin=0, xMax=max(cols, 1), yMin=0, yMax=max(rows, 1),
                                   maxXRange=max(cols, 1), maxYRange=max(rows, 1))
            self.user_view = False  # a new shape: the whole map again
        self._square()

    def clear_data(self) -> None:
        self.set_data(np.zeros((0, 0)), [], [])
        self.select(None)

    def set_title(self, text: str, tip: str = "") -> None:
        """A title elided to the map's width (tooltip: `tip` or the title); "" hides it."""
        self.title.setText(text)
        self.title.setToolTip(tip or text)
        self.title.setVisible(bool(text))
        self._show_count()

    def set_axis_names(self, rows: str, cols: str) -> None:
        """Names beside and under the labels ("query", "key"); "" for none. Each is shown whole where
        it fits along its axis, else by its first words ("query" of "query (tokens: …)") with the
        whole name in the axis' tooltip (`_name_axes`, again at each resize)."""
        self.axis_titles = (rows, cols)
        self._name_axes(again=True)

    def _name_axes(self, again: bool = False) -> None:
        font = self.rows_axis.label.font()
        font.setPointSizeF(float(style.css_pt().removesuffix("pt")))  # the size the names are written at
        metrics, margin = QFontMetricsF(font), 2 * self.rows_axis.label.document().documentMargin()
        names = []
        for axis, title, length in ((self.rows_axis, self.axis_titles[0], self.plot.vb.height()),
                                    (self.cols_axis, self.axis_titles[1], self.plot.vb.width())):
            fits = metrics.horizontalAdvance(title) + margin <= length
            names.append(title if fits else title.split(" (")[0])
            axis.setToolTip("" if fits else title)
        if not again and tuple(names) == self.axis_names:
            return
        self.axis_names = tuple(names)
        for axis, text in zip((self.rows_axis, self.cols_axis), names):
            axis.setLabel(text or None, color=style.current().text, **{"font-size": style.css_pt()})
            axis.showLabel(bool(text))
        self._square()

    def set_colormap(self, cmap: pg.ColorMap) -> None:
        self.cmap = cmap
        self.image.setColorMap(cmap)
        if self.bar is not None:
            self.bar.setColorMap(cmap)

    def set_levels(self, levels: tuple[float, float]) -> None:
        self.levels = (float(levels[0]), float(levels[1]))
        self.image.setLevels(self.levels)
        if self.bar is not None:
            self.bar.setLevels(self.levels)

    def _on_user_view(self, *_) -> None:
        self.user_view = True

    def _on_view_resized(self, *_) -> None:
        self._name_axes()
        if not self.user_view and self.texts and not self.square:
            self._fit_view()

    @property
    def texts(self) -> list[list[list[str]]]:
        return self.cell_text.texts

    def mark_columns(self, cols) -> None:
        """Outline these columns with a dashed line (e.g. the [MASK] positions)."""
        path = QPainterPath()
        for c in sorted(set(cols)):
            path.addRect(QRectF(c, 0, 1, self.values.shape[0]))
        self.marks.setPath(path)

    def select(self, cell: tuple[int, int] | None) -> None:
        """Frame one cell (None: no frame)."""
        self.selected = cell
        self.selection.setVisible(cell is not None)
        if cell is not None:
            self.selection.setRect(QRectF(cell[1], cell[0], 1, 1))

    def mark(self, on: bool) -> None:
        """Frame the whole map in the selection colour (a grid's selected head); a style sheet
        re-polishes the frame, so only when it turns on or off."""
        if on != self.framed:
            self.framed = on
            style.set_sheet(self.map_frame, FRAME_SHEET % ("{selected}" if on else "transparent"))

    def zoom(self, factor: float, center: tuple[float, float] | None = None) -> None:
        """Zoom by `factor` (> 1: in) around `center` (x, y in cells), as the wheel does."""
        (x0, x1), (y0, y1) = self.plot.vb.viewRange()
        cx, cy = center or ((x0 + x1) / 2, (y0 + y1) / 2)
        self.user_view = True
        self.plot.vb.setRange(xRange=(cx - (x1 - x0) / factor / 2, cx + (x1 - x0) / factor / 2),
                              yRange=(cy - (y1 - y0) / factor / 2, cy + (y1 - y0) / factor / 2), padding=0)

    def reset_view(self) -> None:
        self.user_view = False
        self._fit_view()

    def _fit_view(self) -> None:
        """All rows; all columns, or where the cells' text would not fit, as many as show it around the
        selected cell (the rest a drag away)."""
        rows, cols = self.values.shape
        rows, cols = max(rows, 1), max(cols, 1)
        span = self._text_span(self.plot.vb.width(), self.plot.vb.height())
        start = 0
        if span < cols and self.selected is not None:
            start = min(max(0, self.selected[1] - span // 2), cols - span)
        self.plot.vb.setRange(xRange=(start, start + span), yRange=(0, rows), padding=0)

    def _text_span(self, view_width: float, view_height: float) -> int:
        """How many columns the view shows: all, or where the cells' text would not fit, as many as show it."""
        rows, cols = (max(n, 1) for n in self.values.shape)
        if not self.texts or self.square:
            return cols
        tall = view_height / rows
        block, number = self.cell_text.room()
        need = number if block <= tall else block if number <= tall else 0.0
        return min(cols, max(1, int(view_width // need))) if need else cols

    def _square(self) -> None:
        """Axes sized for their labels (upright or turned), the room square cells leave given to the
        margins (the axes against the map), room above a row lower than its label and beside an end
        column narrower than its label."""
        rows, cols = self.values.shape
        ci = self.canvas.ci
        left = self.rows_axis.extent(False) if rows else 10
        self.rows_axis.setWidth(int(left))
        line = QFontMetricsF(label_font()).height()
        width, height = self.canvas.width() - 2 - left, self.canvas.height() - 2  # (MapPlot's margins)
        bottom = self.cols_axis.extent(False) if cols else 10
        top = before = after = 0.0
        if rows and cols:
            tall = min(width / cols, (height - bottom) / rows) if self.square else (height - bottom) / rows
            top = max(0.0, (line - tall) / 2)  # (the first label is centred on row 0)
            height -= top
            shown = cols if self.square else self._text_span(width, height - bottom)
            most = (height - bottom) / rows if self.square else math.inf
            widths = self.cols_axis.widths() if shown == cols else [0.0]  # (the end labels at the edges)
            cell, before, after = edge_cells(width, shown, (widths[0] - 2 * left, widths[-1]), most)
            turned, _ = plan(self.cols_axis.widths(), line, cell, True)
            if turned:
                bottom = self.cols_axis.extent(True)
                cell, before, after = edge_cells(width, shown, (line - 2 * left, line if shown == cols else 0.0), most)
        self.cols_axis.setHeight(int(bottom))
        if not (rows and cols and self.square):
            ci.setContentsMargins(before, top, after, 0)
            if not self.user_view:
                ci.layout.activate()  # (the view box's size for the text's columns)
                self._fit_view()
            return
        cell = max(1.0, min(cell, (height - bottom) / rows))
        spare_w = max(0.0, width - cell * cols - before - after)
        spare_h = max(0.0, height - bottom - cell * rows)
        ci.setContentsMargins(before + spare_w / 2, top + spare_h / 2, after + spare_w / 2, spare_h / 2)
        if not self.user_view:
            self._fit_view()

    def label_counts(self) -> list[tuple[int, int]]:
        """(drawn, in view) for the row axis and the column axis, as last painted."""
        return [(a.drawn, a.in_view) for a in (self.rows_axis, self.cols_axis)]

    def _label_count(self) -> tuple[str, str]:
        """(short, full) count of the labels drawn, of the painted token axes (numbers are a scale)."""
        return label_count([(a.drawn, a.in_view, len(a.tokens)) for a in (self.rows_axis, self.cols_axis)
                            if a.drawn and not a.numeric])

    def count_text(self) -> str:
        """"" when every label is drawn, else "k of n labels" (n: those in view)."""
        return self._label_count()[1]

    def _show_count(self) -> None:
        """The count beside the title; where both do not fit, its short form ("6/11"): the title comes
        first. With neither, their line is the map's."""
        text, full = self._label_count()
        title = QFontMetricsF(self.title.font()).horizontalAdvance(self.title.text()) if not self.title.isHidden() else 0
        if title + QFontMetricsF(self.count.font()).horizontalAdvance(text) + 12 > self.width():
            text = text.removesuffix(" labels")
        if self.count.text() != text:
            self.count.setText(text)
            self.count.setToolTip(f"{full} drawn · wheel: zoom, drag to pan" if full else "")
        self.count.setVisible(bool(text) or not self.title.isHidden())  # no title, no count: the map has the line

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._show_count()

    def cell_at(self, scene_pos) -> tuple[int, int] | None:
        if not self.plot.vb.sceneBoundingRect().contains(scene_pos):
            return None
        pt = self.plot.vb.mapSceneToView(scene_pos)
        r, c = math.floor(pt.y()), math.floor(pt.x())
        rows, cols = self.values.shape
        return (r, c) if 0 <= r < rows and 0 <= c < cols else None

    def default_description(self, r: int, c: int) -> str:
        """Row and column token, the value and the cell's text."""
        row = self.row_labels[r] if r < len(self.row_labels) else str(r)
        col = self.col_labels[c] if c < len(self.col_labels) else str(c)
        blocked = self.allowed is not None and not bool(self.allowed[r, c])
        text = self.cell_text.texts[r][c] if self.cell_text.texts else []
        extra = f" — {' '.join(text)}" if text else ""
        v = float(self.values[r, c])
        value = "blocked by the mask" if blocked else "not computed yet" if math.isnan(v) else style.format_value(v)
        return f"{row!r} → {col!r}: {value}{extra}"

    def _hover(self, scene_pos) -> None:
        cell = self.cell_at(scene_pos)
        text = self.describe(*cell) if cell is not None else ""
        self.canvas.setToolTip(text)
        self.hovered.emit(text)

    def _click(self, event) -> None:
        cell = self.cell_at(event.scenePos())
        if cell is not None and event.button() == Qt.MouseButton.LeftButton:
            self.cellClicked.emit(*cell)
