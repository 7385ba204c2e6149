"""The logit lens (model.interpret.lens): layer × position, each cell the token the output layer
would pick from that layer's stream (last layer on top, as in Figure 1); a click lists its top 5.
An LLM's lens is computed off the GUI thread, only when the panel is shown (`Frame.lens_deferred`)."""
from __future__ import annotations

import weakref

from explorer import style, theme
from explorer.drawing.heatmap import Heatmap
from explorer.panels.base import Panel
from explorer.panels.layouts import column, row
from explorer.panels.texts import say, text_label
from model.interpret import lens_text
from model.interpret.cell_views import cell_view, parse_cell
from model.interpret.frame import forward_lens


class LensPanel(Panel):
    panel_name = "lens"
    title = "Logit lens"

    def __init__(self, state, parent=None):
        super().__init__(state, parent)
        self.lens = None
        self.asked = lambda: None  # (weakly) the frame whose deferred lens was asked for: not again after a failure
        self.add_job(self._on_lens, self._on_lens_failed)
        self.note = text_label()
        self.grid = Heatmap(colour_bar=True, square=False)  # layers × positions: cells fill the room
        self.grid.cell_text.whole_lines = True  # a predicted token is never cut: other columns a drag away
        self.grid.set_axis_names("", "position · token read")
        self.grid.cellClicked.connect(self._on_cell_clicked)
        self.detail = text_label(rich=True, top_left=True)
        self.detail.setMinimumWidth(180)
        column(self.note, (row((self.grid, 4), (self.detail, 1)), 1), parent=self, margins=4)
        state.viewChanged.connect(self._on_view)
        theme.notifier().changed.connect(self._show_cell)  # the label-smoothing note's colour is in its HTML
        self.follow(bundle=self._on_bundle, frame=self._on_frame)

    def _on_bundle(self, bundle) -> None:
        self.lens = None
        self.grid.clear_data()
        self.detail.setText("")
        if bundle.has_output_layer:
            say(self.note, "Run an input to read every layer through the output layer.", "info")
        else:
            say(self.note, lens_text.NO_HEAD.format(name=bundle.name), "warning")

    def _on_frame(self, frame) -> None:
        if frame.lens is None:
            self._on_bundle(frame.bundle)  # (an empty grid and its note)
            if frame.lens_deferred and frame.bundle.has_output_layer:
                say(self.note, "Reading every layer at every position through the output layer "
                          f"({frame.bundle.output_size:,} tokens)…", "info")
                self._start_lens()
            return
        self.lens = lens = frame.lens
        say(self.note, lens_text.reading_note(lens, frame.bundle.config.norm_first), "info")
        rows = list(range(lens.n_layers - 1, -1, -1))  # the output layer's row on top, as in Figure 1
        probs = lens.top_probs[..., 0].numpy()  # (L, T)
        texts = lens_text.cell_texts(lens, rows)
        self.grid.set_data(probs[rows], [f"Layer {layer + 1}" for layer in rows],
                           lens_text.position_labels(lens.positions), texts=texts, row_names=True)
        self.grid.mark_columns(lens.marked)
        self.grid.describe = lambda row, col: lens_text.cell_hover(lens, lens.n_layers - 1 - row, col)
        self._show_cell()

    def showEvent(self, event) -> None:  # noqa: N802
        super().showEvent(event)
        self._start_lens()

    def _start_lens(self) -> None:
        frame = self.state.frame
        if (frame is not None and frame.lens_deferred and frame.bundle.has_output_layer and frame is not self.asked()
                and self.isVisible()):
            self.asked = weakref.ref(frame)
            self.job.submit(lambda: (frame, forward_lens(frame.bundle, frame.forward)))

    def wait_until_drawn(self, msecs: int = 60000) -> bool:
        self.draw_now()
        self._start_lens()
        return self.job.wait(msecs)

    def _on_lens(self, done) -> None:
        frame, lens = done
        frame.lens, frame.lens_deferred = lens, False  # kept on the frame: shown again without recomputing
        if frame is self.state.frame:
            self._on_frame(frame)

    def _on_lens_failed(self, message: str) -> None:
        say(self.note, f"The logit lens could not be computed: {message}", "warning")

    def _on_view(self, panel: str, _view: str) -> None:
        if panel == self.panel_name:
            self._show_cell()

    def _on_cell_clicked(self, row: int, col: int) -> None:
        if self.lens is not None:
            self.state.set_view(self.panel_name, cell_view(self.lens.n_layers - 1 - row, col))

    def _show_cell(self, *_) -> None:
        lens = self.lens
        if lens is None or not lens.positions:
            return
        layer, t = lens_text.default_cell(lens, parse_cell(self.state.session.view(self.panel_name), 2))
        self.grid.select((lens.n_layers - 1 - layer, t))
        frame = self.state.frame
        note = lens_text.smoothing_note(frame.bundle.label_smoothing, frame.bundle.output_size,
                                        frame.bundle.fills_masks, style.MUTED.name()) if frame is not None else ""
        self.detail.setText(lens_text.cell_detail(lens, layer, t, note))
        why = lens_text.SMOOTHING_WHY if note else ""
        self.detail.setToolTip(f"Top {len(lens.top_pieces[layer][t])} of layer {layer + 1} at position {t}.{why}")
