"""The model view (like BertViz's): every layer × head of a kind as small heatmaps.

One composed image per kind (see `attention_mosaic`), created once and refilled in place,
so a 6 × 8 model's 144 maps of all three kinds repaint within a frame during training.
Clicking a map selects that layer and head; the wheel zooms and dragging pans for long inputs.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QFontMetricsF, QPen
from PySide6.QtWidgets import QGraphicsRectItem

from explorer.drawing import plot_style as st
from explorer.theme import notifier
from explorer.drawing.canvas_widget import CanvasWidget
from explorer.panels.attention.data import AttentionData
from explorer.drawing.heatmap_items import LEAST_HUG, MIN_LABEL_PT, PLOT_MARGINS, MapEdges, MaskOverlay, TokenAxis
from explorer.drawing.hug import hug_margins, not_reentrant
from explorer.drawing.mosaic import MosaicLayout, blocked_rects, compose, gap_for
from explorer.panels.attention.layer_pages import (BOX_PAD, NAME_LIFT, WRAPPED_BOX_PAD, frame_margin, head_note,
                                                   head_page, head_rows,
                                                   label_row_px, layer_page, lone_margin, lone_note, mosaic_cell_px,
                                                   names_all, page_note, wrapped_gap)
from explorer.drawing.indexed_image import colour_table, to_indices
from explorer.drawing.pooled_mosaic import average_down, compose_pooled, compose_region, overview_factor
from model.interpret.map_sums import pick_level

SCALE_RULE = "attention weight: 0–1 on every map"
WRAP_TOKENS = 32  # inputs up to this long may wrap a layer's heads into rows for larger maps
COLORBAR_PX, SIDE_MARGIN_PX = 110.0, 12.0  # the shared colour bar before it is laid out; the plots' margins
CANVAS_MARGIN_PX = 9.0  # pyqtgraph's GraphicsLayout around the plots
EDIT_SYMBOLS = {"zero": "0", "mean": "μ", "uniform": "≡"}  # as the head surgery panel writes them


def head_label(layer: int, head: int) -> str:
    """A head as the user reads it, counted from 1 ("L2 H3" is layer index 1, head index 2)."""
    return f"L{layer + 1} H{head + 1}"


SHORT_TITLES = {"encoder": "Encoder self-attention", "decoder_self": "Decoder masked self-attention",
                "cross": "Cross-attention (target × source)"}


class _KindPane:
    """One kind's mosaic: a plot with layer/head tick labels, the image, the hatch, a selection box."""

    def __init__(self, kind: str, cmap: pg.ColorMap):
        self.kind = kind
        # Keys under every column of maps, queries right of every row (every map of a kind has
        # the same query and key tokens), so a zoom into any map reads its tokens.
        self.key_axis, self.query_axis = TokenAxis("bottom"), TokenAxis("right")
        self.plot = pg.PlotItem(axisItems={"bottom": self.key_axis, "right": self.query_axis})
        self.plot.invertY(True)
        self.plot.setAspectLocked(True)  # square cells: a 9 × 9 map is a square, not a tall rectangle
        self.plot.setMenuEnabled(False)  # the "A" button (bottom left, after zooming) fits the view again
        self.plot.vb.setDefaultPadding(0.0)  # the fit is `frame`: the mosaic and its selection box's margin
        self.plot.showAxis("top")
        self.plot.showAxis("right")
        for name, label in (("left", "layer"), ("top", None), ("bottom", None), ("right", None)):
            st.style_axis(self.plot.getAxis(name), label, line=False)  # an axis line would run past the mosaic
        # heads are numbered "H1", "H2", … over the maps: no "head" title row (it cost a 24-token
        # map its labels on a 1280×720 projector)
        self.labels: tuple[list[str], list[str]] = ([], [])
        self.selection = (0, 0)
        st.set_title(self.plot, SHORT_TITLES[kind])
        self.image = pg.ImageItem(autoDownsample=True)  # a 512-token mosaic is drawn at screen resolution
        self._float_lut = cmap.getLookupTable(nPts=256)
        self._index_lut = colour_table(cmap)  # the averaged overview is drawn as colour indices
        self.image.setLookupTable(self._float_lut)
        self._indexed = False  # drawing colour indices (the overview), not weights (`_image_mode`)
        self.image.setLevels(st.WEIGHT_LEVELS)
        self.overview: np.ndarray | None = None  # the averaged overview's weights (NaN: gaps, blocked)
        # Zoomed into a mosaic too big for the screen (see pooled_mosaic): the visible cells at
        # the resolution the zoom needs, over the averaged overview.
        self.detail = pg.ImageItem()
        self.detail.setLookupTable(cmap.getLookupTable(nPts=256))
        self.detail.setZValue(1)
        self.detail.setVisible(False)
        self.mask = MaskOverlay()
        self.plot.addItem(self.mask)
        self.plot.addItem(self.image)
        self.plot.addItem(self.detail)
        self.edges = MapEdges()
        self.plot.addItem(self.edges, ignoreBounds=True)
        self.factor = 1  # cells per pixel of the overview image (1: drawn at full resolution)
        self.fit_factor = 1  # cells per screen pixel of the fitted mosaic (`factor` may be up to 4/3 of it)
        self._levels: dict = {}  # the drawn maps summed over blocks (`model.interpret.map_sums`), paged as they are
        self._detail_timer = QTimer(self.plot)  # dies with the plot: never fires into deleted items
        self._detail_timer.setSingleShot(True)
        self._detail_timer.setInterval(40)
        self._detail_timer.timeout.connect(self.refresh_detail)
        self.plot.vb.sigRangeChanged.connect(lambda *_: self._detail_timer.start())
        self.plot.vb.sigResized.connect(lambda *_: self._refit_overview())
        self.box = QGraphicsRectItem()
        pen = QPen(st.colour("selected"))
        pen.setWidthF(3.0)
        pen.setCosmetic(True)
        self.box.setPen(pen)
        self.box.setZValue(5)
        self.plot.addItem(self.box, ignoreBounds=True)  # where it is must not move the fit (nor the labels)
        # The fitted extent: the mosaic and half a gap around it (room for the selection box), the
        # same whatever is selected or edited, so a frame is drawn the same after any clicks.
        self.frame = QGraphicsRectItem()
        self.frame.setPen(QPen(Qt.PenStyle.NoPen))
        self.plot.addItem(self.frame)
        self.edit_marks: list = []  # outlines and labels of heads edited by head surgery
        self.layout: MosaicLayout | None = None
        self.mosaic: np.ndarray | None = None
        self._allowed_key: bytes | None = None
        # the page drawn: first layer, layers, rows of heads, first head and heads (0: all of them)
        self.first, self.count, self.wrap, self.head0, self.nheads = 0, 0, 1, 0, 0
        self.heads_total = 0
        self.head_names: list = []  # "H3" above each map when a layer's heads are wrapped
        self._source = None  # the layers `update` was given (the pooled overview is kept for them)
        self._pooled = None  # (source, allowed, page, overview) drawn last
        self._title = ""  # the title set last (a select that changes nothing skips the layout pass)
        st.span_title(self.plot, True)  # over the maps and their axes (the layer note left, the query tokens right)
        self.plot.geometryChanged.connect(self.hug)
        self.plot.vb.sigResized.connect(lambda *_: self.hug())  # also after a token axis took more room

    @not_reentrant
    def hug(self) -> None:
        """Margins inside the plot that give its view box the mosaic's shape, so the token labels
        right of and below the maps sit against them, not at the far edge of an aspect-locked plot
        wider (or taller) than its square-celled mosaic. Computed from the plot's size, its axes
        and title and the mosaic's shape alone, starting from no margins every time (never from an
        earlier fit): a window and a frame give the same picture whatever was clicked before."""
        self._fit_margins()

    def _fit_margins(self) -> None:
        grid = self.plot.layout
        if self.layout is None:
            grid.setContentsMargins(*PLOT_MARGINS)
            return
        fit = self.frame.rect()
        # the title spans the maps and their axes (`__init__`): held to the maps' width alone, a tall
        # wrapped mosaic's view box grew wider than its maps, its query labels 70 px right of them
        axes = sum(self.plot.getAxis(name).width() for name in ("left", "right") if self.plot.getAxis(name).isVisible())
        title = self.plot.titleLabel.item.boundingRect().width() + 8 - axes
        hug_margins(grid, self.plot.vb, fit.width() / fit.height(), (max(LEAST_HUG[0], title), LEAST_HUG[1]),
                    PLOT_MARGINS)

    def update(self, weights, allowed: np.ndarray, labels: tuple[list[str], list[str]] | None = None,
               page: tuple[int, int] | None = None, sums: dict | None = None) -> None:
        """`weights`: the (L, h, T_q, T_k) maps, or a `LayerStacks` entry's `layers` list to
        average from without stacking (see `AttentionData.weights`); `page`: (first layer,
        count[, rows of heads, first head, heads]) drawn (`layer_pages`), all by default;
        `sums`: the same maps summed over blocks (factor → `model.interpret.map_sums.SumLevel`), if the
        compute step made them."""
        if labels is not None:
            self.labels = (list(labels[0]), list(labels[1]))
        n_layers, self._source = len(weights), weights
        self.first, self.count, self.wrap, self.head0, self.nheads = \
            (tuple(page) + (1, 0, 0)[len(page) - 2:])[:5] if page else (0, n_layers, 1, 0, 0)
        self.heads_total = int(np.shape(weights[0])[0])
        weights = self._paged(weights)
        self._levels = {f: replace(level, sums=self._paged(level.sums)) for f, level in (sums or {}).items()}
        if self.wrap > 1:
            shape = weights.shape
            layout = MosaicLayout(*shape, wrapped_gap(shape[2], shape[3]))
        else:
            shape = (len(weights), *weights[0].shape) if isinstance(weights, list) else weights.shape
            layout = MosaicLayout.for_shape(shape)
        self._weights, self._allowed = weights, allowed
        self._draw_overview(layout)
        key = allowed.tobytes() + bytes(f"{shape} {self.first} {self.wrap} {self.head0} {n_layers}", "ascii")
        if layout != self.layout or key != self._allowed_key:  # geometry changed (rare)
            self.layout, self._allowed_key = layout, key
            self.mask.set_rects(blocked_rects(allowed, layout))
            self.edges.set_rects([(c, r, layout.t_k, layout.t_q) for l in range(layout.layers)
                                  for h in range(layout.heads) for r, c in (layout.origin(l, h),)])
            rows, cols = layout.shape
            wrapped = self.wrap > 1  # then each map is named above it ("H3"): a column holds several heads
            lone = self.nheads == 1  # one map a page: the title names its head, no row of head numbers
            self.plot.getAxis("left").setTicks([[] if wrapped else
                                                [(layout.origin(l, 0)[0] + layout.t_q / 2, str(self.first + l + 1))
                                                 for l in range(layout.layers)]])
            note = (lone_note(self.first, self.count, n_layers, self.head0, self.heads_total)
                    if lone else page_note(self.first, self.count, n_layers))
            # along a short mosaic (a beamer), without its "(Layer: pages)" hint: the hint ran
            # 90 px past a 268-px axis; the whole note stays in the axis' tooltip
            st.fit_axis_title(self.plot.getAxis("left"), tuple(dict.fromkeys((note, note.split(" (")[0]))))
            self.plot.getAxis("top").setTicks([[] if wrapped or lone else
                                               [(layout.origin(0, h)[1] + layout.t_k / 2, f"H{self.head0 + h + 1}")
                                                for h in range(layout.heads)]])
            self._name_maps()
            self.plot.vb.setLimits(xMin=-cols, xMax=2 * cols, yMin=-rows, yMax=2 * rows)
            # Fit the new mosaic now (a deferred auto-range does not run while the tab is hidden, so
            # the view kept the previous input's range), then keep fitting until the user zooms.
            m = (lone_margin(max(layout.t_q, layout.t_k)) if lone  # the box's margin and pen (none: no box)
                 else frame_margin(layout.gap, max(layout.t_q, layout.t_k)))
            top = max(m, layout.gap) if wrapped else m  # wrapped: the first row's names ("H1") stand above it
            self.frame.setRect(QRectF(-m, -top, cols + 2 * m, rows + m + top))
            self.plot.vb.setRange(self.frame.rect(), padding=0.0)
            self.plot.vb.enableAutoRange()
            self.hug()

    def _paged(self, layers):
        """The layers of the page drawn (per-layer (h, rows, cols) arrays, or an (L, h, rows, cols)
        array), laid out as the mosaic draws them: a slice of layers, of one layer's heads, or
        one layer's heads wrapped into rows. Maps and their block sums go through the same."""
        layers = layers[self.first:self.first + self.count]
        if self.nheads:  # a page of some of one layer's heads (`layer_pages.head_page`)
            layers = np.asarray(layers[0])[self.head0:self.head0 + self.nheads][None]
        if self.wrap > 1:  # one layer's heads in `wrap` rows (`layer_pages.head_rows`)
            one = np.asarray(layers[0])
            layers = one.reshape(self.wrap, one.shape[0] // self.wrap, *one.shape[1:])
        return layers

    def _draw_overview(self, layout: MosaicLayout) -> None:
        vb = self.plot.vb
        self.fit_factor = overview_factor(layout, vb.width(), vb.height())
        # From the block sums when the compute step made them: a factor they divide, ≤ 4/3 of the fit
        self.factor, level = pick_level(self.fit_factor, self._levels)
        rows, cols = layout.shape
        if self.factor == 1:
            self._pooled = self.overview = None  # (it held the last long input's maps: ~75 MB for MiniLM at 512 tokens)
            stacked = np.stack(self._weights) if isinstance(self._weights, list) else self._weights
            self.mosaic = compose(stacked, self._allowed, layout, out=self.mosaic)
            self._image_mode(indexed=False)
            self.image.setImage(self.mosaic, autoLevels=False, levels=st.WEIGHT_LEVELS)
            self.image.setRect(QRectF(0, 0, cols, rows))
        else:
            self.mosaic = None
            # The same maps at the same page and factor (a click on another head of a 512-token
            # frame redraws the pane) reuse the average: it reads every weight, ~20 ms for MiniLM.
            page = (self.first, self.count, self.wrap, self.head0, self.nheads, self.factor, layout)
            held = self._pooled
            if held is None or held[0] is not self._source or held[1] is not self._allowed or held[2] != page:
                self._pooled = held = (self._source, self._allowed, page,
                                       compose_pooled(self._weights, self._allowed, layout, self.factor, level))
            self.overview, width, height = held[3]
            self._image_mode(indexed=True)
            self.image.setImage(to_indices(self.overview, st.WEIGHT_LEVELS), autoLevels=False, levels=None)
            self.image.setRect(QRectF(0, 0, width, height))
        self.refresh_detail(layout)

    def _image_mode(self, indexed: bool) -> None:
        """Weights scaled by pyqtgraph at each paint (a full-resolution mosaic: it may be
        downsampled), or colour indices (the overview, already about one pixel a cell; indices
        must never be averaged)."""
        if self._indexed != indexed:
            self._indexed = indexed
            self.image.setAutoDownsample(not indexed)
            self.image.setLookupTable(self._index_lut if indexed else self._float_lut)

    def _refit_overview(self) -> None:
        """A resized view may need another averaging factor (a window made larger shows more)."""
        if self.layout is None or getattr(self, "_weights", None) is None:
            return
        vb = self.plot.vb
        if overview_factor(self.layout, vb.width(), vb.height()) != self.fit_factor:
            self._draw_overview(self.layout)

    def refresh_detail(self, layout: MosaicLayout | None = None) -> None:
        """Over an averaged overview, draw the cells in view at the resolution the zoom needs."""
        layout = layout or self.layout
        if layout is None or self.factor == 1 or getattr(self, "_weights", None) is None:
            self.detail.setVisible(False)
            return
        vb = self.plot.vb
        view = vb.viewRect()
        rows, cols = layout.shape
        r0, r1 = max(0, math.floor(view.top())), min(rows, math.ceil(view.bottom()))
        c0, c1 = max(0, math.floor(view.left())), min(cols, math.ceil(view.right()))
        px = min(vb.width() / max(view.width(), 1e-9), vb.height() / max(view.height(), 1e-9))
        need = max(1, math.floor(1.0 / max(px, 1e-9)))
        if need >= self.fit_factor or r1 <= r0 or c1 <= c0:  # (the overview: as fine as the fit, or up to 4/3 coarser)
            self.detail.setVisible(False)
            return
        crop = average_down(compose_region(self._weights, self._allowed, layout, (r0, r1), (c0, c1)), need)
        self.detail.setImage(crop, autoLevels=False, levels=st.WEIGHT_LEVELS)
        self.detail.setRect(QRectF(c0, r0, c1 - c0, r1 - r0))
        self.detail.setVisible(True)

    def slot(self, layer: int, head: int) -> tuple[int, int] | None:
        """(row, column) of a head's map in the mosaic drawn, or None when it is not on this page."""
        if self.layout is None:
            return None
        layer, head = layer - self.first, head - self.head0
        if self.nheads and not 0 <= head < self.nheads:
            return None  # on another page of heads
        if self.wrap > 1:
            if layer != 0:
                return None
            row, col = divmod(head, self.layout.heads)
        else:
            row, col = layer, head
        return (row, col) if 0 <= row < self.layout.layers and 0 <= col < self.layout.heads else None

    def head_at(self, row: int, col: int) -> tuple[int, int]:
        """(layer, head) of the map at a mosaic (row, column)."""
        if self.wrap > 1:
            return self.first, self.head0 + row * self.layout.heads + col
        return self.first + row, self.head0 + col

    def _name_maps(self) -> None:
        """Wrapped heads: each map's head named centred above it ("H3"), as the unwrapped row's
        column titles are (top-right, beside centred titles at the next width, read as misplaced)."""
        for item in self.head_names:
            self.plot.removeItem(item)
        self.head_names = []
        if self.layout is None or self.wrap <= 1:
            return
        for row in range(self.layout.layers):
            for col in range(self.layout.heads):
                _layer, head = self.head_at(row, col)
                r, c = self.layout.origin(row, col)
                name = pg.TextItem(f"H{head + 1}", color=st.colour("text"), anchor=(0.5, 1))
                name.setFont(st.font(st.TICK_PT, bold=True))
                name.setPos(c + self.layout.t_k / 2, r - self.layout.gap * NAME_LIFT)
                name.setZValue(6)
                self.plot.addItem(name, ignoreBounds=True)
                self.head_names.append(name)

    def select(self, layer: int, head: int) -> None:
        at = self.slot(layer, head)
        if at is None:
            self.box.setVisible(False)
            self.key_axis.set_tokens([])
            self.query_axis.set_tokens([])
            st.set_title(self.plot, SHORT_TITLES[self.kind])
            self._title = SHORT_TITLES[self.kind]
            return
        self.selection = at
        r, c = self.layout.origin(*at)
        q_labels, k_labels = self.labels
        lay = self.layout  # every map of a kind reads the same tokens: label each column and row of maps
        changed = self.key_axis.set_tokens(k_labels, numeric=False, period=lay.t_k + lay.gap, repeats=lay.heads)
        changed |= self.query_axis.set_tokens(q_labels, numeric=False, period=lay.t_q + lay.gap, repeats=lay.layers)
        # a page of some heads says which (a lone map's left axis does: `lone_note`)
        note = head_note(self.head0, self.nheads, self.heads_total) if self.nheads != 1 else ""
        # "selected": over a mosaic of many heads a bare "L1 H1" read as the name of all of them
        title = (f"{SHORT_TITLES[self.kind]} · {head_label(layer, head)}" + ("" if self.nheads == 1 else " selected")
                 + (f" ({note})" if note else ""))
        if title != self._title:
            st.set_title(self.plot, title)
            self._title, changed = title, True
        if changed:
            self.hug()  # the token axes' widths or the title changed (each costs a layout pass)
        pad = self._box_pad()
        self.box.setRect(QRectF(c - pad, r - pad, self.layout.t_k + 2 * pad, self.layout.t_q + 2 * pad))
        self.box.setVisible(self.nheads != 1)  # a lone map is the selected head (its title says so)

    def _box_pad(self) -> float:
        """A frame's distance from its map (selection, edit), in cells: wrapped into rows, less —
        the gap under a map holds the name of the map below, which a 1024-px beamer's frame touched."""
        return self.layout.gap * (WRAPPED_BOX_PAD if self.wrap > 1 else BOX_PAD)

    def mark_edited(self, edits: dict[tuple[int, int], str]) -> None:
        """Outline each edited head's map (dashed) and label it with its edit: the map shows the
        weights of a model with those heads changed (model.interpret.interventions)."""
        for item in self.edit_marks:
            self.plot.removeItem(item)
        self.edit_marks = []
        if self.layout is None:
            return
        pen = QPen(st.colour("accent_text"))
        pen.setWidthF(2.5)
        pen.setCosmetic(True)
        pen.setStyle(Qt.PenStyle.DashLine)
        lone = self.nheads == 1  # a lone map has no gap around it: its outline and label go inside
        pad = 0.0 if lone else self._box_pad()
        for (layer, head), op in edits.items():
            at = self.slot(layer, head)
            if at is None:
                continue
            r, c = self.layout.origin(*at)
            box = QGraphicsRectItem(QRectF(c - pad, r - pad, self.layout.t_k + 2 * pad, self.layout.t_q + 2 * pad))
            box.setPen(pen)
            box.setZValue(4)
            label = pg.TextItem(EDIT_SYMBOLS.get(op, op), color=st.colour("accent_text"), anchor=(0, 0) if lone else (0, 1),
                                fill=pg.mkBrush(st.colour("canvas")) if lone else None)
            label.setFont(st.font(st.TICK_PT, bold=True))
            label.setPos(c, r)
            label.setZValue(6)
            for item in (box, label):
                self.plot.addItem(item, ignoreBounds=True)
                self.edit_marks.append(item)

    def locate(self, scene_pos):
        if self.layout is None or not self.plot.vb.sceneBoundingRect().contains(scene_pos):
            return None
        pt = self.plot.vb.mapSceneToView(scene_pos)
        found = self.layout.locate(pt.y(), pt.x())
        return None if found is None else (*self.head_at(found[0], found[1]), *found[2:])


class AttentionGrid(CanvasWidget):
    """All heads of the shown kinds. Signals: cellClicked(kind, layer, head), hovered(text)."""

    cellClicked = Signal(str, int, int)
    hovered = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self._cmap = st.weight_cmap()
        self.panes: dict[str, _KindPane] = {}
        self.shown: list[str] = []
        self.colorbar = st.colorbar(self._cmap, st.WEIGHT_LEVELS, SCALE_RULE)
        self.data: AttentionData | None = None
        self.edits: dict = {}  # {(kind, layer, head): op} of the frame drawn
        self._selection = ("encoder", 0, 0)
        self.canvas.scene().sigMouseClicked.connect(self._on_click)
        self.canvas.scene().sigMouseMoved.connect(self._on_move)
        notifier().changed.connect(self._recolour_names)  # a bound method: disconnected with the grid

    def _recolour_names(self, _theme: str) -> None:
        """The wrapped maps' head names in the new theme's text colour (a TextItem keeps its own)."""
        for pane in self.panes.values():
            for name in pane.head_names:
                name.setColor(st.colour("text"))

    def pane(self, kind: str) -> _KindPane:
        if kind not in self.panes:  # created once per kind, never per frame
            self.panes[kind] = _KindPane(kind, self._cmap)
        return self.panes[kind]

    def show_kinds(self, kinds: list[str]) -> None:
        """Lay out one pane per kind, side by side, and a shared colour bar."""
        if list(kinds) == self.shown:
            return
        self.canvas.ci.clear()
        # A fresh grid: Qt's grid layout keeps the geometry of columns it no longer uses, so
        # going back from every kind to one left the one grid squeezed to the right.
        grid = pg.GraphicsLayout()
        self.canvas.setCentralItem(grid)
        self.canvas.ci = grid
        for i, kind in enumerate(kinds):
            grid.addItem(self.pane(kind).plot, row=0, col=i)
        grid.addItem(self.colorbar, row=0, col=len(kinds))
        # items out of every scene at the last theme change (the colour bar, before the first
        # input; a kind's pane while another was shown) kept the old theme's colours: dark on dark
        st.restyle_view(self.canvas)
        self.shown = list(kinds)
        if self.data is not None:
            self.set_data(self.data)

    def set_data(self, data: AttentionData) -> None:
        self.data = data
        for kind in self.shown:
            pane = self.pane(kind)
            if kind in data.weights:
                layers = data.weights.layers(kind)
                selected = self._selection[1] if self._selection[0] == kind else 0
                head = self._selection[2] if self._selection[0] == kind else 0
                page = self._page(kind, len(layers), selected, head)
                pane.update(layers, data.allowed[kind], data.labels[kind], page, data.sums.get(kind))
            else:  # nothing of this kind: no maps, no hatch, no outlines (drawn afresh when it returns)
                pane.image.clear()
                pane._pooled = pane.overview = None
                pane._levels = {}  # (a long input's block sums: ~24 MB for MiniLM at 512 tokens)
                pane.mask.set_rects([])
                pane.edges.set_rects([])
                pane.layout = pane._allowed_key = None
                pane._name_maps()  # (none without a layout)
                for name in ("left", "top"):
                    pane.plot.getAxis(name).setTicks([[]])
            pane.mark_edited({(l, h): op for (k, l, h), op in self.edits.items() if k == kind})
        self.select(*self._selection)

    def set_edits(self, edits: dict) -> None:
        """The heads the drawn frame was computed with edited (outlined on the next `set_data`)."""
        self.edits = dict(edits)

    def select(self, kind: str, layer: int, head: int) -> None:
        self._selection = (kind, layer, head)
        if self.data is not None and kind in self.shown and self._page_changed():
            self.set_data(self.data)  # draws the page that holds the selected layer, then selects
            return
        for k in self.shown:
            pane = self.pane(k)
            if k == kind:
                pane.select(layer, head)
            else:
                pane.box.setVisible(False)

    def _page_changed(self) -> bool:
        """Would the selection or the room on screen draw another page of layers than is drawn?"""
        kind, layer, _head = self._selection
        pane = self.panes.get(kind)
        if pane is None or pane.layout is None or kind not in self.shown or kind not in self.data.weights:
            return False
        n = len(self.data.weights.layers(kind))
        return self._page(kind, n, layer, self._selection[2]) != (pane.first, pane.count, pane.wrap, pane.head0,
                                                                   pane.nheads)

    def _page(self, kind: str, n_layers: int, layer: int, head: int = 0) -> tuple[int, int, int, int, int]:
        """(first layer, layers, rows of heads, first head, heads or 0 for all): the page of layers
        whose rows are tall enough to name each of the frame's query tokens; a page of one layer
        whose maps side by side are too narrow for their key labels wraps its heads into rows
        (`head_rows`); an input of at most WRAP_TOKENS tokens for which that is not enough either
        shows a page of the layer's heads that holds `head` (`head_page`), every token named."""
        pane = self.pane(kind)
        labels = self.data.labels.get(kind) if self.data is not None else None
        t_q, t_k = (len(labels[0]), len(labels[1])) if labels else (0, 0)
        row = label_row_px(t_q, pane.query_axis.min_cell_px())
        chrome, wrapped_chrome = self._chrome_px(pane, False), self._chrome_px(pane, True)
        first, count = layer_page(n_layers, layer, self.height(), row, chrome)
        wrap, head0, nheads = 1, 0, 0
        if t_q and t_k and len(self.shown) == 1:
            heads = self.data.weights.layers(kind)[first].shape[0]
            # from the fonts, never from the axes as drawn now: the left axis is narrower when the
            # heads are wrapped (no layer numbers), and a measure of it flipped the page back and forth
            left_axis = 2.2 * QFontMetricsF(st.font(st.LABEL_PT)).height() + 10  # its title and layer numbers
            room_w = (self.width() - max(self.colorbar.width(), COLORBAR_PX) - left_axis
                      - pane.query_axis.extent_px(MIN_LABEL_PT, False) - 2 * SIDE_MARGIN_PX)
            need_q, need_k = pane.query_axis.min_cell_px(), pane.key_axis.min_cell_px()
            cell = mosaic_cell_px(count, heads, t_q, t_k, gap_for(t_q, t_k), room_w, self.height() - chrome)
            layer = max(0, min(layer, n_layers - 1))
            if cell < max(need_q, need_k) and count > 1:  # the rows' estimate was short: one layer a page?
                one = mosaic_cell_px(1, heads, t_q, t_k, gap_for(t_q, t_k), room_w, self.height() - chrome)
                if one >= max(need_q, need_k):
                    first, count, cell = layer, 1, one
            if cell < max(need_q, need_k):  # too narrow for every key label: one layer, its heads in rows?
                gap, room_h = wrapped_gap(t_q, t_k), self.height() - wrapped_chrome
                rows = head_rows(heads, t_q, t_k, room_w, room_h, need_q, need_k, gap)
                wrapped = mosaic_cell_px(rows, heads // rows, t_q, t_k, gap, room_w, room_h)
                # when that names every token, or a short input's maps grow by a third (more of
                # their labels drawn); a long input keeps its overview of every layer
                every = names_all(wrapped, max(need_q, need_k), rows)
                if rows > 1 and (every or (max(t_q, t_k) <= WRAP_TOKENS and wrapped >= 1.3 * cell)):
                    first, count, wrap = layer, 1, rows
                if not every and max(t_q, t_k) <= WRAP_TOKENS:  # still thinned: fewer heads a page
                    page = head_page(heads, head, t_q, t_k, room_w, self.height() - chrome, room_h, max(need_q, need_k))
                    if page is not None and page[1] < heads:
                        first, count = layer, 1
                        head0, nheads, wrap = page
        return first, count, wrap, head0, nheads

    @staticmethod
    def _chrome_px(pane: _KindPane, wrapped: bool) -> float:
        """The canvas height that is not maps, from the fonts: the title, the head numbers over
        the maps (none when wrapped: each map is named in the gap above it), the key tokens
        under them at the legible minimum, the plot's and the canvas' margins."""
        title = QFontMetricsF(st.font(st.TITLE_PT)).height() * 1.25 + 4
        numbers = 0.0 if wrapped else QFontMetricsF(st.font(st.TICK_PT)).height() + 12
        need = pane.key_axis.min_cell_px()
        keys = pane.key_axis.extent_px(MIN_LABEL_PT, pane.key_axis.fit_for(need).rotated)
        return title + numbers + keys + 2 * CANVAS_MARGIN_PX + 2 * PLOT_MARGINS[1] + 2

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        if self.data is not None and self._page_changed():  # more or fewer rows of maps fit now
            self.set_data(self.data)

    def _hit(self, scene_pos):
        for kind in self.shown:
            found = self.pane(kind).locate(scene_pos)
            if found is not None:
                return kind, found
        return None

    def _on_click(self, event) -> None:
        hit = self._hit(event.scenePos())
        if hit is not None and event.button() == pg.QtCore.Qt.MouseButton.LeftButton:
            kind, (layer, head, _q, _k) = hit
            self.cellClicked.emit(kind, layer, head)

    def _on_move(self, scene_pos) -> None:
        hit = self._hit(scene_pos)
        if hit is None or self.data is None:
            self.hovered.emit("")
            return
        kind, (layer, head, q, k) = hit
        qs, ks = self.data.labels[kind]
        if not self.data.allowed[kind][q, k]:
            value = "blocked by the mask (weight exactly 0)"
        else:
            value = f"{self.data.weights[kind][layer, head, q, k]:.4f}"
        self.hovered.emit(f"{value} · L{layer + 1} H{head + 1}: query {q} “{qs[q]}” → key {k} “{ks[k]}” · click to open")
