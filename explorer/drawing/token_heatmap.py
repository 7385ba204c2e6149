"""`TokenHeatmap`: a [query, key] matrix labelled with tokens, for the decoding panel.

The decoding panel draws the causal mask and the attention of one step inside a fixed
T×T frame, so the lecturer sees the grid *grow* by one row and one column per step
(Section 3.2.3's "prevent leftward information flow"). Cells a mask blocks are drawn in
the shared grey hatching of `explorer.style`; the current query row gets an accent frame.
Plot items are created once and updated in place.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsPathItem, QGraphicsRectItem, QVBoxLayout, QWidget

from explorer import style
from explorer.drawing.heatmap_items import LEAST_HUG, MIN_LABEL_PT, PLOT_MARGINS, TokenAxis
from explorer.drawing.elided_label import ElidedLabel
from explorer.drawing.hug import hug_margins, not_reentrant

RANGE_PADDING = 0.02  # of the frame, around the map: its outline stays visible
PLOT_MARGIN_PX = 3  # pyqtgraph's plot item and view margins, each side (measured: 1–2 px)


def display_piece(piece: str) -> str:
    """A token as a tick label: spaces made visible, long words shortened."""
    piece = piece.replace(" ", "␣")
    return piece if len(piece) <= 9 else piece[:8] + "…"


def fitted_ticks(labels: list[str], slot_px: float, char_px: float, offset: float = 0.0) -> list[tuple[float, str]]:
    """Tick labels that fit `slot_px` pixels each: shortened with … (or to their first
    character), and when not even one character fits, only every k-th label — pyqtgraph
    would otherwise draw them on top of each other."""
    fit = int((slot_px - 2) / char_px)
    step = 1
    if fit < 1:
        step = int(np.ceil(2 * char_px / max(slot_px, 1.0)))
        fit = 1
    out = []
    for i, label in enumerate(labels):
        if i % step:
            continue
        text = display_piece(label)
        if len(text) > fit:
            text = text[: fit - 1] + "…" if fit >= 2 else text[0]
        out.append((i + offset, text))
    return out


def _blocked_path(blocked: np.ndarray) -> QPainterPath:
    """One path covering every True cell (merged per row into runs, so it paints fast)."""
    path = QPainterPath()
    for r, row in enumerate(blocked):
        c = 0
        while c < len(row):
            if row[c]:
                start = c
                while c < len(row) and row[c]:
                    c += 1
                path.addRect(QRectF(start, r, c - start, 1))
            else:
                c += 1
    return path


def _staircase(rows: int, cols: int) -> QPainterPath:
    """The edge between j <= i (allowed) and j > i (the future) of a causal mask."""
    path = QPainterPath()
    n = min(rows, cols)
    if n == 0:
        return path
    path.moveTo(1, 0)
    for i in range(n - 1):
        path.lineTo(i + 1, i + 1)
        path.lineTo(i + 2, i + 1)
    path.lineTo(n, n)
    return path


class _FittingPlot(pg.PlotWidget):
    """A PlotWidget that refits its grid after every resize."""

    resized = None

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self.resized is not None:
            self.resized()


class TokenHeatmap(QWidget):
    """An image of a (rows × cols) matrix in a (frame_rows × frame_cols) token grid, titled.

    The title is a QLabel above the plot, not the plot's own title: pyqtgraph makes a plot at
    least as wide as its title, which would crop a narrow map.
    """

    def __init__(self, title: str = "", colormap: pg.ColorMap | None = None, parent=None):
        """The map asks for no room: where its cells are too small for every label even at the
        legible minimum, the axes show every k-th label and say so (zoom brings them back)."""
        super().__init__(parent)
        self.title = ElidedLabel(title)
        self.title.setFont(style.font(style.BASE_POINT_SIZE))
        self.rows_axis, self.cols_axis = TokenAxis("left"), TokenAxis("bottom")
        self.plot_widget = _FittingPlot(axisItems={"left": self.rows_axis, "bottom": self.cols_axis})
        self.plot_widget.setMinimumSize(110, 110)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.title)
        layout.addWidget(self.plot_widget, 1)
        plot = style.still_plot(self.plot_widget.getPlotItem())
        plot.invertY(True)  # query 0 at the top, as in the paper's figures
        plot.setAspectLocked(True)  # rows and columns are both tokens: square cells
        for name in ("left", "bottom"):
            axis = plot.getAxis(name)
            axis.setStyle(tickFont=style.font(style.SMALL_POINT_SIZE, mono=True), tickLength=0)
            axis.setTextPen(style.TEXT)
        self.image = pg.ImageItem()
        self.image.setColorMap(colormap or style.colormap(style.SEQUENTIAL))
        plot.addItem(self.image)
        self.hatch_fill = QGraphicsPathItem()  # grey under the hatch lines
        self.hatch_fill.setPen(QPen(Qt.NoPen))
        self.hatch_fill.setBrush(QBrush(style.MASKED))
        self.hatch = QGraphicsPathItem()
        self.hatch.setPen(QPen(Qt.NoPen))
        self.hatch.setBrush(QBrush(style.MASKED_HATCH, Qt.BDiagPattern))
        plot.addItem(self.hatch_fill)
        plot.addItem(self.hatch)
        self.row_frame = QGraphicsRectItem()
        pen = QPen(style.ACCENT, 3)
        pen.setCosmetic(True)
        self.row_frame.setPen(pen)
        self.row_frame.setZValue(10)
        plot.addItem(self.row_frame)
        self.outline = QGraphicsRectItem()  # the frame of the full grid, so growth is visible
        outline_pen = QPen(style.MUTED, 1, Qt.DashLine)
        outline_pen.setCosmetic(True)
        self.outline.setPen(outline_pen)
        plot.addItem(self.outline)
        self.boundary = QGraphicsPathItem()  # the causal mask's edge, drawn when the mask is off
        boundary_pen = QPen(style.ERROR, 3, Qt.DashLine)
        boundary_pen.setCosmetic(True)
        self.boundary.setPen(boundary_pen)
        self.boundary.setZValue(9)
        plot.addItem(self.boundary)
        self.separator = QGraphicsPathItem()  # after <bos> + prompt: given tokens | generated ones
        separator_pen = QPen(style.colour("prompt"), 3)  # a decoder-only model's given prompt
        separator_pen.setCosmetic(True)
        self.separator.setPen(separator_pen)
        self.separator.setZValue(8)
        plot.addItem(self.separator)
        self.separator_at: int | None = None
        # what an empty map is waiting for ("drawn when training ends"), in its middle: an empty
        # frame under a title looked like a map that failed
        self.note = pg.TextItem("", anchor=(0.5, 0.5))
        self.note.setFont(style.font(style.SMALL_POINT_SIZE))
        self.note.hide()
        plot.addItem(self.note)
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        self.blocked: np.ndarray | None = None
        self.highlight_row: int | None = None
        self._row_labels: list[str] = []
        self._col_labels: list[str] = []
        self._frame = (1, 1)
        self.plot_widget.scene().sigMouseMoved.connect(self._hover)
        self.plot_widget.resized = self._fit
        plot.getViewBox().sigResized.connect(lambda *_: self._hug())

    # -- data ---------------------------------------------------------------------------------
    def set_data(self, matrix: np.ndarray, row_labels: list[str], col_labels: list[str],
                 frame: tuple[int, int] | None = None, blocked: np.ndarray | None = None,
                 highlight_row: int | None = None, levels: tuple[float, float] = (0.0, 1.0),
                 boundary: bool = False, separator: int | None = None) -> None:
        """Show `matrix` (r × c) in the top-left of a `frame` grid (default: its own size);
        `blocked` (r × c bool) cells are hatched; `highlight_row` is framed in the accent colour;
        `boundary` draws where the causal mask would cut (everything right of it is the future);
        `separator` (a decoder-only model's <bos> + prompt length) draws a line below that many
        rows and right of that many columns: the given prompt above/left, generated text after."""
        matrix = np.asarray(matrix, dtype=np.float32)
        rows, cols = matrix.shape
        fr, fc = frame or (rows, cols)
        self.matrix, self.blocked, self.highlight_row = matrix, blocked, highlight_row
        self._row_labels, self._col_labels = list(row_labels), list(col_labels)
        if rows and cols:
            self.image.setImage(matrix, levels=levels, autoLevels=False)
            self.image.setRect(QRectF(0, 0, cols, rows))
        self.image.setVisible(bool(rows and cols))
        path = _blocked_path(blocked) if blocked is not None else QPainterPath()
        self.hatch.setPath(path)
        self.hatch_fill.setPath(path)
        if highlight_row is not None and 0 <= highlight_row < rows:
            self.row_frame.setRect(QRectF(0, highlight_row, cols, 1))
            self.row_frame.setVisible(True)
        else:
            self.row_frame.setVisible(False)
        self.outline.setRect(QRectF(0, 0, fc, fr))
        self.boundary.setPath(_staircase(rows, cols) if boundary else QPainterPath())
        self.separator_at = separator if separator else None
        line = QPainterPath()
        if self.separator_at is not None:
            if self.separator_at < fr:
                line.moveTo(0, self.separator_at)
                line.lineTo(fc, self.separator_at)
            if self.separator_at < fc:
                line.moveTo(self.separator_at, 0)
                line.lineTo(self.separator_at, fr)
        self.separator.setPath(line)
        self.rows_axis.set_tokens([display_piece(p) for p in row_labels[:fr]], numeric=False)
        self.cols_axis.set_tokens([display_piece(p) for p in col_labels[:fc]], numeric=False)
        self._frame = (max(fr, 1), max(fc, 1))
        self._show_note("")
        self._fit()

    def least_size(self, most_tokens: int = 32, width: float | None = None) -> tuple[float, float]:
        """The widget size (width, height) in which every token label of the frame (up to
        `most_tokens` a side) is drawn at the legible minimum (turned if need be), in square
        cells, its title on as many lines as it takes in `width` (as drawn now when None: a
        layout weighing other widths must not count the lines the current one gave it). Asked
        by the layout (`PlotFlow`), never set as a minimum: a minimum would make the panel's
        scroll area grow instead of the maps reflowing to fit the screen."""
        fr, fc = (min(n, most_tokens) for n in self._frame)
        cell = max(self.rows_axis.min_cell_px(), self.cols_axis.min_cell_px())  # square cells
        left = self.rows_axis.extent_px(MIN_LABEL_PT, rotated=False)
        bottom = self.cols_axis.extent_px(MIN_LABEL_PT, rotated=self.cols_axis.fit_for(cell).rotated)
        pad = 1 + 2 * RANGE_PADDING  # setRange's padding on each side
        chrome = 2 * PLOT_MARGIN_PX
        title = self.title.sizeHint().height()
        if width is not None:  # the lines it would take there, not the ones it has now
            drawn = self.title.text().count("\n") + 1
            title += (self.title.lines_at(width) - drawn) * self.title.fontMetrics().lineSpacing()
        return (fc * cell * pad + left + chrome, fr * cell * pad + bottom + chrome + title)

    def _fit(self) -> None:
        """Show the whole frame (the axes fit their labels to the cells they get)."""
        fr, fc = self._frame
        plot = self.plot_widget.getPlotItem()
        plot.getViewBox().setRange(xRange=(0, fc), yRange=(0, fr), padding=RANGE_PADDING)
        self._hug()

    @not_reentrant
    def _hug(self) -> None:
        """The frame's shape for the plot: its token labels against its rows and columns, not at
        the far edges of a wide (or tall) cell of the flow. Again whenever the view box is resized
        (a token axis takes its width for its labels' font only when it is drawn)."""
        fr, fc = self._frame
        plot = self.plot_widget.getPlotItem()
        hug_margins(plot.layout, plot.getViewBox(), fc / fr, LEAST_HUG, PLOT_MARGINS)

    def set_title(self, title: str) -> None:
        self.title.setText(title)

    def clear_data(self, note: str = "") -> None:
        """No map; `note` (may be "") says in its middle what it waits for."""
        self.set_data(np.zeros((0, 0)), [], [])
        self._show_note(note)

    def _show_note(self, note: str) -> None:
        """The note alone in an empty map, or no note: the bare axes of an empty 1 × 1 frame, two
        lines at odd places beside the note, looked like a broken drawing."""
        plot = self.plot_widget.getPlotItem()
        for name in ("left", "bottom"):
            if plot.getAxis(name).isVisible() == bool(note):
                plot.showAxis(name, not note)
        if note:
            self.note.setText(note, color=style.current().muted)  # (the theme's now: set again on a change)
            self.note.setPos(0.5, 0.5)  # the middle of the empty 1 × 1 frame
        self.note.setVisible(bool(note))

    # -- hover readout -----------------------------------------------------------------------
    def _hover(self, scene_pos) -> None:
        pos = self.plot_widget.getPlotItem().getViewBox().mapSceneToView(scene_pos)
        r, c = int(np.floor(pos.y())), int(np.floor(pos.x()))
        if 0 <= r < self.matrix.shape[0] and 0 <= c < self.matrix.shape[1]:
            q = self._row_labels[r] if r < len(self._row_labels) else str(r)
            k = self._col_labels[c] if c < len(self._col_labels) else str(c)
            blocked = self.blocked is not None and bool(self.blocked[r, c])
            note = " (blocked by the mask)" if blocked else ""
            self.plot_widget.setToolTip(
                f"query {r} {q!r} → key {c} {k!r}: {style.format_value(float(self.matrix[r, c]))}{note}")
        else:
            self.plot_widget.setToolTip("")
