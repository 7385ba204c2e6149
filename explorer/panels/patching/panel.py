"""Activation patching (model.interpret.patching): each cell, the share of the clean − corrupted logit
difference one patch restores; a click shows the patched run; beside, the direct logit attribution."""
from __future__ import annotations

import functools
import html

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QGridLayout, QLabel, QWidget

from explorer import style, theme
from explorer.drawing import plot_style as st
from explorer.drawing.heatmap import Heatmap
from explorer.panel_dock import offered_room
from explorer.panels.base import Panel
from explorer.panels.knobs import Knob, make_knobs, refill
from explorer.panels.layouts import column, row
from explorer.panels.live_lab.plot_look import LabPlot, mark, theme_pen
from explorer.panels.split_pages import SplitPages
from explorer.panels.texts import say, text_label
from explorer.screen import ScreenClass
from explorer.theme import set_sheet
from model.inference.next_token import rows_that_fit
from model.interpret import patching_text
from model.interpret.cell_views import cell_view, parse_cell
from model.interpret.input_texts import printable
from model.interpret.patching_inputs import corrupted_default
from model.interpret.patching_view import PatchingRequest, PatchingView, compute_patching, parameters_beyond_auto_run

MAPS_SHOWN = 6  # the most maps one stack has: residual, self-, cross-attention, MLP, self- and cross-heads
SIDE_BY_SIDE_WIDTH = 960  # room below which (a dock beside the diagram) maps and bars become tabs
MOST_SHOWN = 12  # bars drawn at most: the largest |contributions|
ANSWER_SHEET = "QLineEdit {{ placeholder-text-color: {text}; }}"  # the default token reads as the value it is
LEVELS = (-1.0, 1.0)  # every map's colours: 1 = all restored, 0 = none; beyond ±1 the ends (the hover tells)


KNOBS = (Knob("clean_edit", "line", tip="The clean input: the run whose activations are patched in", on="run"),
         Knob("corrupted_edit", "line", tip="The corrupted input, the same number of tokens: the run that is patched",
              on="run"),
         Knob("answer_box", "choice", tip="The logit difference compares answer and wrong; empty: the clean run's "
              "top token", editable=True),
         Knob("wrong_box", "choice", tip="The logit difference compares answer and wrong; empty: the corrupted "
              "run's top token", editable=True),
         Knob("stack_box", "choice", tip="Which stack's maps to show", on="draw_maps"),
         Knob("run_button", "button", "Run", "Patch every site from the clean run into the corrupted one", "run"))


class LogitBars(LabPlot):
    """The clean input's direct logit attribution: the largest effects the height has a line for each,
    the largest on top (the tooltip lists them all)."""

    def __init__(self, parent=None):
        super().__init__("Direct logit attribution", "", x_label="", parent=parent)
        self.labels: list[str] = []
        self.values = np.zeros(0)
        self.shown: list[int] = []
        self.bars = self.keep(pg.BarGraphItem(x0=[0], y=[0], width=[0], height=0.7), self._colour_bars)
        self.bars.setVisible(False)
        self.axes.addItem(self.bars)
        mark(self.line(90, theme_pen("text", 1)), 0.0)
        self.axes.getAxis("left").setGrid(False)
        self.axes.invertY(True)  # the largest on top

    def _colour_bars(self, bars) -> None:
        """Bars that raise the logit difference and bars that lower it, in the theme's colours."""
        widths = [float(self.values[i]) for i in self.shown]
        if widths:
            bars.setOpts(brushes=[st.colour("bar" if w >= 0 else "attribution_negative") for w in widths],
                         pens=[pg.mkPen(st.colour("bar_edge"))] * len(widths))

    def set_data(self, labels: list[str], values: np.ndarray) -> None:
        """labels: "L1 H2", "L1 MLP" …; values: each one's direct effect (logit units)."""
        self.labels, self.values = list(labels), np.asarray(values, float)
        order = np.argsort(-np.abs(self.values), kind="stable")[:self.fitting()]
        self.shown = [int(i) for i in order]
        n = len(self.shown)
        ys = list(range(n))
        widths = [float(self.values[i]) for i in self.shown]
        self.bars.setOpts(x0=[0.0] * n, y=ys, width=widths, height=0.7)
        self._colour_bars(self.bars)
        self.bars.setVisible(bool(n))
        self.axes.getAxis("left").setTicks([[(y, self.labels[i]) for y, i in zip(ys, self.shown)]])
        low, high = min(0.0, *widths) if n else 0.0, max(0.0, *widths) if n else 1.0
        pad = 0.05 * max(high - low, 1e-6)
        self.axes.vb.setRange(xRange=(low - pad, high + pad), yRange=(-0.6, max(n, 1) - 0.4), padding=0)
        self.setToolTip(patching_text.attribution_table(self.labels, self.values, n))

    def fitting(self) -> int:
        """How many bars the plot's height gives a label line each."""
        line = QFontMetricsF(style.font(style.SMALL_POINT_SIZE)).lineSpacing() * 1.15
        return rows_that_fit(MOST_SHOWN, self.axes.vb.height(), line)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if "values" in self.__dict__ and len(self.values) and self.fitting() != len(self.shown):
            self.set_data(self.labels, self.values)

    def clear_data(self) -> None:
        self.labels, self.values, self.shown = [], np.zeros(0), []
        self.bars.setVisible(False)
        self.axes.getAxis("left").setTicks([[]])

    def drawn_labels(self) -> list[str]:
        """The bars' labels, top first (tests look at the view)."""
        return [self.labels[i] for i in self.shown] if self.bars.isVisible() else []


class PatchingPanel(Panel):
    panel_name = "patching"
    title = "Activation patching"
    tab_title = "Patching"  # many tabs share the right dock area: each must be readable

    def __init__(self, state, parent=None):
        super().__init__(state, parent)
        self.shown: PatchingView | None = None
        self.screen_class = ScreenClass.PROJECTOR  # the window's class (`apply_screen_class`)
        self.asked: PatchingRequest | None = None  # what the job computes now
        self._filled_for: tuple | None = None  # (model, text) the fields were prefilled for
        self._build()
        state.viewChanged.connect(self._on_view)
        theme.notifier().changed.connect(self._on_theme)
        self.follow(frame=self._on_frame)

    def _build(self) -> None:
        make_knobs(self, KNOBS)
        for box in (self.answer_box, self.wrong_box):
            box.lineEdit().setPlaceholderText("default")
            box.setMinimumContentsLength(8)
            set_sheet(box.lineEdit(), ANSWER_SHEET)
        # one symmetric scale for every map: the right-hand column's colour bars serve their row
        self.maps = [Heatmap(colormap=style.colormap(theme.diverging()), levels=LEVELS, colour_bar=k % 2 == 1,
                             square=False) for k in range(MAPS_SHOWN)]
        self.grid = QGridLayout()
        for k, heatmap in enumerate(self.maps):
            heatmap.cellClicked.connect(lambda row, col, k=k: self._on_cell_clicked(k, row, col))
            heatmap.setVisible(False)
            self.grid.addWidget(heatmap, k // 2, k % 2)
        self.detail = text_label(point_size=None, rich=True, top_left=True)
        self.bars = LogitBars()
        # the maps on one page, the detail and the bars on another: side by side, or a tab each (`_arrange`)
        self.maps_page, self.side_page = QWidget(autoFillBackground=True), QWidget(autoFillBackground=True)
        self.maps_column = column((self.grid, 1), parent=self.maps_page, margins=0)
        self.side_column = column(self.detail, (self.bars, 1), parent=self.side_page, margins=0)
        self.body = SplitPages([(self.maps_page, "Maps", 5), (self.side_page, "Direct logit attribution", 3)],
                               documentMode=True)
        self.status = text_label(" ", point_size=None)
        self._say = functools.partial(say, self.status, level="plain")
        self.add_job(self._on_done, self._on_failed, progress_to=self._say, button=self.run_button)
        column(row(QLabel("Clean:"), (self.clean_edit, 1), QLabel("Corrupted:"), (self.corrupted_edit, 1)),
               row(QLabel("Answer:"), self.answer_box, QLabel("Wrong:"), self.wrong_box, self.stack_box, None,
                   self.run_button),
               (self.body, 1), self.bar, self.status, parent=self, margins=4)

    def apply_screen_class(self, cls: ScreenClass) -> None:
        """Maps beside the detail and the bars; NARROW, or a dock narrower than SIDE_BY_SIDE_WIDTH: the
        maps with the detail under them in one tab, the bars in another."""
        self.screen_class = cls
        self._arrange()

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._arrange()

    def _arrange(self) -> None:
        room = offered_room(self).width()  # the dock's, not this panel's own size: no history in the choice
        apart = self.screen_class is ScreenClass.NARROW or room < SIDE_BY_SIDE_WIDTH
        if apart != self.body.apart:
            (self.maps_column if apart else self.side_column).insertWidget(1 if apart else 0, self.detail)
            self.body.set_apart(apart)
            self.detail.setVisible(True)  # (now, not once the moved label's deferred show comes)

    def _on_theme(self, *_) -> None:
        for heatmap in self.maps:
            heatmap.set_colormap(style.colormap(theme.diverging()))
        self._show_cell()  # (the detail's muted colour is in its HTML)

    def _on_frame(self, frame) -> None:
        """A new model or text: prefill both inputs from it (and run, when on screen)."""
        key = (id(frame.bundle), frame.source)
        if key == self._filled_for:
            return
        self._filled_for = key
        self.clean_edit.setText(frame.source)
        self.corrupted_edit.setText(corrupted_default(frame.bundle, frame.source))
        for box in (self.answer_box, self.wrong_box):
            box.clear()
            box.setEditText("")  # the default: the runs' own top tokens
        if self.isVisible() and self._runs_by_itself():
            self.run()
        else:  # drawn again when next shown (or on Run): no maps of another model or text meanwhile
            self._clear()

    def _on_view(self, panel: str, _value: str) -> None:
        if panel == self.panel_name:
            self._show_cell()

    def run(self) -> None:
        frame = self.state.frame
        if frame is None:
            return
        answer, wrong = (box.currentText().strip() or None for box in (self.answer_box, self.wrong_box))
        request = PatchingRequest(frame.bundle, frame.model_label, self.clean_edit.text(), self.corrupted_edit.text(),
                                  answer, wrong)
        if request != self.asked:
            self.asked = request
            self.job.submit(functools.partial(compute_patching, request))

    def _on_done(self, view: PatchingView) -> None:
        self.asked = None
        frame = self.state.frame
        if frame is not None and view.request.bundle is frame.bundle:
            self._draw(view)

    def _on_failed(self, reason: str) -> None:
        self.asked = None
        self._clear()
        self._say(f"No patching for these inputs: {reason}", level="warning")

    def _clear(self) -> None:
        self.shown = None
        self.draw_maps()
        self.bars.clear_data()
        self.detail.setText("")

    def showEvent(self, event) -> None:  # noqa: N802
        super().showEvent(event)
        if self.shown is None and not self.job.running and self.state.frame is not None and self._runs_by_itself():
            self.run()

    def _runs_by_itself(self) -> bool:
        """A small model is patched as soon as a new input is shown; a large one waits for Run."""
        frame = self.state.frame
        size = parameters_beyond_auto_run(frame.bundle) if frame is not None else 0
        if size:
            self._say(f"{frame.model_label}: {size / 1e6:,.0f} M parameters, so patching starts on Run.")
        return frame is not None and not size

    def _draw(self, view: PatchingView) -> None:
        self.shown = view
        r = view.result
        stacks = list(dict.fromkeys(m.stack for m in r.maps))
        keep = self.stack_box.currentText().lower()
        refill(self.stack_box, [(s.capitalize(), s) for s in stacks], stacks.index(keep) if keep in stacks else 0)
        self.stack_box.setVisible(len(stacks) > 1)
        for box, top, chosen in ((self.answer_box, r.clean_top, r.answer), (self.wrong_box, r.corrupted_top, r.wrong)):
            refill(box, [(printable(piece), piece) for piece, _ in top])
            box.lineEdit().setPlaceholderText(printable(chosen))
        self.bars.set_data(view.dla.labels, view.dla.values)
        self.draw_maps()

    def stack_maps(self) -> list:
        """The result's maps of the chosen stack, in the order they are drawn."""
        stack = self.stack_box.currentText().lower()
        return [m for m in self.shown.result.maps if m.stack == stack] if self.shown is not None else []

    def draw_maps(self) -> None:
        maps = self.stack_maps()  # (none without a result: every heatmap hidden)
        for k, heatmap in enumerate(self.maps):
            heatmap.setVisible(k < len(maps))
        if self.shown is None:
            return
        for heatmap, m in zip(self.maps, maps):
            rows = list(range(len(m.rows) - 1, -1, -1))  # the last layer on top, as in Figure 1
            heatmap.set_title(patching_text.map_title(m), m.title)  # (a cell's number: in its hover text)
            heatmap.set_data(m.restored[rows], [m.rows[l].capitalize() for l in rows],
                             [printable(c) for c in m.columns], row_names=True)
            heatmap.set_axis_names("", html.escape(patching_text.flat_caption(m.restored)))  # (axis titles are HTML)
            heatmap.describe = lambda row, col, m=m: patching_text.cell_hover(m, len(m.rows) - 1 - row, col)
        self._show_cell()
        self._say(patching_text.summary(self.shown.result, self.stack_box.currentText().lower()))

    def _on_cell_clicked(self, k: int, row: int, col: int) -> None:
        maps = self.stack_maps()
        if k < len(maps):
            m = maps[k]
            self.state.set_view(self.panel_name, cell_view(m.key, len(m.rows) - 1 - row, col))

    def selected(self):
        """(map, layer, column) of the session's cell, or the default one (`patching_text.chosen_cell`)."""
        if self.shown is None:
            return None
        output_stack = "decoder" if self.shown.request.bundle.model_kind.has_decoder else "encoder"
        return patching_text.chosen_cell(self.shown.result, self.stack_maps(),
                                         parse_cell(self.state.session.view(self.panel_name), 3), output_stack)

    def _show_cell(self) -> None:
        chosen = self.selected()
        if chosen is None:
            return
        m, layer, col = chosen
        maps = self.stack_maps()
        for k, heatmap in enumerate(self.maps[:len(maps)]):
            heatmap.select((len(m.rows) - 1 - layer, col) if maps[k] is m else None)
        self.detail.setText(patching_text.cell_detail(self.shown.result, m, layer, col, style.MUTED.name()))
