"""The architecture panel: Figure 1 of the paper drawn from the loaded model, each block with the
shape of the tensor flowing out of it; a click steps the forward pass there and the current step
lights its block up. Layers collapse into one "N×" layer (the paper's drawing) or expand to all N."""
from __future__ import annotations

from PySide6.QtWidgets import QLabel, QToolButton, QWidget

from explorer import style
from explorer.panels.architecture.figure1 import BlockItem, Figure
from explorer.panels.architecture.figure_view import FigureView
from explorer.panels.base import Panel
from explorer.panels.layouts import column, row
from explorer.screen import ScreenClass
from model.inference.figure1 import block_for_step
from model.inference.figure1_texts import block_texts, step_layer, token_lines
from model.nn.steps import readable_step_name


class ArchitecturePanel(Panel):
    """Figure 1 from the model's config, with shapes from the trace; clicks select steps."""

    panel_name = "architecture"
    title = "Architecture (Figure 1)"

    def __init__(self, state, parent=None):
        super().__init__(state, parent)
        self.shown_layer = {"encoder": 0, "decoder": 0}
        self.view = FigureView(self, on_click=state.select_step_named, fill=self._fill)
        self.scene = self.view.scene()

        self.expand_button = QToolButton(text="Expand all layers", checkable=True, toggled=self._on_expanded,
                                         toolTip="Draw every layer instead of one layer marked N×")
        self.zoom_buttons = [QToolButton(text=label, toolTip=tip, minimumWidth=40, clicked=slot) for label, tip, slot in
                             (("−", "Zoom out", lambda: self.view.zoom(1 / 1.25)),
                              ("+", "Zoom in", lambda: self.view.zoom(1.25)),
                              ("Fit", "Fit the whole figure", self.view.fit))]
        self.caption = QLabel("Click a block to step to it.", wordWrap=True, minimumWidth=80)  # beside the buttons
        self.row = row(self.expand_button, (self.caption, 1), *self.zoom_buttons)
        column(self.row, (self.view, 1), parent=self, margins=4)

        self.follow(bundle=self._rebuild, result=self._refresh)  # (each reads the session itself)
        self.seen.follow(state.stepChanged, self._on_step)

    # -- public, for tests and the window ---------------------------------------------------
    figure = property(lambda self: self.view.figure)

    def blocks(self) -> dict[str, BlockItem]:
        """Every clickable block by the step prefix it currently stands for."""
        return {e.key: e for e in self.figure.elements}

    def block(self, key: str) -> BlockItem:
        return self.blocks()[key]

    def highlighted_keys(self) -> list[str]:
        return [e.key for e in self.figure.elements if e.highlighted]

    expanded = property(lambda self: self.expand_button.isChecked())

    def set_expanded(self, on: bool) -> None:
        self.expand_button.setChecked(on)  # (toggled: drawn again)

    def _on_expanded(self, on: bool) -> None:
        self.expand_button.setText("Collapse to N×" if on else "Expand all layers")
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

    # -- drawing ----------------------------------------------------------------------------
    def _rebuild(self, *_) -> None:
        """A new model, or layers expanded or collapsed: the figure drawn again, fitted whole."""
        self.view.auto_fit = True
        self._refresh()

    def _refresh(self, *_) -> None:
        """New trace: this input's token lines, shapes into every block (`_fill`)."""
        bundle = self.state.bundle
        if bundle is not None:
            lines = token_lines(self.state.result, bundle, ("src", "tgt", "out"))
            self.view.show_figure(bundle.config, self.expanded, lines)
            self._on_step(self.state.step)  # the caption: this trace's step count

    def _fill(self, figure: Figure) -> None:
        """Step keys with `{layer}` filled by the layer each collapsed stack shows; each block's
        shape, surgery ring and tooltip from the trace; the current step's block lit."""
        for item in figure.elements + figure.boxes:
            item.key = item.template.format(layer=self.shown_layer.get(item.stack, 0))
        for stack, label in figure.layer_labels.items():
            n = self.state.n_layers("encoder" if stack == "encoder" else "decoder_self")
            label.setText(f"layer {self.shown_layer[stack] + 1}/{n}")
        frame = self.state.frame
        edits = frame.interventions if frame is not None else {}
        for e in figure.elements:
            shape_step = e.shape_template.format(layer=self.shown_layer.get(e.stack, 0))
            shape, edited, tip = block_texts(self.state.trace, e.key, e.title, shape_step, edits)
            e.set_shape_text(shape)
            e.set_edited(edited)
            e.setToolTip(tip)
        self._light(figure)

    def _light(self, figure: Figure) -> BlockItem | None:
        """Frame the block of the current step (the one returned); None where no block stands for it."""
        step = self.state.current_step
        key = block_for_step(step.name if step is not None else "", [e.key for e in figure.elements])
        best = next((e for e in figure.elements if e.key == key), None)
        for e in figure.elements:
            e.set_highlighted(e is best)
        return best

    def _on_step(self, _index: int = 0) -> None:
        step = self.state.current_step
        name = step.name if step is not None else ""
        layer = step_layer(name)
        if layer and not self.expanded and self.shown_layer.get(layer[0]) != layer[1]:
            self.shown_layer[layer[0]] = layer[1]
            self._fill(self.figure)
        best = self._light(self.figure)
        if step is not None:
            self.caption.setText(f"Step {self.state.step + 1}/{self.state.n_steps()}:  <b>{readable_step_name(name)}</b>  "
                                 f"<tt>{style.format_shape(step.shape).replace(' ', '&nbsp;')}</tt>")  # one piece
            self.caption.setToolTip(name)
        if best is not None and not self.view.auto_fit:
            self.view.ensureVisible(best, 40, 40)
