"""The architecture panel: Figure 1 of the paper drawn from the loaded model, each block with the
shape of the tensor flowing out of it; a click steps the forward pass there and the current step
lights its block up. Layers collapse into one "N×" layer (the paper's drawing) or expand to all N."""
from __future__ import annotations

import re

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QGraphicsScene, QLabel, QToolButton, QWidget

from explorer import style, theme
from explorer.panels.architecture.figure1 import BlockItem, Figure, FontMeasure, draw_figure1
from explorer.panels.architecture.zoom_view import ZoomView
from explorer.panels.base import Panel
from explorer.panels.layouts import column, row
from explorer.screen import ScreenClass
from explorer.state import attention_of_step
from model.inference.figure1 import block_for_step, joined_characters, output_pieces
from model.inference.figure1_fit import better_inline, figure1_extent
from model.nn.steps import readable_step_name

TOKENS_GAP = 14.0  # between "Inputs" and its tokens on one line
_LAYER = re.compile(r"^(encoder|decoder)\.layers\.(\d+)\.")


def _tokens_line(pieces: list[str] | None, font, width: float, characters: bool = False) -> str:
    """The tokens separated by spaces, in `width`; too wide for a character tokenizer, its letters
    stand together ("<bos> 2026-11-22"); only then is the line elided."""
    if not pieces:
        return ""
    metrics = QFontMetricsF(font)
    line = " ".join(pieces)
    if characters and metrics.horizontalAdvance(line) > width:
        line = joined_characters(pieces)
    return metrics.elidedText(line, Qt.ElideRight, width)


def _centre_at(item, x: float, y: float) -> None:
    """Put a text item's centre at (x, y)."""
    rect = item.boundingRect()
    item.setPos(x - rect.width() / 2, y - rect.height() / 2)


class ArchitecturePanel(Panel):
    """Figure 1 from the model's config, with shapes from the trace; clicks select steps."""

    panel_name = "architecture"
    title = "Architecture (Figure 1)"

    def __init__(self, state, parent=None):
        super().__init__(state, parent)
        self.expanded = False
        self.inline = False  # shapes beside the block names (wide view) or under them (tall view)
        self._extents: dict[bool, tuple[float, float]] = {}  # the figure's size in each arrangement, per model
        self._relayout = QTimer(self, singleShot=True, interval=0)
        self._relayout.timeout.connect(self._choose_arrangement)
        self.shown_layer = {"encoder": 0, "decoder": 0}
        self.figure = Figure()
        self._lines: dict[str, tuple[list[str] | None, bool]] = {}  # token line: its pieces, character tokens?
        self.scene = QGraphicsScene(self)
        self.view = ZoomView(self.scene, self)

        self.expand_button = QToolButton(text="Expand all layers", checkable=True,
                                         toolTip="Draw every layer instead of one layer marked N×")
        self.expand_button.toggled.connect(self.set_expanded)
        self.zoom_buttons = [QToolButton(text=label, toolTip=tip, minimumWidth=40, clicked=slot) for label, tip, slot in
                             (("−", "Zoom out", lambda: self.view.zoom(1 / 1.25)),
                              ("+", "Zoom in", lambda: self.view.zoom(1.25)),
                              ("Fit", "Fit the whole figure", self.view.fit))]
        self.caption = QLabel("Click a block to step to it.", wordWrap=True, minimumWidth=80,
                              font=style.font(style.BASE_POINT_SIZE, mono=False))  # beside the buttons: room for the figure
        self.row = row(self.expand_button, (self.caption, 1), *self.zoom_buttons)
        column(self.row, (self.view, 1), parent=self, margins=4)
        self.view.resized.connect(self._relayout.start)

        self.follow(bundle=self._rebuild, result=self._refresh)  # (each reads the session itself)
        theme.notifier().changed.connect(self._on_theme)
        self.seen.follow(state.stepChanged, self._on_step)

    # -- public, for tests and the window ---------------------------------------------------
    def blocks(self) -> dict[str, BlockItem]:
        """Every clickable block by the step prefix it currently stands for."""
        return {e.key: e for e in self.figure.elements}

    def block(self, key: str) -> BlockItem:
        return self.blocks()[key]

    def highlighted_keys(self) -> list[str]:
        return [e.key for e in self.figure.elements if e.highlighted]

    def set_expanded(self, on: bool) -> None:
        if bool(on) == self.expanded:
            return
        self.expanded = bool(on)
        self.expand_button.setChecked(self.expanded)
        self.expand_button.setText("Collapse to N×" if self.expanded else "Expand all layers")
        self._rebuild()

    def add_to_row(self, widget: QWidget) -> None:
        """A widget at the end of the buttons' row (presenting: "Start the tour")."""
        self.row.addWidget(widget)

    def apply_screen_class(self, cls: ScreenClass) -> None:
        """NARROW: no caption and no zoom buttons (the wheel zooms), so the figure keeps the room;
        presenting: Fit alone of the zoom buttons, beside the tour's offer."""
        narrow = cls is ScreenClass.NARROW
        presentation = getattr(getattr(self.window(), "lecture", None), "presentation", None)
        presenting = presentation is not None and presentation.active
        self.caption.setVisible(not narrow)
        for button in self.zoom_buttons:
            button.setVisible(not narrow and not (presenting and button.text() != "Fit"))

    # -- building ---------------------------------------------------------------------------
    def _measure(self) -> None:
        """The figure's size shapes-under-names and shapes-beside-names."""
        self._extents = {inline: figure1_extent(self.state.bundle.config, self.expanded, inline, FontMeasure())
                         for inline in (False, True)}

    def _better_inline(self) -> bool:
        """The arrangement the view shows larger (a wide dock: shapes beside the names)."""
        room = self.view.viewport().size().toTuple()
        return better_inline(self._extents[True], self._extents[False], room, self.inline) if self._extents else self.inline

    def _choose_arrangement(self) -> None:
        if self.state.bundle is not None and self._better_inline() != self.inline:
            self.inline = not self.inline
            self._rebuild(measure=False)
        elif self.figure.inline:
            self._place_lines()
            if self.view.auto_fit:
                self.view.fit()

    def _on_theme(self, _name: str) -> None:
        """The figure drawn again: its items in the new theme's colours, the user's zoom kept."""
        self._rebuild(measure=False)

    def _rebuild(self, *_, measure: bool = True) -> None:
        self.scene.clear()
        self.figure = Figure()
        if self.state.bundle is None:
            return
        if measure:
            self._measure()
            self.inline = self._better_inline()
        self.figure = draw_figure1(self.scene, self.state.bundle.config, self.expanded, self.inline,
                                   on_click=self.state.select_step_named)
        self._resolve_keys()
        self._refresh()  # (fitted there, unless the user zoomed)
        if measure:
            self.view.fit()

    def _resolve_keys(self) -> None:
        """Fill `{layer}` with the layer each collapsed stack currently shows."""
        for e in self.figure.elements:
            e.key = e.template.format(layer=self.shown_layer.get(e.stack, 0))
        for box in self.figure.boxes:
            box.key = box.template.format(layer=self.shown_layer.get(box.stack, 0))
        for stack, label in self.figure.layer_labels.items():
            n = self.state.n_layers("encoder" if stack == "encoder" else "decoder_self")
            label.setText(f"layer {self.shown_layer[stack] + 1}/{n}")

    def _refresh(self, *_) -> None:
        """New trace: shapes into every block, tokens under the inputs and outputs."""
        trace = self.state.trace
        frame = self.state.frame
        edits = frame.interventions if frame is not None else {}
        for e in self.figure.elements:
            shape_name = e.shape_template.format(layer=self.shown_layer.get(e.stack, 0))
            shape = ""
            tip = [e.title.replace("\n", " ")]
            if trace is not None and shape_name in trace:
                shape = style.format_shape(trace[shape_name].shape)
                tip += [f"{s.name}  {style.format_shape(s.shape)}" for s in trace
                        if s.name == e.key or s.name.startswith(e.key + ".")]
            e.set_shape_text(shape)
            sublayer = attention_of_step(e.key + ".")
            edited = sorted((h, op) for (k, l, h), op in edits.items() if sublayer == (k, l))
            e.set_edited(bool(edited))
            tip += [f"Head surgery: head {h + 1} {op}" for h, op in edited]
            e.setToolTip("\n".join(tip))
        result = self.state.result
        pieces = {"src": result.src_pieces, "tgt": result.tgt_pieces, "out": output_pieces(result)} if result else {}
        bundle = self.state.bundle
        tokenizers = {"src": getattr(bundle, "src_tokenizer", None), "tgt": getattr(bundle, "tgt_tokenizer", None)}
        tokenizers["out"] = tokenizers["tgt"] or tokenizers["src"]
        self._lines = {axis: (pieces.get(axis), getattr(tokenizers.get(axis), "kind", "") == "char")
                       for axis in self.figure.token_texts}
        for axis, item in self.figure.token_texts.items():
            item.setToolTip(" ".join(pieces.get(axis) or []))
        self._place_lines()
        if self.view.auto_fit:  # longer token lines change the figure's extent
            self.view.fit()
        self._on_step(self.state.step)

    def _place_lines(self) -> None:
        """The token lines beside their labels (a wide figure) or under/over them, whichever the
        view shows larger."""
        scales = {}
        for beside in (False, True) if self.figure.inline else (False,):
            for axis, (pieces, characters) in self._lines.items():
                self._place_line(axis, pieces, characters, beside)
            rect, room = self.scene.itemsBoundingRect(), self.view.viewport().size()
            scales[beside] = min(room.width() / max(rect.width(), 1.0), room.height() / max(rect.height(), 1.0))
        if scales.get(True, 0.0) < scales[False]:
            for axis, (pieces, characters) in self._lines.items():
                self._place_line(axis, pieces, characters, False)

    def _place_line(self, axis: str, pieces: list[str] | None, characters: bool, beside: bool) -> None:
        """A token line beside its label (where it fits whole), else under (inputs) or over (outputs) it."""
        item, label = self.figure.token_texts[axis], self.figure.token_labels[axis]
        x, _, stacked_y = self.figure.anchors[f"tokens.{axis}"]
        label_x, label_y, label_stacked_y = self.figure.anchors[f"label.{axis}"]
        column = self.figure.column_width.get(axis) or max(self.figure.column_width.values())
        alone = axis == "out" or len(self.figure.column_width) == 2  # nothing beside the line: twice the room
        if beside:
            room = (2 if alone else 1) * column - label.boundingRect().width() - TOKENS_GAP
            item.setText(_tokens_line(pieces, item.font(), room, characters))
            if not item.text().endswith("…"):  # "Inputs  a t t e n t i o n" on one line
                both = label.boundingRect().width() + (TOKENS_GAP + item.boundingRect().width() if item.text() else 0)
                _centre_at(label, label_x - both / 2 + label.boundingRect().width() / 2, label_y)
                _centre_at(item, label_x + both / 2 - item.boundingRect().width() / 2, label_y)
                return
        room = 2 * column if alone else column
        item.setText(_tokens_line(pieces, item.font(), room, characters))
        _centre_at(item, x, stacked_y)
        _centre_at(label, label_x, label_stacked_y)

    def _on_step(self, _index: int = 0) -> None:
        step = self.state.current_step
        name = step.name if step is not None else ""
        m = _LAYER.match(name)
        if m and not self.expanded and self.shown_layer.get(m.group(1)) != int(m.group(2)):
            self.shown_layer[m.group(1)] = int(m.group(2))
            self._resolve_keys()
            self._refresh()
            return  # _refresh calls back here with the keys resolved
        key = block_for_step(name, [e.key for e in self.figure.elements])
        best = next((e for e in self.figure.elements if e.key == key), None)
        for e in self.figure.elements:
            e.set_highlighted(e is best)
        if step is not None:
            self.caption.setText(f"Step {self.state.step + 1}/{self.state.n_steps()}:  <b>{readable_step_name(name)}</b>  "
                                 f"<tt>{style.format_shape(step.shape).replace(' ', '&nbsp;')}</tt>")  # one piece
            self.caption.setToolTip(name)
        if best is not None and not self.view.auto_fit:
            self.view.ensureVisible(best, 40, 40)
