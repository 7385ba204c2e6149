"""`ParallelPassView`: the teacher-forced pass beside the sequential run, and the mask ablation.

Training feeds the decoder the whole target at once; the causal mask (Section 3.2.3) is
what makes row t of that pass equal step t of decoding one token at a time. This view shows
the equality as a number (max |Δp|), and a switch that removes the mask: the attention then
reaches into the upper triangle — the future — and the per-position predictions change.
That is the "cheating" the mask prevents.
"""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QGridLayout, QHeaderView, QLabel, QTableWidget,
                               QTableWidgetItem, QWidget)

from explorer import style
from explorer.drawing.token_heatmap import TokenHeatmap, display_piece

EQUAL_ATOL = 1e-5  # float32 rounding between the sequential and the parallel pass stays far below
ROWS = ("input", "with mask", "no mask")  # decoder input; the prediction at each position


class ParallelPassView(QWidget):
    """Parallel pass of the decoded sequence, with or without the causal mask."""

    causalChanged = Signal(bool)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.run = None
        self.t = 0
        self.layer = self.head = 0
        self.remove_mask = QCheckBox("Remove the causal mask")
        self.remove_mask.setToolTip("Ablation: run the parallel pass with causal=False, so every position "
                                    "can attend the tokens after it — the future the mask hides in training.")
        self.remove_mask.setFont(style.font(style.BASE_POINT_SIZE, bold=True))
        self.remove_mask.toggled.connect(self._on_toggle)
        self.equality = QLabel()
        self.equality.setFont(style.font(style.BASE_POINT_SIZE + 1, bold=True))
        self.equality.setWordWrap(True)
        self.heatmap = TokenHeatmap()
        self.future = QLabel()
        self.future.setFont(style.font(style.BASE_POINT_SIZE))
        self.future.setWordWrap(True)
        self.table = QTableWidget(len(ROWS), 0)
        self.table.setVerticalHeaderLabels(list(ROWS))
        self.table.setFont(style.font(style.BASE_POINT_SIZE, bold=True, mono=True))
        self.table.setToolTip("Row 'input': what the decoder reads at each position (<bos> y1 y2 …). "
                              "The rows below: the token it predicts there, with and without the causal mask.")
        self.table.verticalHeader().setFont(style.font(style.SMALL_POINT_SIZE))
        self.table.horizontalHeader().setFont(style.font(style.SMALL_POINT_SIZE))
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.NoSelection)
        self.table.setFocusPolicy(Qt.NoFocus)
        self.table.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.table.installEventFilter(self)  # a new font (presentation) → a new fixed height
        self.grid = QGridLayout(self)
        self.grid.setContentsMargins(4, 4, 4, 4)
        self.beside = None  # the map beside the texts (a wide, low page) or above them
        self._arrange(False)

    def _arrange(self, beside: bool) -> None:
        """Reflow: on a wide, low page (a 1280×720 beamer) the map stands left of the texts and
        the table, so it keeps its height; otherwise everything is stacked."""
        if beside == self.beside:
            return
        self.beside = beside
        g = self.grid
        for w in (self.remove_mask, self.equality, self.heatmap, self.future, self.table):
            g.removeWidget(w)
        for r in range(6):
            g.setRowStretch(r, 0)
        for c in range(2):
            g.setColumnStretch(c, 0)
        if beside:
            g.addWidget(self.heatmap, 0, 0, 5, 1)
            for r, w in enumerate((self.remove_mask, self.equality, self.future, self.table)):
                g.addWidget(w, r, 1)
            g.setRowStretch(4, 1)
            g.setColumnStretch(0, 5)
            g.setColumnStretch(1, 6)
        else:
            for r, w in enumerate((self.remove_mask, self.equality, self.heatmap, self.future, self.table)):
                g.addWidget(w, r, 0)
            g.setRowStretch(2, 1)

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._arrange(self.width() > 1.5 * self.height())

    def eventFilter(self, obj, event) -> bool:  # noqa: N802
        if obj is self.table and event.type() == QEvent.FontChange:
            self._fit_table()
        return False

    @property
    def causal(self) -> bool:
        return not self.remove_mask.isChecked()

    @property
    def current(self):
        """The parallel pass on display (masked or the ablation)."""
        if self.run is None:
            return None
        return self.run.masked if self.causal else self.run.unmasked

    # -- inputs from the panel ------------------------------------------------------------------
    def set_run(self, run) -> None:
        self.run = run
        self.t = min(self.t, len(run.steps) - 1) if run is not None else 0
        self._fill_table()
        self.refresh()

    def set_step(self, t: int) -> None:
        self.t = t
        self.refresh()

    def set_head(self, layer: int, head: int) -> None:
        self.layer, self.head = layer, head
        self.refresh()

    def _on_toggle(self, _checked: bool) -> None:
        self.refresh()
        self.causalChanged.emit(self.causal)

    # -- drawing ----------------------------------------------------------------------------------
    def refresh(self) -> None:
        run, p = self.run, self.current
        if run is None:
            self.heatmap.clear_data()
            self.equality.setText("")
            self.future.setText("")
            return
        t, causal = self.t, self.causal
        row = run.row(t)  # n_prompt + t: a decoder-only model's prompt rows come first
        labels = run.pieces(p.tgt_in)
        att = p.self_attention[self.layer, self.head].numpy()  # (T, T)
        self.heatmap.set_data(att, labels, labels, blocked=~p.mask.numpy(), highlight_row=row,
                              boundary=not causal, separator=1 + run.n_prompt if run.n_prompt else None)
        mode = "causal mask ON" if causal else "causal mask OFF"
        self.heatmap.set_title(f"Parallel pass, {mode}: self-attention L{self.layer + 1} H{self.head + 1}")
        diff = run.difference(t, causal)
        if causal:
            self.equality.setText(f"Row {row} of the parallel pass = step {t}: max |Δp| = {diff:.1e}")
            style.set_sheet(self.equality, "color: {success}")
        else:
            shown = f"{diff:.2f}" if diff >= 0.01 else f"{diff:.1e}"
            same = diff < EQUAL_ATOL  # e.g. the last row of a one-layer model: it has no future
            self.equality.setText(f"Without the mask, row {row} {'=' if same else '≠'} step {t}: max |Δp| = {shown}")
            style.set_sheet(self.equality, "color: {success}" if same else "color: {error}")
        mass = p.future_mass(self.layer, self.head).numpy()
        changed = sum(a != b for a, b in zip(run.masked.predicted, run.unmasked.predicted))
        n = len(run.masked.predicted)
        if causal:
            self.future.setText(
                f"With the mask no row attends a later token ({100 * mass.max():.0f}\u00a0% above the diagonal), so row {row} "
                f"computes exactly what the decoder computed at step {t}. Without it, {changed} of {n} "
                "predictions would change (red).")
        else:
            self.future.setText(
                f"Row {row} puts {100 * mass[row]:.0f}\u00a0% of its attention on later tokens (all rows: "
                f"{100 * mass.mean():.0f}\u00a0%) — tokens it cannot see while decoding, including the one it "
                f"must predict. {changed} of {n} predictions change (red).")
        self._mark_current_column()

    def _fill_table(self) -> None:
        run = self.run
        table = self.table
        if run is None:
            table.setColumnCount(0)
            return
        masked, unmasked = run.masked.predicted, run.unmasked.predicted
        table.setColumnCount(len(masked))
        table.setHorizontalHeaderLabels([str(i) for i in range(len(masked))])
        rows = (run.pieces(run.masked.tgt_in), run.pieces(masked), run.pieces(unmasked))
        for r, pieces in enumerate(rows):
            for c, piece in enumerate(pieces):
                item = QTableWidgetItem(display_piece(piece))
                item.setTextAlignment(Qt.AlignCenter)
                if r == 0 and 1 <= c <= run.n_prompt:
                    item.setForeground(QBrush(style.colour("prompt")))
                    item.setToolTip("given in the prompt, not generated")
                if r == 2 and masked[c] != unmasked[c]:
                    item.setForeground(QBrush(style.ERROR))
                    item.setToolTip(f"with the mask: {masked[c]!r}, without: {unmasked[c]!r}")
                table.setItem(r, c, item)
        self._fit_table()

    def _fit_table(self) -> None:
        """All three rows visible, at the table's current font."""
        table = self.table
        table.resizeColumnsToContents()
        table.resizeRowsToContents()
        header = max(table.horizontalHeader().sizeHint().height(), table.horizontalHeader().height())
        height = header + sum(table.rowHeight(r) for r in range(len(ROWS)))
        table.setFixedHeight(height + table.horizontalScrollBar().sizeHint().height() + 4)

    def _mark_current_column(self) -> None:
        run = self.run
        if run is None:
            return
        masked, unmasked = run.masked.predicted, run.unmasked.predicted
        current = run.row(self.t) if run.steps else self.t
        for c in range(self.table.columnCount()):
            for r in range(len(ROWS)):
                item = self.table.item(r, c)
                if item is None:
                    continue
                if r == 2 and masked[c] != unmasked[c]:
                    item.setBackground(QBrush(style.colour("changed")))  # the mask ablation changed it
                elif c == current:
                    item.setBackground(QBrush(style.colour("current_column")))
                elif r == 0 and 1 <= c <= run.n_prompt:
                    item.setBackground(QBrush(style.colour("prompt_fill")))
                else:
                    item.setBackground(QBrush(Qt.NoBrush))

    def changed_positions(self) -> list[int]:
        """Positions whose predicted token differs with vs. without the mask."""
        if self.run is None:
            return []
        return [i for i, (a, b) in enumerate(zip(self.run.masked.predicted, self.run.unmasked.predicted)) if a != b]

    def displayed_attention(self) -> np.ndarray:
        return self.heatmap.matrix
