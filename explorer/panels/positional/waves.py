"""The positional panel's waves: PE(pos, i) against position, one colour per chosen pair (sin
solid, cos dashed) with its wavelength 2π·10000^(2i/d) (Section 3.5). Dots are the model's values,
the thin line the same formula between positions, so a fast wave is not read as a zig-zag."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtWidgets import QAbstractItemView, QLabel, QListWidget, QSizePolicy, QWidget

from explorer import style
from explorer.drawing import plot_style as st
from explorer.panels.layouts import column, row
from explorer.panels.texts import text_label
from explorer.theme import notifier
from model.interpret.position_texts import pair_entry, waves_legend
from model.interpret.positions import default_pairs, pair_dims, sinusoid_curve

SMOOTH = 8  # formula samples per position for the line between the dots


def value_plot(x_name: str, y_name: str) -> tuple[pg.GraphicsLayoutWidget, pg.PlotItem]:
    """(canvas, plot): a gridded plot of values over `x_name`, its axis showing the values themselves
    (no "(x0.001)")."""
    canvas = st.graphics_widget()
    plot = canvas.addPlot(row=0, col=0)
    plot.hideButtons()
    plot.showGrid(x=True, y=True, alpha=0.25)
    st.style_axis(plot.getAxis("bottom"), x_name)
    st.style_axis(plot.getAxis("left"), y_name)
    plot.getAxis("left").enableAutoSIPrefix(False)
    return canvas, plot


COMPACT_HEIGHT = 280  # px at the normal scale (× the presentation's): lower, the legend takes one line


class WavesView(QWidget):
    """The chosen pairs' curves: `curves` and `lines` hold (dimension, plot item)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.pairs_list = QListWidget(selectionMode=QAbstractItemView.SelectionMode.ExtendedSelection,
                                      sizeAdjustPolicy=QAbstractItemView.SizeAdjustPolicy.AdjustToContents)
        self.pairs_list.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Expanding)  # its entries wide
        self.canvas, self.plot = value_plot("position pos", "PE")  # short on any plot; the tooltip names it whole
        self.plot.getAxis("left").setToolTip("PE(pos, dim): the encoding's value at position pos, dimension dim")
        # the legend under the plot, never over the waves; the formula over it, wrapped between its halves
        self.legend = text_label("", st.TICK_PT, sheet="background: {canvas}; color: {text}; padding: 4px 10px;")
        self.formula = text_label("", st.TITLE_PT, sheet="background: {canvas}; color: {text}; padding: 2px 10px;")
        self.formula.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        left = column(QLabel("Dimension pairs\nctrl-click: several"), (self.pairs_list, 1))
        right = column(self.formula, (self.canvas, 1), self.legend)
        right.setSpacing(0)
        row(left, (right, 1), parent=self, margins=0)
        self.curves: list[tuple[int, pg.PlotDataItem]] = []
        self.lines: list[tuple[int, pg.PlotDataItem]] = []
        self.table: np.ndarray | None = None
        self.learned = False
        self.pe_layout = "interleaved"  # where pair i lives: dims (2i, 2i+1), or (i, d/2 + i) for Marian
        self.compact: bool | None = None  # short: the legend's key in its tooltip
        self.pairs_list.itemSelectionChanged.connect(self._rebuild)
        notifier().changed.connect(self._rebuild)  # the curves' colours and the legend's text follow the theme

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._fit_height()

    def _fit_height(self) -> None:
        """Short: the legend's key (what dots and lines are) goes to its tooltip."""
        compact = self.height() < COMPACT_HEIGHT * style.scale()
        if compact != self.compact:
            self.compact = compact
            self._show_legend()

    def selected_pairs(self) -> list[int]:
        return sorted(self.pairs_list.row(item) for item in self.pairs_list.selectedItems())  # (row i: pair i)

    def select_pairs(self, pairs: list[int]) -> None:
        with QSignalBlocker(self.pairs_list):
            for row in range(self.pairs_list.count()):
                self.pairs_list.item(row).setSelected(row in pairs)
        self._rebuild()

    def set_table(self, table: np.ndarray, learned: bool, title: str, layout: str = "interleaved") -> None:
        d_model = table.shape[1]
        same = self.table is not None and (d_model, learned, layout) == (self.table.shape[1], self.learned, self.pe_layout)
        keep = self.selected_pairs() if same else default_pairs(d_model)
        drawn = same and self.table is not None and np.array_equal(table, self.table) and self.curves
        self.table, self.learned, self.pe_layout = table, learned, layout
        if not same or self.pairs_list.count() == 0:
            with QSignalBlocker(self.pairs_list):
                self.pairs_list.clear()
                self.pairs_list.addItems([pair_entry(d_model, i, layout, learned) for i in range(d_model // 2)])
        self.formula.setText(" · ".join(f"<span style='white-space:nowrap'>{part}</span>"  # breaks between
                                         for part in title.split(" · ")))                   # formulas only
        if not drawn:  # (the same table again: its curves stay)
            self.select_pairs(keep)

    def _rebuild(self) -> None:
        """Curves for the chosen pairs (rebuilt on a selection or table change, not per frame)."""
        for _, item in self.curves + self.lines:
            self.plot.removeItem(item)
        self.curves, self.lines = [], []
        if self.table is None:
            return
        length, d_model = self.table.shape
        pos = np.arange(length)
        fine = np.linspace(0, length - 1, (length - 1) * SMOOTH + 1)
        pairs = self.selected_pairs()
        for i, color in zip(pairs, self._colours(len(pairs))):
            for dim, dash in zip(pair_dims(d_model, i, self.pe_layout), (Qt.PenStyle.SolidLine, Qt.PenStyle.DashLine)):
                pen = pg.mkPen(color, width=2.2, style=dash)
                if not self.learned:  # the formula between the dots
                    line = self.plot.plot(fine, sinusoid_curve(d_model, dim, fine, self.pe_layout), pen=pen)
                    self.lines.append((dim, line))
                dots = self.plot.plot(pos, self.table[:, dim], pen=pen if self.learned else None, symbol="o",
                                      symbolSize=5 if self.learned else 6, symbolBrush=color, symbolPen=None)
                self.curves.append((dim, dots))
        self._show_legend()
        self.plot.enableAutoRange()

    @staticmethod
    def _colours(n: int) -> list[str]:
        """The first `n` chosen pairs' colours: the theme's data series, in turn."""
        series = st.current().series
        return [series[k % len(series)] for k in range(n)]

    def _show_legend(self) -> None:
        """What each curve is, in the curves' colours; its key in the tooltip when short (`compact`)."""
        if self.table is None:
            return
        pairs = self.selected_pairs()
        legend, tip = waves_legend(self.table.shape[1], pairs, self._colours(len(pairs)), self.pe_layout, self.learned,
                                   bool(self.compact), st.current().muted)
        self.legend.setText(legend)
        self.legend.setToolTip(tip)
