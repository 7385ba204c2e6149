"""Positional-encoding panel (Section 3.5): the sinusoids as waves and as a map, how alike positions
are and why an offset is a linear map, what the current input adds, and rotary positions. Values are
the model's own table (learned, or Marian's sin-then-cos layout, labelled so) or its formula."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QSignalBlocker
from PySide6.QtWidgets import QCheckBox, QLabel, QPushButton, QSpinBox, QTabWidget, QWidget

from explorer.deferred_pages import DeferredPages
from explorer.drawing import plot_style as st
from explorer.panels.base import Panel
from explorer.panels.layouts import column, flow
from explorer.panels.positional.input_view import InputView
from explorer.panels.positional.rope_view import RopeView
from explorer.panels.positional.views import PEHeatmapView, SimilarityShiftView
from explorer.panels.positional.waves import WavesView
from explorer.panels.texts import text_label
from explorer.screen import ScreenClass
from explorer.state import SessionState
from model.interpret.positions import pair_layout, positional_table, table_titles

PAPER_D_MODEL = 512
DEFAULT_POSITIONS = 100
MAX_D_MODEL = 2048
MAX_POSITIONS = 1024


class PositionalPanel(Panel):
    panel_name = "positional"
    title = "Positional encoding"
    tab_title = "Positional"  # its dock tab and the presentation chooser (the whole name on the title bar)

    def __init__(self, state: SessionState, parent=None):
        super().__init__(state, parent)
        self.table: np.ndarray | None = None
        self.source = "formula"  # "model" (the buffer), "learned" (the parameter) or "formula"
        self._build()
        self.follow(bundle=self._on_bundle, result=self._on_result)
        if self.table is None:
            self.refresh()  # (the formula until a model is loaded)
        self.pages.start()  # the tab shown now; the other views when first shown

    # -- the views: each built when first needed (explorer.deferred_pages) -----------------------
    waves = property(lambda self: self.pages.page("waves"))
    heatmap = property(lambda self: self.pages.page("heatmap"))
    similarity = property(lambda self: self.pages.page("similarity"))
    input_view = property(lambda self: self.pages.page("input_view"))
    rope_view = property(lambda self: self.pages.page("rope_view"))

    def _draw_page(self, name: str, view: QWidget) -> None:
        """Draw the current table (or input) into one view: at refresh, or when the view is built."""
        if name in ("input_view", "rope_view"):  # (each reads the session's input itself)
            view.refresh()
        elif self.table is not None:  # sin/cos in dims (2i, 2i+1) as in the paper; "halves" for Marian
            layout = "interleaved" if self.source == "learned" else pair_layout(self.state.bundle)
            formula, title = table_titles(self.source, layout, *self.table.shape)
            view.set_table(self.table, self.source == "learned", formula if name == "waves" else title, layout)

    def _on_result(self, _result) -> None:
        for name, view in self.pages.built_pages().items():
            if name in ("input_view", "rope_view"):
                view.refresh()

    def _build(self) -> None:
        font = st.font(st.LABEL_PT)
        self.d_spin = QSpinBox(minimum=2, maximum=MAX_D_MODEL, singleStep=2, value=PAPER_D_MODEL,
                               keyboardTracking=False)  # typing "128" must not redraw for 1 and 12 first
        self.len_spin = QSpinBox(minimum=2, maximum=MAX_POSITIONS, value=DEFAULT_POSITIONS, keyboardTracking=False)
        self.learned_box = QCheckBox("learned table",
                                     toolTip="This model learns its positional embeddings (Table 3 row E): show them")
        self.reset_button = QPushButton("Model's sizes", toolTip="Back to the loaded model's d_model and length")
        self.source_label = text_label(" ", None, sheet="color: {muted};")
        sizes = flow(QLabel("d_model"), self.d_spin, QLabel("positions"), self.len_spin, self.learned_box,
                     self.reset_button, font=font)  # wraps onto a second line where one is too narrow

        self.state.panelRequested.connect(self._on_requested)
        self.tabs = QTabWidget(font=font)
        self.pages = DeferredPages(self.tabs, on_built=self._draw_page)
        for name, text, factory in (("waves", "Waves", WavesView), ("heatmap", "Position × dimension", PEHeatmapView),
                                    ("similarity", "Similarity && shift", SimilarityShiftView),
                                    ("input_view", "This input", lambda: InputView(self.state)),
                                    ("rope_view", "RoPE", lambda: RopeView(self.state))):
            self.pages.add(name, text, factory)
        column(sizes, self.source_label, (self.tabs, 1), parent=self)
        self._on_requested(self.panel_name, self.state.session.view(self.panel_name))  # asked before it was built

        self.d_spin.valueChanged.connect(lambda _: self._on_d_model())
        self.len_spin.valueChanged.connect(lambda _: self.refresh())
        self.learned_box.toggled.connect(lambda _: self.refresh())
        self.reset_button.clicked.connect(self.use_model_sizes)

    def _on_requested(self, panel: str, view: str) -> None:
        if panel == self.panel_name and view == "rope":
            self.tabs.setCurrentWidget(self.pages.holder("rope_view"))

    def apply_screen_class(self, cls: ScreenClass) -> None:
        """The note on where the table comes from under the controls, or (NARROW) folded into the
        tabs' tooltip so the views keep the height."""
        narrow = cls is ScreenClass.NARROW
        self.source_label.setVisible(not narrow)
        self.tabs.setToolTip(self.source_label.text() if narrow else "")

    # -- sizes -----------------------------------------------------------------------------------
    def set_d_model(self, d_model: int) -> None:
        self.d_spin.setValue(int(d_model))
        self._on_d_model()

    def _on_d_model(self) -> None:
        d = self.d_spin.value()
        if d % 2:  # the sinusoids come in (sin, cos) pairs: an odd width has no last partner
            self.d_spin.setValue(d + 1)
            self.state.inform(f"d_model must be even for the sinusoidal encoding; using {d + 1}.", "warning")
            return
        self.refresh()

    def use_model_sizes(self) -> None:
        bundle = self.state.bundle
        if bundle is None:
            return
        cfg = bundle.config
        for spin, value in ((self.d_spin, cfg.d_model), (self.len_spin, min(cfg.max_len, DEFAULT_POSITIONS))):
            with QSignalBlocker(spin):
                spin.setValue(value)
        self.refresh()

    def _on_bundle(self, bundle) -> None:
        learned = bundle.config.positional == "learned"
        with QSignalBlocker(self.learned_box):
            self.learned_box.setEnabled(learned)
            self.learned_box.setChecked(learned)
        self.use_model_sizes()

    def refresh(self) -> None:
        """Recompute the table and redraw every view that depends on it."""
        bundle = self.state.bundle
        learned_mode = bundle is not None and bundle.config.positional == "learned" and self.learned_box.isChecked()
        self.d_spin.setEnabled(not learned_mode)
        if learned_mode and self.d_spin.value() != bundle.config.d_model:
            with QSignalBlocker(self.d_spin):
                self.d_spin.setValue(bundle.config.d_model)
        self.table, self.source, text = positional_table(bundle, self.d_spin.value(), self.len_spin.value(),
                                                         self.learned_box.isChecked())  # the model's own values if it has them
        self.source_label.setText(text)
        for name, view in self.pages.built_pages().items():  # views not built yet draw it when they are
            self._draw_page(name, view)
