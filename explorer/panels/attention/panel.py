"""Attention maps panel: every head of every layer, one head large, the line view, and the
derived maps (mean over heads, rollout) — for the three kinds of attention of Section 3.2.3.

It observes `SessionState`: a new result redraws, `attentionSelected` moves the selection,
and picking a head here calls `state.select_attention` so the stepper and diagram follow.
`show_result(result_or_trace)` is public so a training run can stream snapshots into it.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from explorer.deferred_pages import DeferredPages
from explorer.drawing import plot_style as st
from explorer.drawing.heatmap import Heatmap
from explorer.panels.attention.derived_view import DerivedView
from explorer.panels.attention.grid import SCALE_NAME, AttentionGrid, weight_text
from explorer.panels.attention.head_picker import HeadPicker
from explorer.panels.attention.lines import LineView
from explorer.panels.attention.tab_corner import TabCorner
from explorer.state import SessionState
from explorer.theme import set_sheet, set_text
from model.interpret.attention_maps import AttentionData
from model.nn.kinds import AttentionKind

VIEWS = ("grid", "single", "lines", "derived")
VIEW_TITLES = ("All heads", "One head", "Lines", "Mean && rollout (derived)")
MASK_LEGEND = "<span style='background:{masked};color:{mask_legend_text}'>&nbsp;╱╱╱&nbsp;</span>&nbsp;masked (not a 0 weight)"
MASK_TIP = ("Grey hatched cells were blocked before the softmax (future positions in the decoder, padding): "
            "their score was set to −∞, so the weight is exactly 0 by construction — unlike a weight the "
            "model computed to be near 0, drawn dark in the colour map.")


def head_title(kind: str, layer: int, head: int) -> str:
    return f"{AttentionKind(kind).title} — layer {layer + 1}, head {head + 1}"  # counted from 1, as everywhere


class AttentionPanel(QWidget):
    panel_name = "attention"
    title = "Attention maps"
    tab_title = "Attention"  # nine tabs share the right dock area: each must be readable

    def __init__(self, state: SessionState, parent=None):
        super().__init__(parent)
        self.state = state
        self.data: AttentionData | None = None
        self._drawn_kind: str | None = None  # the kind the grid shows now (a change redraws it)
        self._dirty = set(VIEWS)
        self._build()
        self._on_view(self.panel_name, state.session.view(self.panel_name) or VIEWS[0])
        self.pages.start()
        state.bundleChanged.connect(self._on_bundle)
        state.resultChanged.connect(self.show_result)
        state.attentionSelected.connect(self._follow)
        if state.bundle is not None:
            self._on_bundle(state.bundle)
        if state.result is not None:
            self.show_result(state.result)

    # -- construction -------------------------------------------------------------------------
    def _build(self) -> None:
        self.picker = HeadPicker(self.state, self._kinds, self._shape)
        self.kind_box, self.layer_box, self.head_box = self.picker.kind_box, self.picker.layer_box, self.picker.head_box
        self.all_kinds = QCheckBox("all kinds")
        self.all_kinds.setToolTip("Show encoder, decoder and cross-attention grids side by side")
        self.all_kinds.setFont(st.font(st.LABEL_PT))
        controls = QHBoxLayout()
        controls.addWidget(self.picker)
        controls.addWidget(self.all_kinds)
        controls.addStretch(1)

        self.tabs = QTabWidget()
        self.tabs.setFont(st.font(st.LABEL_PT))
        self.pages = DeferredPages(self.tabs, on_built=self._on_page_built)  # each view built when first shown
        for name, make, text in zip(VIEWS, (AttentionGrid, self._make_single, self._make_lines, DerivedView), VIEW_TITLES):
            self.pages.add(name, text, make)
        self.mask_legend = legend = QLabel()
        set_text(legend, MASK_LEGEND)
        legend.setFont(st.font(st.TICK_PT))
        legend.setToolTip(MASK_TIP)
        legend.setVisible(False)  # only where something is masked (see _refresh)
        self.corner = TabCorner(self.tabs, legend)  # the readout and the key beside the tabs: no line of their own
        self.readout = self.corner.readout
        self.readout.setFont(st.font(st.LABEL_PT))
        self.readout.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.empty = QLabel("Load a model and run an input to see its attention maps.")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setFont(st.font(st.TITLE_PT))
        self.stack = QStackedWidget()
        self.stack.addWidget(self.empty)
        self.stack.addWidget(self.tabs)

        lay = QVBoxLayout(self)
        lay.addLayout(controls)
        lay.addWidget(self.stack, 1)

        self.all_kinds.toggled.connect(
            lambda on: self.state.set_view("attention_grid", "all" if on else "selected"))
        self.tabs.currentChanged.connect(self._on_tab)
        self.state.viewChanged.connect(self._on_view)

    # -- the views: each built when first needed (explorer.deferred_pages) -----------------------
    grid = property(lambda self: self.pages.page("grid"))
    single = property(lambda self: self.pages.page("single"))
    derived = property(lambda self: self.pages.page("derived"))

    @property
    def lines(self) -> LineView:
        return self.pages.page("lines").widget()  # (the page is its scroll area)

    def wait_until_drawn(self, msecs: int = 60000) -> bool:
        """The grid's maps still to be made (a few a turn), made and drawn now (headless figures)."""
        grid = self.pages.built_pages().get("grid")
        if grid is not None:
            grid.make_all_maps()
        return True

    @staticmethod
    def _make_single() -> Heatmap:
        single = Heatmap(colormap=st.weight_cmap(), levels=st.WEIGHT_LEVELS, colour_bar=SCALE_NAME, numbers=True)
        single.describe = lambda q, k: weight_text(single, q, k, digits=6)
        return single

    def _make_lines(self) -> QScrollArea:
        scroll = QScrollArea()
        scroll.setWidget(LineView())
        scroll.setWidgetResizable(True)
        set_sheet(scroll, "background: {canvas};")
        return scroll

    def _on_page_built(self, name: str, page: QWidget) -> None:
        view = page.widget() if name == "lines" else page
        view.hovered.connect(self._on_hover)
        if name == "grid":
            view.cellClicked.connect(self._on_grid_click)
            view.select(self.kind, self.layer, self.head)
        self._dirty.add(name)  # drawn when it is the view shown (see _refresh)

    # -- public ----------------------------------------------------------------------------------
    @property
    def view(self) -> str:
        return VIEWS[self.tabs.currentIndex()]

    def set_view(self, view: str) -> None:
        self.state.set_view(self.panel_name, view)  # the tab is the session's: a scene sets it

    def _on_tab(self, index: int) -> None:
        if 0 <= index < len(VIEWS):
            self.state.set_view(self.panel_name, VIEWS[index])
        self._refresh()

    def _on_view(self, panel: str, view: str) -> None:
        if panel == "attention_grid":  # one kind's grid or every kind's side by side
            if self.all_kinds.isChecked() != (view == "all"):
                self.all_kinds.setChecked(view == "all")
            self._refresh(force=True)
            return
        if panel == self.panel_name and view in VIEWS and self.view != view:
            self.tabs.setCurrentIndex(VIEWS.index(view))

    def show_result(self, result) -> None:
        """Show every map of a `ForwardResult` or a bare `Trace` (e.g. a training snapshot)."""
        if result is None:
            self.show_data(None)
            return
        self.show_data(AttentionData.from_result(result))

    def show_data(self, data: AttentionData | None) -> None:
        self.data = data
        if data is None or not data.kinds:
            self.stack.setCurrentWidget(self.empty)
            return
        self.stack.setCurrentWidget(self.tabs)
        self.picker.sync()
        self._dirty = set(VIEWS)
        self._refresh()

    def select(self, kind: str, layer: int, head: int) -> None:
        """Select a head: the selection is the session's, so the stepper and diagram follow."""
        self.picker.select(kind, layer, head)

    # -- the selection: the session's, clamped to what the shown data has (never stored here) ----
    kind = property(lambda self: self.picker.kind)
    layer = property(lambda self: self.picker.layer)
    head = property(lambda self: self.picker.head)

    def _shape(self, kind: str) -> tuple[int, int]:
        """(layers, heads) of `kind` in the data shown, else in the loaded model."""
        if self.data is not None:
            return self.data.n_layers(kind), self.data.n_heads(kind)
        return self.state.n_layers(kind), self.state.bundle.config.n_heads if self.state.bundle is not None else 0

    # -- state → view -------------------------------------------------------------------------
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
        """The session's head changed (here, in the stepper, the diagram or a scene)."""
        kind = self.kind
        self.picker.sync()
        self._dirty |= {"single", "lines", "derived"} | ({"grid"} if kind != self._drawn_kind else set())
        grid = self.pages.built_pages().get("grid")
        if grid is not None:  # (a grid built later selects the head then)
            grid.select(kind, self.layer, self.head)
        self._refresh()

    def _refresh(self, force: bool = False) -> None:
        """Redraw the visible view if its data changed; hidden views wait until shown."""
        if self.data is None:
            return
        view = self.view
        self.all_kinds.setEnabled(view == "grid")
        # the key follows the view shown now, drawn afresh or not (it kept another view's answer)
        shown = self.data.kinds if view == "grid" and self.all_kinds.isChecked() else [self.kind]
        self.mask_legend.setVisible(any(k in self.data.allowed and not self.data.allowed[k].all() for k in shown))
        if not force and view not in self._dirty:
            return
        self._dirty.discard(view)
        self.readout.setText(" ")  # a value read from another map would now be wrong
        self.readout.setToolTip("")
        d, kind, layer, head = self.data, self.kind, self.layer, self.head
        if view == "grid":
            self._drawn_kind = kind
            self.grid.show_kinds(d.kinds if self.all_kinds.isChecked() else [kind])
            frame = self.state.frame
            self.grid.set_edits(frame.interventions if frame is not None else {})
            self.grid.set_data(d)
            self.grid.select(kind, layer, head)
        elif view == "single" and kind in d.weights:
            q_name, k_name = d.axis_names(kind)
            self.single.set_data(d.head(kind, layer, head), *d.labels[kind], allowed=d.allowed[kind])
            self.single.set_axis_names(f"query ({q_name})", f"key ({k_name})")
            self.single.set_title(head_title(kind, layer, head))
        elif view == "lines" and kind in d.weights:
            q_labels, k_labels = d.labels[kind]
            q_name, k_name = d.axis_names(kind)
            self.lines.set_map(d.head(kind, layer, head), d.allowed[kind], q_labels, k_labels,
                               head_title(kind, layer, head) + " — hover a token",
                               (f"queries ({q_name})", f"keys ({k_name})"))
        elif view == "derived":
            self.derived.set_data(d, kind, layer)

    # -- view → state -------------------------------------------------------------------------
    def _on_grid_click(self, kind: str, layer: int, head: int) -> None:
        self.select(kind, layer, head)
        self.set_view("single")

    def _on_hover(self, text: str) -> None:
        self.readout.setText(text or " ")
        self.readout.setToolTip(text)  # whole, where the line is cut
