"""Attention maps: every head of every layer, one head large, the line view, and the derived maps
(mean over heads, rollout), for the three kinds of attention of Section 3.2.3. The selected head
is the session's; `show_result` also takes a bare Trace (a training run's snapshots)."""
from __future__ import annotations

import math
from functools import partial

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QCheckBox, QLabel, QScrollArea, QStackedWidget, QTabWidget, QWidget

from explorer import style
from explorer.deferred_pages import DeferredPages
from explorer.drawing import plot_style as st
from explorer.drawing.heatmap import Heatmap
from explorer.drawing.heatmap_grid import MAPS_PER_TURN, HeatmapGrid, least_side
from explorer.panels.attention.head_picker import HeadPicker, PickedHead
from explorer.panels.attention.lines import LineView
from explorer.panels.attention.view_tabs import ViewTabs
from explorer.panels.base import Panel
from explorer.panels.layouts import column, row
from explorer.state import SessionState
from explorer.theme import set_sheet, set_text
from model.inference.labels import grid_layout
from model.interpret.attention_maps import (
    MASK_TIP,
    ROLLOUT_KINDS,
    ROLLOUT_SOURCE,
    ROLLOUT_UNDEFINED,
    AttentionData,
    cell_text,
    head_label,
    mean_over_heads,
    rollout,
)
from model.interpret.surgery_labels import SYMBOLS
from model.nn.kinds import AttentionKind

VIEWS = ("grid", "single", "lines", "derived")
VIEW_TITLES = ("All heads", "One head", "Lines", "Mean && rollout (derived)")
MASK_SWATCH = "<span style='background:{masked};color:{mask_legend_text}'>&nbsp;╱╱╱&nbsp;</span>"
MASK_LEGENDS = (MASK_SWATCH + "&nbsp;masked (not a 0 weight)", MASK_SWATCH + "&nbsp;masked", MASK_SWATCH)  # longest first
SCALE_RULE = "attention weight: 0–1 on every map"
SCALE_NAME = "attention weight (0–1)"
ALL_LAYERS_MAX = 48  # maps drawn at once before the grid shows one layer at a time


class AttentionGrid(HeatmapGrid):
    """All heads of one layer of the shown kinds; `selection()` is the (kind, layer, head) selected.
    Signals: cellClicked(kind, layer, head), hovered(text)."""

    cellClicked = Signal(str, int, int)

    def __init__(self, selection=lambda: ("encoder", 0, 0), parent=None):
        super().__init__(st.weight_cmap(), st.WEIGHT_LEVELS, SCALE_RULE, parent)
        self.selection = selection
        self.shown: list[str] = []
        self.data: AttentionData | None = None
        self.edits: dict = {}  # {(kind, layer, head): op} of the frame drawn
        self.drawn: dict[str, list[int]] = {}  # kind → the layers its maps show
        self._sections: list[tuple[str, int]] = []  # (kind, layer) of each section drawn, in order
        self.mapClicked.connect(lambda section, head: self.cellClicked.emit(*self._sections[section], head))
        self.mapsMade.connect(lambda: self.set_data(self.data) if self.data is not None else None)

    def show_kinds(self, kinds: list[str], edits: dict | None = None) -> None:
        """The kinds drawn, a section each, and the heads the frame edited (marked in their titles)."""
        self.shown, self.edits = list(kinds), dict(edits or {})
        st.restyle_view(self.bar_canvas)  # a bar built before a theme change wears the new theme

    def layer_of(self, kind: str) -> int:
        layer = self.selection()[1]
        return max(0, min(layer, self.data.n_layers(kind) - 1)) if self.data is not None else 0

    def layers_drawn(self, kind: str) -> list[int]:
        """Every layer of `kind` where all the shown kinds' maps fit without scrolling (at least
        `least_side` each), else the selected layer: its heads get the room."""
        data = self.data
        counts = [data.n_heads(k) for k in self.shown if k in data.weights for _ in range(data.n_layers(k))]
        return list(range(data.n_layers(kind))) if self.fits(counts) else [self.layer_of(kind)]

    def fits(self, counts: list[int]) -> bool:
        """Whether sections of `counts` maps all fit the grid's room at `least_side` or more."""
        view, least = self.scroll_area.viewport().size(), least_side()
        heading = QFontMetricsF(style.font(style.BASE_POINT_SIZE, bold=True)).height() + 6
        cols, side = grid_layout(counts, view.width(), view.height(), heading, least, self.grid.spacing())
        rows = sum(math.ceil(c / cols) for c in counts)
        return sum(counts) <= ALL_LAYERS_MAX and rows * (side + self.grid.spacing()) + len(counts) * heading <= view.height()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        if self.data is not None and any(self.layers_drawn(k) != layers for k, layers in self.drawn.items()):
            self.set_data(self.data)  # room for every layer now, or no longer

    def set_data(self, data: AttentionData) -> None:
        self.data = data
        kinds = [k for k in self.shown if k in data.weights]
        self.drawn = {kind: self.layers_drawn(kind) for kind in kinds}
        keys = [(kind, layer) for kind in kinds for layer in self.drawn[kind]]
        sections = []
        for kind, layer in keys:
            titles = [head_label(layer, h) + self._edit_mark(kind, layer, h) for h in range(data.n_heads(kind))]
            sections.append((f"{AttentionKind(kind).title} · layer {layer + 1}", titles))
        for (kind, layer), maps in zip(keys, self.set_sections(sections, at_most_new=MAPS_PER_TURN)):
            queries, tokens = data.labels[kind]
            heads = data.weights.layers(kind)[layer]
            for h, m in enumerate(maps):
                m.set_data(heads[h], queries, tokens, allowed=data.allowed[kind])
                what = f"{head_label(layer, h)} weight"
                m.describe = lambda q, k, m=m, what=what: cell_text(m, q, k, what, extra=" · click to open")
        self._sections = keys
        self._mark_selection()

    def _edit_mark(self, kind: str, layer: int, head: int) -> str:
        op = self.edits.get((kind, layer, head))
        return f" ({SYMBOLS[op]})" if op else ""

    def show_selection(self) -> None:
        """Frame the selected head; a layer not drawn draws that layer's heads."""
        kind = self.selection()[0]
        if self.data is not None and kind in self.drawn and self.layer_of(kind) not in self.drawn[kind]:
            self.set_data(self.data)
            return
        self._mark_selection()

    def _mark_selection(self) -> None:
        kind, _layer, head = self.selection()
        for key, maps in zip(self._sections, self.maps):
            for h, m in enumerate(maps):
                m.mark(key == (kind, self.layer_of(kind)) and h == head)

    def map_of(self, kind: str, head: int, layer: int | None = None):
        key = (kind, self.layer_of(kind) if layer is None else layer)
        self.make_all_maps()  # (a map still to be made: made and drawn now)
        return self.maps[self._sections.index(key)][head]


class DerivedView(QWidget):
    """Left: mean_h A of the selected layer. Right: rollout through layers 1..selected."""

    hovered = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.mean = Heatmap(colormap=st.weight_cmap(), levels=st.WEIGHT_LEVELS, numbers=True)
        self.rollout = Heatmap(colormap=st.weight_cmap(), levels=st.WEIGHT_LEVELS, colour_bar=True, numbers=True)
        self.note = QLabel(ROLLOUT_UNDEFINED, wordWrap=True, alignment=Qt.AlignmentFlag.AlignCenter,
                           font=st.font(st.LABEL_PT))
        set_sheet(self.note, "background: {canvas}; color: {muted}; padding: 24px;")
        self.right = QStackedWidget()
        self.right.addWidget(self.rollout)
        self.right.addWidget(self.note)
        row((self.mean, 1), (self.right, 1), parent=self, margins=0)
        self.mean.describe = lambda q, k: cell_text(self.mean, q, k, "mean over heads", 6)
        self.rollout.describe = lambda q, k: cell_text(self.rollout, q, k, "rollout", 6, ROLLOUT_SOURCE)
        for heatmap in (self.mean, self.rollout):
            heatmap.hovered.connect(self.hovered)

    def set_data(self, data: AttentionData, kind: str, layer: int) -> None:
        if kind not in data.weights or layer >= data.n_layers(kind):
            self.mean.clear_data()
            self.rollout.clear_data()
            return
        w, allowed = data.weights[kind], data.allowed[kind]
        q_labels, k_labels = data.labels[kind]
        q_name, k_name = data.axis_names(kind)
        self.mean.set_data(mean_over_heads(w[layer]), q_labels, k_labels, allowed=allowed)
        self.mean.set_axis_names(f"query ({q_name})", f"key ({k_name})")
        self.mean.set_title(f"Derived: mean of {w.shape[1]} heads, L{layer + 1}")
        if kind in ROLLOUT_KINDS:
            self.rollout.set_data(rollout(w, upto=layer), q_labels, k_labels, allowed=allowed)
            self.rollout.set_axis_names(f"after L{layer + 1}", f"input ({k_name})")
            self.rollout.set_title(f"Derived: rollout, L1–L{layer + 1}" if layer else "Derived: rollout, L1")
            self.right.setCurrentWidget(self.rollout)
        else:
            self.rollout.clear_data()
            self.right.setCurrentWidget(self.note)


class AttentionPanel(PickedHead, Panel):
    panel_name = "attention"
    title = "Attention maps"
    tab_title = "Attention"  # many tabs share the right dock area: each must be readable

    def __init__(self, state: SessionState, parent=None):
        super().__init__(state, parent)
        self.data: AttentionData | None = None
        self._dirty = set(VIEWS)
        self._build()
        self.pages.start()
        state.attentionSelected.connect(self._follow)
        self.follow(bundle=self._on_bundle, result=self.show_result)

    def _build(self) -> None:
        self.picker = HeadPicker(self.state, self._kinds, self._shape)
        self.all_kinds = QCheckBox("all kinds", font=st.font(st.LABEL_PT),
                                   toolTip="Show encoder, decoder and cross-attention grids side by side")
        self.mask_legend = QLabel(font=st.font(st.TICK_PT), toolTip=MASK_TIP, visible=False)  # (where something is masked)
        set_text(self.mask_legend, MASK_LEGENDS[0])
        self.readout = style.eliding_line(" ")  # the hovered cell, on the controls' row: the maps keep every line
        self.readout.setFont(st.font(st.LABEL_PT))
        self.tabs = QTabWidget(font=st.font(st.LABEL_PT))
        self.pages = DeferredPages(self.tabs, on_built=self._on_page_built)  # each view built when first shown
        grid = partial(AttentionGrid, lambda: (self.kind, self.layer, self.head))
        for name, make, text in zip(VIEWS, (grid, self._make_single, self._make_lines, DerivedView), VIEW_TITLES):
            self.pages.add(name, text, make)
        self.empty = QLabel("Load a model and run an input to see its attention maps.", font=st.font(st.TITLE_PT),
                            alignment=Qt.AlignmentFlag.AlignCenter)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.empty)
        self.stack.addWidget(self.tabs)
        self.tabs.setCornerWidget(self.mask_legend, Qt.Corner.TopRightCorner)  # room the view tabs leave
        column(row(self.picker, self.all_kinds, (self.readout, 1)), (self.stack, 1), parent=self)
        self.all_kinds.setChecked(self.state.session.view("attention_grid") == "all")  # a panel built after a scene set it
        self.all_kinds.toggled.connect(lambda on: self.state.set_view("attention_grid", "all" if on else "selected"))
        self.view_tabs = ViewTabs(self.tabs, self.state, self.panel_name, VIEWS)
        self.tabs.currentChanged.connect(lambda _index: self._refresh())
        self.state.viewChanged.connect(self._on_grid_view)

    # the views, each built when first needed (explorer.deferred_pages)
    grid = property(lambda self: self.pages.page("grid"))
    single = property(lambda self: self.pages.page("single"))
    derived = property(lambda self: self.pages.page("derived"))

    lines = property(lambda self: self.pages.page("lines").widget())  # (the page is its scroll area)

    def wait_until_drawn(self, msecs: int = 60000) -> bool:
        """The grid's maps still to be made (a few a turn), made and drawn now (headless figures)."""
        self.draw_now()
        grid = self.pages.built_pages().get("grid")
        if grid is not None:
            grid.make_all_maps()
        return True

    @staticmethod
    def _make_single() -> Heatmap:
        single = Heatmap(colormap=st.weight_cmap(), levels=st.WEIGHT_LEVELS, colour_bar=SCALE_NAME, numbers=True)
        single.describe = lambda q, k: cell_text(single, q, k, digits=6)
        return single

    def _make_lines(self) -> QScrollArea:
        scroll = QScrollArea(widgetResizable=True)
        scroll.setWidget(LineView())
        set_sheet(scroll, "background: {canvas};")
        return scroll

    def _on_page_built(self, name: str, page) -> None:
        view = page.widget() if name == "lines" else page
        view.hovered.connect(self._on_hover)
        if name == "grid":
            view.cellClicked.connect(self._on_grid_click)
        self._dirty.add(name)  # drawn when it is the view shown (see _refresh)

    view = property(lambda self: self.view_tabs.current)

    def set_view(self, view: str) -> None:
        self.state.set_view(self.panel_name, view)  # the tab is the session's: a scene sets it

    def _on_grid_view(self, panel: str, view: str) -> None:
        """One kind's grid or every kind's side by side (the session's, as a scene saves it)."""
        if panel == "attention_grid":
            if self.all_kinds.isChecked() != (view == "all"):
                self.all_kinds.setChecked(view == "all")
            self._refresh(force=True)

    def show_result(self, result) -> None:
        """Show every map of a `ForwardResult` or a bare `Trace` (e.g. a training snapshot)."""
        self.show_data(AttentionData.from_result(result) if result is not None else None)

    def show_data(self, data: AttentionData | None) -> None:
        self.data = data
        if data is None or not data.kinds:
            self.stack.setCurrentWidget(self.empty)
            return
        self.stack.setCurrentWidget(self.tabs)
        self.picker.sync()
        self._dirty = set(VIEWS)
        self._refresh()

    def _shape(self, kind: str) -> tuple[int, int]:
        """(layers, heads) of `kind` in the data shown, else in the loaded model."""
        if self.data is not None:
            return self.data.n_layers(kind), self.data.n_heads(kind)
        return self.state.n_layers(kind), self.state.bundle.config.n_heads if self.state.bundle is not None else 0

    def _kinds(self) -> list[str]:
        kinds = self.state.available_kinds() if self.state.bundle is not None else []
        if self.data is not None:
            kinds = [k for k in kinds if k in self.data.kinds] if kinds else self.data.kinds
        return kinds

    def _on_bundle(self, bundle) -> None:
        self.data = None
        self.stack.setCurrentWidget(self.empty)
        self.picker.sync()

    def _follow(self, *_selection) -> None:
        self.picker.sync()
        self._dirty |= {"single", "lines", "derived"}
        grid = self.pages.built_pages().get("grid")
        if grid is not None:
            grid.show_selection()
            if self.kind not in grid.shown:  # (another kind: its grid drawn)
                self._dirty.add("grid")
        self._refresh()

    def _refresh(self, force: bool = False) -> None:
        """Redraw the visible view if its data changed; hidden views wait until shown."""
        if self.data is None:
            return
        view = self.view
        self.all_kinds.setEnabled(view == "grid")
        shown = self.data.kinds if view == "grid" and self.all_kinds.isChecked() else [self.kind]
        self.mask_legend.setVisible(any(k in self.data.allowed and not self.data.allowed[k].all() for k in shown))
        self._fit_legend()
        if not force and view not in self._dirty:
            return
        self._dirty.discard(view)
        self._on_hover("")  # a value read from another map would now be wrong
        d, kind, layer, head = self.data, self.kind, self.layer, self.head
        if view == "grid":
            frame = self.state.frame
            self.grid.show_kinds(d.kinds if self.all_kinds.isChecked() else [kind],
                                 frame.interventions if frame is not None else {})
            self.grid.set_data(d)
        elif view in ("single", "lines") and kind in d.weights:
            q_name, k_name = d.axis_names(kind)
            title = f"{AttentionKind(kind).title} — layer {layer + 1}, head {head + 1}"
            if view == "single":
                self.single.set_data(d.head(kind, layer, head), *d.labels[kind], allowed=d.allowed[kind])
                self.single.set_axis_names(f"query ({q_name})", f"key ({k_name})")
                self.single.set_title(title)
            else:
                self.lines.set_map(d.head(kind, layer, head), d.allowed[kind], *d.labels[kind], title + " — hover a token",
                                   (f"queries ({q_name})", f"keys ({k_name})"))
        elif view == "derived":
            self.derived.set_data(d, kind, layer)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._fit_legend()

    def _fit_legend(self) -> None:
        """The mask legend's longest form that leaves every view tab whole beside it."""
        room = self.tabs.width() - self.tabs.tabBar().sizeHint().width()
        for form in MASK_LEGENDS:
            set_text(self.mask_legend, form)
            if self.mask_legend.sizeHint().width() <= room:
                break

    def _on_grid_click(self, kind: str, layer: int, head: int) -> None:
        self.picker.select(kind, layer, head)
        self.set_view("single")

    def _on_hover(self, text: str) -> None:
        self.readout.setText(text or " ")
        self.readout.setToolTip(text)  # whole, where the line is cut
