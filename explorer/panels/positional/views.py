"""The positional panel's position × dimension map, and the similarity of positions beside the
linear shift PE(pos+k) = M_k·PE(pos) (Section 3.5)."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QCheckBox, QLabel, QSpinBox, QWidget

from explorer import style
from explorer.drawing import plot_style as st
from explorer.drawing.heatmap import Heatmap
from explorer.panels.layouts import column, row
from explorer.panels.positional.waves import value_plot
from explorer.theme import notifier
from model.interpret.position_texts import grouped_columns, shift_key
from model.interpret.positions import rotation, shift_error, shift_texts, similarity, symmetric_levels


class PEHeatmapView(QWidget):
    """Every position × every dimension, blue −1 … white 0 … red +1; "sin dims first" regroups the
    interleaved columns (labels keep the true dimension) into two fans, as a Marian model stores them."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.grouped = QCheckBox("sin dims first, then cos dims")
        self.heatmap = Heatmap(colormap=st.signed_cmap(), levels=(-1.0, 1.0), colour_bar="PE(pos, i)", square=False)
        self.heatmap.set_axis_names("position pos", "dimension i")
        column(self.grouped, (self.heatmap, 1), parent=self, margins=0)
        self.columns: np.ndarray | None = None  # which model dimension each shown column is
        self._args = None
        self.grouped.toggled.connect(lambda _: self._args and self.set_table(*self._args))

    def set_table(self, table: np.ndarray, learned: bool, title: str, layout: str = "interleaved") -> None:
        self._args = (table, learned, title, layout)
        d = table.shape[1]
        halves = layout == "halves"
        self.grouped.setEnabled(not halves)
        self.grouped.setToolTip("This model already stores the sines in dims 0…d/2−1 and the cosines in d/2…d−1"
                                if halves else "Every sin dimension, then every cos one; the labels keep the true dimension")
        self.columns = grouped_columns(d, self.grouped.isChecked(), layout)
        levels = symmetric_levels(table) if learned else (-1.0, 1.0)
        self.heatmap.set_levels(levels)
        self.heatmap.set_data(table[:, self.columns], [str(i) for i in range(table.shape[0])], [str(c) for c in self.columns],
                              row_names=True)
        self.heatmap.set_title(title)


class SimilarityShiftView(QWidget):
    """Left: PE(p)·PE(q) for every pair of positions. Right: M_k·PE(pos) on top of PE(pos+k)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.sim = Heatmap(colormap=st.weight_cmap(), colour_bar="PE(p) · PE(q)", square=False)
        self.sim.set_axis_names("position p", "position q")

        self.shift_canvas, self.shift_plot = value_plot("dimension i", "value")
        self.shift_title = style.eliding_line()  # over the plot, never a reason for it to widen
        self.key = QLabel(wordWrap=True)  # the curves' key under the plot, never over the waves
        self.curve_pos, self.curve_target = self.shift_plot.plot(), self.shift_plot.plot()
        self.curve_rotated = self.shift_plot.plot(pen=None, symbol="x", symbolSize=9)
        self.pos_spin, self.k_spin = QSpinBox(maximum=10_000, value=3), QSpinBox(minimum=1, maximum=10_000, value=5)
        self.result = QLabel(" ", wordWrap=True)
        pos_label, k_label = QLabel("pos"), QLabel("offset k")
        for widget in (pos_label, self.pos_spin, k_label, self.k_spin, self.result):
            style.set_font_role(widget, "label")
        controls = row(pos_label, self.pos_spin, k_label, self.k_spin, None)
        for spin in (self.pos_spin, self.k_spin):
            spin.valueChanged.connect(self._update_shift)
        right = column(self.shift_title, (self.shift_canvas, 1), self.key, controls)
        column((row((self.sim, 1), (right, 1)), 1), self.result, parent=self, margins=0)  # the verdict full width
        self.table: np.ndarray | None = None
        self.learned = False
        self.pe_layout = "interleaved"
        self.error: float | None = None
        notifier().changed.connect(self._update_shift)  # the curves and their key in the theme's colours
        self._update_shift()

    def set_table(self, table: np.ndarray, learned: bool, title: str, layout: str = "interleaved") -> None:
        self.table, self.learned, self.pe_layout = table, learned, layout
        alike = similarity(table)
        lo, hi = float(alike.min()), float(alike.max())
        self.sim.set_levels((lo, hi))
        positions = [str(i) for i in range(table.shape[0])]
        self.sim.set_data(alike, positions, positions, row_names=True)
        self.sim.set_title("PE(p)·PE(q)" + (" (learned)" if learned else ": near positions alike"))
        self.pos_spin.setMaximum(max(0, table.shape[0] - 2))
        self.k_spin.setMaximum(max(1, table.shape[0] - 1))
        self._update_shift()

    def _update_shift(self, *_) -> None:
        p = st.current()
        self.curve_pos.setPen(pg.mkPen(p.pe_pos, width=1.5))
        self.curve_target.setPen(pg.mkPen(p.pe_target, width=2.5))
        self.curve_rotated.setSymbolPen(pg.mkPen(p.pe_rotated, width=2))
        table = self.table
        if table is None:
            return
        length, d = table.shape  # (at least 2 positions: 1 ≤ k and 0 ≤ pos, pos + k < length)
        k = min(self.k_spin.value(), length - 1)
        pos = min(self.pos_spin.value(), length - 1 - k)
        dims = np.arange(d)
        self.curve_pos.setData(dims, table[pos])
        self.curve_target.setData(dims, table[pos + k])
        rotates = not self.learned  # a learned table has no rotation to show
        self.key.setText(shift_key((p.pe_pos, p.pe_target, p.pe_rotated), rotates))
        rotated = rotation(d, k, self.pe_layout) @ table[pos].astype(np.float64) if rotates else []  # M_k·PE(pos)
        self.curve_rotated.setData(dims if rotates else [], rotated)
        self.error = shift_error(table, k, self.pe_layout) if rotates else None
        title, text = shift_texts(self.learned, pos, k, length, d, self.pe_layout, self.error)
        self.shift_title.setText(title)
        self.shift_title.setToolTip(title)
        self.result.setText(text)
