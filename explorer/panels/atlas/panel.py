"""The head atlas (model.interpret.head_scores): a layers × heads grid per attention kind, each
cell coloured and lettered by its head's type, every score in its tooltip; scored off the GUI
thread whenever the model changes. A click selects the head and asks for its Attention map."""
from __future__ import annotations

import weakref

from explorer.drawing import plot_style as st
from explorer.panels.atlas.atlas_grid import AtlasGrid, legend_swatches, restyle_swatches
from explorer.panels.base import Panel
from explorer.panels.job_bar import JobBar
from explorer.panels.layouts import column, flow
from explorer.panels.texts import text_label
from explorer.state import SessionState
from explorer.theme import notifier
from model.interpret.head_scores import head_scores
from model.nn.kinds import AttentionKind

ABOUT = ("Each head read {n} random sequences of {L} tokens, each repeated; its colour is the pattern "
         "that takes the largest share of its attention when that share is at least {t:.0%}.{cross} "
         "Hover or click a head for its scores.")
CROSS_NOTE = " Cross-attention reads another sequence: only first-token applies to it."


class AtlasPanel(Panel):
    panel_name = "atlas"
    title = "Head atlas"
    tab_title = "Atlas"

    def __init__(self, state: SessionState, parent=None):
        super().__init__(state, parent)
        self.atlas = None
        self._scored_bundle = lambda: None  # (weakly) the bundle the atlas (or the running job) belongs to
        self.add_job(self._on_done, self._on_error)
        self.status = text_label("Load a model to see what its heads do.", st.LABEL_PT)
        self.bar = JobBar(self.job, self.status.setText)
        self.swatches = legend_swatches()
        self.legend = flow(*self.swatches.values())  # wraps onto more lines where narrow
        self.about = text_label("", st.TICK_PT)
        self.grid = AtlasGrid()
        self.grid.headClicked.connect(self._on_head_clicked)
        self.grid.headHovered.connect(self._show_scores)
        self.readout = text_label(" ", st.TICK_PT)
        column(self.status, self.bar, self.legend, self.about, (self.grid, 1), self.readout, (None, 0),
               parent=self, margins=4)
        state.attentionSelected.connect(self._on_selected)
        notifier().changed.connect(self._restyle)
        self.follow(bundle=self._on_bundle)

    def _on_bundle(self, bundle) -> None:
        if bundle is not self._scored_bundle():
            self.compute()

    def compute(self) -> None:
        bundle = self.state.bundle
        if bundle is None:
            return
        self._scored_bundle = weakref.ref(bundle)
        self.grid.set_atlas(None)
        self.atlas = None
        self.status.setText(f"Scoring the heads of {bundle.name}…")
        self.job.submit(lambda: head_scores(bundle, progress=self.job.report))

    def _on_done(self, atlas) -> None:
        self.atlas = atlas
        self.grid.set_atlas(atlas)
        self._on_selected(self.state.kind, self.state.layer, self.state.head)
        counts = ", ".join(f"{n} {kind}" for kind, n in atlas.counts().items() if n)
        self.status.setText(f"{atlas.model_name}: {counts}.")
        self.about.setText(ABOUT.format(n=len(next(iter(atlas.tokens.values()))), L=atlas.lengths_text(),
                                        t=atlas.threshold,
                                        cross=CROSS_NOTE if AttentionKind.CROSS in atlas.attention_kinds else ""))

    def _on_error(self, message: str) -> None:
        self.status.setText(message)
        self.state.inform(message, "warning")

    def _on_head_clicked(self, kind: str, layer: int, head: int) -> None:
        self.state.select_attention(kind, layer, head)
        self.state.set_view("attention", "single")
        self.state.request_panel("attention")

    def _on_selected(self, kind: str, layer: int, head: int) -> None:
        self.grid.select((kind, layer, head))
        if self.atlas is not None and (kind, layer, head) in self.grid.cells:
            self._show_scores(kind, layer, head)

    def _show_scores(self, kind: str, layer: int, head: int) -> None:
        if self.atlas is not None:
            self.readout.setText(self.atlas.head(kind, layer, head).describe())

    def _restyle(self) -> None:
        restyle_swatches(self.swatches)
        self.grid.restyle()
