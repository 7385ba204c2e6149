"""The head atlas (model.interpret.head_scores): every head coloured and lettered by its pattern,
scored off the GUI thread per model; a click opens the head in Attention maps."""
from __future__ import annotations

import weakref

from PySide6.QtCore import QEvent, Signal
from PySide6.QtWidgets import QLabel

from explorer.drawing import plot_style as st
from explorer.panels.base import Panel
from explorer.panels.heads.head_grid import HeadBlocks
from explorer.panels.layouts import column, flow
from explorer.panels.texts import text_label
from explorer.state import SessionState
from explorer.theme import current, notifier, set_sheet
from model.interpret.head_scores import KINDS, LETTERS, HeadAtlas, head_scores, meaning

CELL_SHEET = "QToolButton {{ color: {text}; background: %s; border: 1px solid {grid}; }}"
SELECTED_SHEET = "QToolButton {{ color: {text}; background: %s; border: 3px solid {selected}; font-weight: bold; }}"
SWATCH_SHEET = "QLabel {{ color: {text}; background: %s; border: 1px solid {grid}; padding: 1px 6px; }}"


class AtlasGrid(HeadBlocks):
    """Cells for every head of an atlas. Signals headClicked / headHovered(kind, layer, head)."""

    headHovered = Signal(str, int, int)
    bold_cells = True

    def __init__(self, parent=None):
        super().__init__(parent)
        self.atlas: HeadAtlas | None = None
        self.by_key: dict = {}
        self.chosen: tuple[str, int, int] | None = None

    def set_atlas(self, atlas: HeadAtlas | None) -> None:
        """Rebuild the blocks for `atlas` (None: empty)."""
        self.atlas = atlas
        self.by_key = {h.key: h for h in atlas.heads} if atlas is not None else {}
        kinds = [k.value for k in atlas.attention_kinds] if atlas is not None else []
        self.build({kind: 1 + max(layer for k, layer, _ in self.by_key if k == kind) for kind in kinds},
                   1 + max((head for *_, head in self.by_key), default=-1))
        for key, h in self.by_key.items():
            self.cells[key].setAccessibleName(f"{h.attention.short_title} layer {h.layer + 1} head {h.head + 1}: {h.kind}")
            self.cells[key].installEventFilter(self)
        self.paint()

    def eventFilter(self, obj, event) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.Enter:
            key = next((key for key, cell in self.cells.items() if cell is obj), None)
            if key is not None:
                self.headHovered.emit(*key)
        return False

    def select(self, key: tuple[str, int, int] | None) -> None:
        """Outline the session's selected head (None: none)."""
        self.chosen = key
        self.paint()

    def look(self, key: tuple[str, int, int]) -> tuple[str, str, str]:
        """A cell's letter, tooltip and colour (the current theme's)."""
        h = self.by_key[key]
        sheet = SELECTED_SHEET if key == self.chosen else CELL_SHEET
        return h.letter, f"{h.tooltip()}\nClick: show this head in Attention maps", sheet % current().head_kinds[h.kind]


class AtlasPanel(Panel):
    panel_name = "atlas"
    title = "Head atlas"
    tab_title = "Atlas"

    def __init__(self, state: SessionState, parent=None):
        super().__init__(state, parent)
        self.atlas = None
        self._scored_bundle = lambda: None  # (weakly) the bundle the atlas (or the running job) belongs to
        self.status = text_label("Load a model to see what its heads do.", st.LABEL_PT)
        self.add_job(self._on_done, self.tell_failure, progress_to=self.status.setText)
        self.swatches = {kind: QLabel(f"{LETTERS[kind]}  {kind}", toolTip=meaning(kind))
                         for kind in KINDS}  # each type's letter and name, coloured as its cells
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
        self._restyle()
        self.follow(bundle=self._on_bundle)

    def _on_bundle(self, bundle) -> None:
        if bundle is self._scored_bundle():
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
        self.about.setText(atlas.about())

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
        for kind, label in self.swatches.items():
            set_sheet(label, SWATCH_SHEET % current().head_kinds[kind])
        self.grid.paint()
