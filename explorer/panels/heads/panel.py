"""Head surgery: click heads to zero them, average them or make them uniform (session edits every
panel redraws with) and see the output change; "Importance" ranks them (Michel et al. 2019)."""
from __future__ import annotations

import weakref
from pathlib import Path

import pyqtgraph as pg
from PySide6.QtWidgets import QFileDialog, QTabWidget, QWidget

from explorer.drawing import plot_style as st
from explorer.panels.base import Panel
from explorer.panels.heads.head_grid import HeadGrid
from explorer.panels.knobs import Knob, make_knobs
from explorer.panels.layouts import column, flow, row
from explorer.panels.live_lab.plot_look import LabPlot
from explorer.panels.texts import text_label
from explorer.screen import ScreenClass
from explorer.state import SessionState
from explorer.style import prob_text
from explorer.theme import current, notifier
from model.interpret.importance import HeadImportance, head_importance
from model.interpret.interventions import attention_layers
from model.interpret.output_change import describe_html

SURGERY_KNOBS = (Knob("click_label", "label", "Click a head to:"),
                 Knob("edit_box", "choice", options=(("Zero the head", "zero"), ("Mean over positions", "mean"),
                                                     ("Uniform attention", "uniform"))),
                 Knob("reset_button", "button", "Reset all heads", on="reset_heads"))
RANKING_KNOBS = (Knob("run_button", "button", "Rank heads", on="run_importance"),
                 Knob("pairs_spin", "spin", " pairs", options=(10, 2000, 1, 200)),
                 Knob("by_box", "choice", tip="Which importance orders the heads: the loss increase when a head is "
                      "zeroed, or Michel et al. 2019's |∂L/∂ξ_h| with a gate ξ_h = 1 on each head",
                      on="redraw_importance", options=(("masking (Δ loss)", "masking"), ("gradient (Michel)", "gradient"))),
                 Knob("export_button", "button", "Export CSV…", on="export_dialog"))
IMPORTANCE_NOTE = "Held-out pairs of the model's task; removes heads least important first."
CURVE_POINTS = 25  # at most this many points on the pruning curve (a big model has 100+ heads)


class ImportanceView(QWidget):
    """Bars of one importance measure and the pruning curve (the labs' plot look); `by` picks the measure."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.result: HeadImportance | None = None
        self.by = "masking"
        self.bars_plot = LabPlot("Importance (masking)", "Δ loss", x_label="head (by kind)")
        self.curve_plot = LabPlot("Pruning curve", "exact match", x_label="heads removed")
        self.bars = self.bars_plot.keep(pg.BarGraphItem(x=[], height=[], width=0.8), self._colour_bars)
        self.bars_plot.axes.addItem(self.bars)
        self.curve = self.curve_plot.keep(self.curve_plot.plot([], [], symbol="o", symbolSize=6), _exact_curve)
        self.ranking = text_label(" ", st.TICK_PT)
        column((row(self.bars_plot, self.curve_plot), 1), self.ranking, parent=self, margins=0)

    def _colour_bars(self, bars) -> None:
        """A colour per attention kind, from the theme's series."""
        if self.result is not None:
            series = current().series
            brushes = [series[i % len(series)] for i in self.result.bars(self.by)[2]]
            bars.setOpts(brushes=brushes, pens=brushes)

    def show_result(self, result: HeadImportance, by: str = "masking") -> None:
        """One bar per head, grouped by attention kind (a gap and a colour each), and the curve."""
        self.result, self.by = result, by
        xs, heights, _groups, ticks = result.bars(by)
        self.bars.setOpts(x=xs, height=heights, width=0.8)
        self.bars_plot.title_text = "Importance" + (" (masking)" if by == "masking" else " (gradient)")
        self.bars_plot.y_label = "Δ loss" if by == "masking" else "|∂L/∂ξ|"
        self.bars_plot.restyle()  # (the title, the axis' name and the bars' colours)
        self.bars_plot.axes.getAxis("bottom").setTicks([ticks])
        self.curve.setData(result.curve_counts, result.curve_scores)
        self.curve_plot.axes.vb.setYRange(0, 1.02)
        if result.curve_counts:
            self.curve_plot.axes.vb.setXRange(0, max(result.curve_counts))
        self.ranking.setText(result.summary(by))


def _exact_curve(curve) -> None:
    curve.setPen(pg.mkPen(current().exact, width=2))
    curve.setSymbolBrush(current().exact)


class HeadsPanel(Panel):
    panel_name = "heads"
    title = "Head surgery"
    tab_title = "Heads"  # many tabs share the right dock area: each must be readable

    def __init__(self, state: SessionState, parent=None):
        super().__init__(state, parent)
        self.importance = None
        self._ranked_bundle = lambda: None  # a weak reference: a replaced model is not kept alive
        self.curve_points = CURVE_POINTS
        self._build()
        state.interventionsChanged.connect(self.grid.set_heads)
        notifier().changed.connect(self.show_changes)
        self.show_changes()
        self.follow(bundle=self._on_bundle, frame=self.show_changes)

    def _build(self) -> None:
        surgery_knobs, ranking_knobs = make_knobs(self, SURGERY_KNOBS), make_knobs(self, RANKING_KNOBS)
        self.export_button.setEnabled(False)
        self.grid = HeadGrid()
        self.grid.headClicked.connect(self._on_head_clicked)
        self.changes = text_label(" ", st.LABEL_PT)
        surgery = QWidget()  # the heads take the room (up to their cells' largest), the effect under them
        column(flow(*surgery_knobs, role="label"), (self.grid, 1), self.changes, (None, 0), parent=surgery)
        self.status = text_label(IMPORTANCE_NOTE, st.TICK_PT)
        self.add_job(self._on_done, self.tell_failure, progress_to=self.status.setText, button=self.run_button)
        self.view = ImportanceView()
        ranking = QWidget()
        column(flow(*ranking_knobs, role="label"),
               self.bar, self.status, (self.view, 1), parent=ranking)
        self.tabs = QTabWidget()
        self.tabs.addTab(surgery, "Surgery")
        self.tabs.addTab(ranking, "Importance")
        for page in (surgery, ranking):
            page.setAutoFillBackground(True)  # the window's colour, not the style's lighter tab pane
        column(self.tabs, parent=self, margins=4)

    def apply_screen_class(self, cls: ScreenClass) -> None:
        """Controls flow onto more lines as needed in every class; NARROW folds "Click a head to:"
        into the edit box's tooltip, so the first line holds the box and Reset."""
        narrow = cls is ScreenClass.NARROW
        self.click_label.setVisible(not narrow)
        self.edit_box.setToolTip("Click a head to: what the edit does to it" if narrow else "")

    def show_changes(self, *_) -> None:
        """The output before → after the edits, the changed tokens in the theme's accent."""
        mark = f"<b><u><span style='color:{st.colour('accent_text').name()}'>{{}}</span></u></b>"
        self.changes.setText(describe_html(self.state.frame, prob_text, mark))

    def _on_bundle(self, bundle) -> None:
        self.grid.set_model(attention_layers(bundle.model), bundle.config.n_heads)
        self.grid.set_heads(self.state.session.interventions)
        if self.importance is not None and self._ranked_bundle() is not bundle:
            self.importance = None
            self.export_button.setEnabled(False)
            self.status.setText("A new model: rank its heads again.")

    def reset_heads(self) -> None:
        self.state.session.set_interventions({})

    def _on_head_clicked(self, kind: str, layer: int, head: int) -> None:
        """Apply the chosen edit; clicking a head that already has it restores the head."""
        op = self.edit_box.currentData()
        current = self.state.session.interventions.get((kind, layer, head))
        self.state.session.set_head_intervention(kind, layer, head, None if current == op else op)

    def run_importance(self) -> None:
        """Rank the session's own model's heads off the GUI thread, with progress."""
        bundle = self.state.session.bundle
        if bundle is None or self.job.running:
            return
        self._ranked_bundle = weakref.ref(bundle)
        pairs, points, by = self.pairs_spin.value(), self.curve_points, self.by_box.currentData()
        self.status.setText("Ranking heads…")
        self.job.submit(lambda: head_importance(bundle, pairs, points=points, curve_by=by, progress=self.job.report))

    def _on_done(self, result) -> None:
        self.importance = result
        self.export_button.setEnabled(True)
        self.status.setText(result.headline())
        self.redraw_importance()

    def redraw_importance(self) -> None:
        if self.importance is not None:
            self.view.show_result(self.importance, self.by_box.currentData())

    def export_csv(self, path: str | Path) -> Path:
        """Write the ranking and the pruning curve (HeadImportance.to_csv) to `path`."""
        if self.importance is None:
            raise ValueError("Rank the heads first: there is nothing to export yet.")
        path = Path(path)
        path.write_text(self.importance.to_csv(), encoding="utf-8")
        return path

    def export_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export head importance", "head_importance.csv", "CSV (*.csv)")
        if path:
            try:
                self.state.inform(f"Wrote {self.export_csv(path)}")
            except (OSError, ValueError) as exc:
                self.state.inform(f"Could not write {path}: {exc}", "error")
