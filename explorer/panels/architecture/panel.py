"""The architecture panel: Figure 1 of the paper drawn from the loaded model, each block with the
shape of the tensor flowing out of it; a click steps the forward pass there and the current step
lights its block up. Layers collapse into one "N×" layer (the paper's drawing) or expand to all N."""
from __future__ import annotations

from PySide6.QtCore import QSizeF, QTimer
from PySide6.QtWidgets import QGraphicsScene, QLabel, QToolButton, QWidget

from explorer import style, theme
from explorer.panels.architecture.figure1 import BlockItem, Figure, draw_figure1, place_token_lines
from explorer.panels.architecture.zoom_view import ZoomView
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
        self._sizes: dict[tuple[bool, bool], QSizeF] = {}  # (inline, token lines beside): the figure's size
        self._measured: tuple | None = None  # what `_sizes` were measured for
        self._arranged: tuple[bool, bool] | None = None
        self._relayout = QTimer(self, singleShot=True, interval=0, timeout=self._arrange)
        self.shown_layer = {"encoder": 0, "decoder": 0}
        self.figure = Figure()
        self._lines: dict[str, tuple[list[str] | None, bool]] = {}  # `token_lines`
        self.scene = QGraphicsScene(self)
        self.view = ZoomView(self.scene, self)

        self.expand_button = QToolButton(text="Expand all layers", checkable=True, toggled=self._on_expanded,
                                         toolTip="Draw every layer instead of one layer marked N×")
        self.zoom_buttons = [QToolButton(text=label, toolTip=tip, minimumWidth=40, clicked=slot) for label, tip, slot in
                             (("−", "Zoom out", lambda: self.view.zoom(1 / 1.25)),
                              ("+", "Zoom in", lambda: self.view.zoom(1.25)),
                              ("Fit", "Fit the whole figure", self.view.fit))]
        self.caption = QLabel("Click a block to step to it.", wordWrap=True, minimumWidth=80)  # beside the buttons
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

    # -- building ---------------------------------------------------------------------------
    def _measure(self) -> dict[tuple[bool, bool], QSizeF]:
        """The figure's size with this input's token lines in each arrangement: shapes under or
        beside the names (`inline`), token lines under or beside their labels."""
        sizes = {}
        for inline in (False, True):
            scene = QGraphicsScene()
            figure = draw_figure1(scene, self.state.bundle.config, self.expanded, inline)
            for beside in (False, True) if inline else (False,):
                place_token_lines(figure, self._lines, beside)
                sizes[inline, beside] = scene.itemsBoundingRect().size()
        return sizes

    def _arrange(self) -> None:
        """Draw the arrangement the view shows largest (the one shown wins ties within 2 %: no flapping)."""
        if self.state.bundle is None or not self._sizes:
            return
        room = self.view.viewport().size()

        def scale(arrangement: tuple[bool, bool]) -> float:
            size = self._sizes[arrangement]
            fit = min(room.width() / max(size.width(), 1.0), room.height() / max(size.height(), 1.0))
            return fit * (1.02 if arrangement == self._arranged else 1.0)
        self._arranged = inline, beside = max(self._sizes, key=scale)
        if inline != self.figure.inline:
            self._rebuild(fit=False, inline=inline)  # (comes back here, to this arrangement)
            return
        place_token_lines(self.figure, self._lines, beside)
        if self.view.auto_fit:
            self.view.fit()

    def _on_theme(self, _name: str) -> None:
        """The figure drawn again: its items in the new theme's colours, the user's zoom kept."""
        self._rebuild(fit=False)

    def _rebuild(self, *_, fit: bool = True, inline: bool | None = None) -> None:
        inline = self.figure.inline if inline is None else inline
        self.scene.clear()
        self.figure = Figure(inline=inline)
        if self.state.bundle is None:
            return
        self.figure = draw_figure1(self.scene, self.state.bundle.config, self.expanded, inline,
                                   on_click=self.state.select_step_named)
        self._resolve_keys()
        self.view.auto_fit = self.view.auto_fit or fit
        self._refresh()

    def _resolve_keys(self) -> None:
        """Fill `{layer}` with the layer each collapsed stack currently shows."""
        for item in self.figure.elements + self.figure.boxes:
            item.key = item.template.format(layer=self.shown_layer.get(item.stack, 0))
        for stack, label in self.figure.layer_labels.items():
            n = self.state.n_layers("encoder" if stack == "encoder" else "decoder_self")
            label.setText(f"layer {self.shown_layer[stack] + 1}/{n}")

    def _refresh(self, *_) -> None:
        """New trace: shapes into every block, tokens under the inputs and outputs."""
        trace = self.state.trace
        frame = self.state.frame
        edits = frame.interventions if frame is not None else {}
        for e in self.figure.elements:
            shape_step = e.shape_template.format(layer=self.shown_layer.get(e.stack, 0))
            shape, edited, tip = block_texts(trace, e.key, e.title, shape_step, edits)
            e.set_shape_text(shape)
            e.set_edited(edited)
            e.setToolTip(tip)
        self._lines = token_lines(self.state.result, self.state.bundle, self.figure.token_texts)
        for axis, item in self.figure.token_texts.items():
            item.setToolTip(" ".join(self._lines[axis][0] or []))
        measured = (id(self.state.bundle), self.expanded, repr(self._lines))
        if measured != self._measured:
            self._measured, self._sizes = measured, self._measure()
        self._arrange()
        self._on_step(self.state.step)

    def _on_step(self, _index: int = 0) -> None:
        step = self.state.current_step
        name = step.name if step is not None else ""
        layer = step_layer(name)
        if layer and not self.expanded and self.shown_layer.get(layer[0]) != layer[1]:
            self.shown_layer[layer[0]] = layer[1]
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
