"""The atlas grid: a layers × heads block of buttons per attention kind, each coloured by its head's
type and showing its letter (the grid reads without colour too), every score in its tooltip; and
the legend that names the colours."""
from __future__ import annotations

from PySide6.QtCore import QEvent, Signal
from PySide6.QtWidgets import QLabel

from explorer.drawing import plot_style as st
from explorer.panels.heads.head_grid import HeadBlocks
from explorer.theme import current, set_sheet
from model.interpret.head_scores import KINDS, LETTERS, MEANINGS, HeadAtlas, HeadScore
from model.nn.kinds import AttentionKind

CELL_SHEET = "QToolButton {{ color: {text}; background: %s; border: 1px solid {grid}; }}"
SELECTED_SHEET = "QToolButton {{ color: {text}; background: %s; border: 3px solid {selected}; font-weight: bold; }}"
SWATCH_SHEET = "QLabel {{ color: {text}; background: %s; border: 1px solid {grid}; padding: 1px 6px; }}"


def cell_sheet(kind: str, selected: bool) -> str:
    """The cell's stylesheet: its type's fill from the current theme (`restyle` re-colours it)."""
    return (SELECTED_SHEET if selected else CELL_SHEET) % current().head_kinds[kind]


def meaning(kind: str) -> str:
    return MEANINGS[kind] + ("; the lower-case letter is its strongest" if kind == "mixed" else "")


def tooltip(h: HeadScore) -> str:
    lines = [f"{h.attention.short_title} L{h.layer + 1} H{h.head + 1}: {h.kind} ({meaning(h.kind)})"]
    lines += [f"  {name}: {score:.2f}" for name, score in h.scores.items()]
    if h.attention is AttentionKind.CROSS:
        lines.append("  (cross-attention: only first-token applies)")
    lines.append("Click: show this head in Attention maps")
    return "\n".join(lines)


def legend_swatches() -> dict[str, QLabel]:
    """Each type's letter and name, coloured as its cells (`restyle_swatches`)."""
    swatches = {kind: QLabel(f"{LETTERS[kind]}  {kind}", font=st.font(st.TICK_PT), toolTip=meaning(kind)) for kind in KINDS}
    restyle_swatches(swatches)
    return swatches


def restyle_swatches(swatches: dict[str, QLabel]) -> None:
    for kind, label in swatches.items():
        set_sheet(label, SWATCH_SHEET % current().head_kinds[kind])


class AtlasGrid(HeadBlocks):
    """Cells for every head of an atlas. Signals headClicked / headHovered(kind, layer, head)."""

    headHovered = Signal(str, int, int)
    bold_cells = True

    def __init__(self, parent=None):
        super().__init__(parent)
        self.atlas: HeadAtlas | None = None
        self.chosen: tuple[str, int, int] | None = None

    def set_atlas(self, atlas: HeadAtlas | None) -> None:
        """Rebuild the blocks for `atlas` (None: empty)."""
        self.atlas = atlas
        heads = atlas.heads if atlas is not None else []
        kinds = [k.value for k in atlas.attention_kinds] if atlas is not None else []
        self.build({kind: 1 + max(h.layer for h in heads if h.key[0] == kind) for kind in kinds},
                   1 + max((h.head for h in heads), default=-1))
        for h in heads:
            cell = self.cells[h.key]
            cell.setText(h.letter)
            cell.setToolTip(tooltip(h))
            cell.setAccessibleName(f"{h.attention.short_title} layer {h.layer + 1} head {h.head + 1}: {h.kind}")
            cell.installEventFilter(self)
        self.restyle()

    def eventFilter(self, obj, event) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.Enter:
            for key, cell in self.cells.items():
                if cell is obj:
                    self.headHovered.emit(*key)
                    break
        return False

    def select(self, key: tuple[str, int, int] | None) -> None:
        """Outline the session's selected head (None: none)."""
        self.chosen = key
        self.restyle()

    def restyle(self) -> None:
        """Colour every cell from the current theme."""
        if self.atlas is None:
            return
        for h in self.atlas.heads:
            cell = self.cells.get(h.key)
            if cell is not None:
                set_sheet(cell, cell_sheet(h.kind, h.key == self.chosen))
