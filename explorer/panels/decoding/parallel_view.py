"""`ParallelPassView`: the teacher-forced pass beside the sequential run, and the mask ablation.

The causal mask (Section 3.2.3) is what makes row t of the parallel pass equal step t of decoding
one token at a time: the view shows that as a number (max |Δp|), and a switch that removes the
mask, so the attention reaches into the future and predictions change (red in the table).
"""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QBrush, QFontMetrics
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QGridLayout,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from explorer import style
from explorer.drawing.token_heatmap import TokenHeatmap, display_piece
from explorer.latest_job import LatestJob
from explorer.panels.texts import text_label
from explorer.theme import notifier
from model.interpret.decode_texts import band_size, future_note, mask_equality, table_marks

ROWS = ("input", "with mask", "no mask")  # decoder input; the prediction at each position
BAND_ROWS = 1 + len(ROWS)  # a band of positions: their numbers, then the three rows
MAX_BANDS = 2  # more, and the table scrolls sideways instead
BACKGROUNDS = {"changed": "changed", "current": "current_column", "prompt": "prompt_fill"}  # mark → palette role


class ParallelPassView(QWidget):
    """Parallel pass of the decoded sequence, with or without the causal mask."""

    causalChanged = Signal(bool)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.run = None
        self.job = LatestJob(self)  # computes a run's pass without the mask when the frame left it for later
        self.job.done.connect(self._on_unmasked)
        self.t = 0
        self.layer = self.head = 0
        self.remove_mask = QCheckBox("Remove the causal mask")
        self.remove_mask.setToolTip("Ablation: run the parallel pass with causal=False, so every position "
                                    "can attend the tokens after it — the future the mask hides in training.")
        self.remove_mask.setFont(style.font(style.BASE_POINT_SIZE, bold=True))
        self.remove_mask.toggled.connect(self._on_toggle)
        self.equality = text_label(point_size=style.BASE_POINT_SIZE + 1, bold=True)
        self.heatmap = TokenHeatmap()
        self.future = text_label()
        self.table = table = QTableWidget(0, 0)
        self._band = 1  # positions a band of the table holds (from its width)
        self._refitting = False
        notifier().changed.connect(self._on_theme)  # a bound method: disconnected with the view
        table.setFont(style.font(style.BASE_POINT_SIZE, bold=True, mono=True))
        table.setToolTip("Row 'input': what the decoder reads at each position (<bos> y1 y2 …). "
                         "The rows below: the token it predicts there, with and without the causal mask.")
        table.verticalHeader().setFont(style.font(style.SMALL_POINT_SIZE))
        table.horizontalHeader().hide()  # each band numbers its own positions
        table.horizontalHeader().setMinimumSectionSize(8)
        table.verticalHeader().setSectionResizeMode(QHeaderView.Fixed)  # rows sized in `_fill_table`
        table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        table.setSelectionMode(QAbstractItemView.NoSelection)
        table.setFocusPolicy(Qt.NoFocus)
        table.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        table.installEventFilter(self)  # a new font (presentation) or width: the bands are cut again
        self.grid = QGridLayout(self)
        self.grid.setContentsMargins(4, 4, 4, 4)
        self.beside = None  # the map beside the texts (a wide, low page) or above them
        self._arrange(False)

    def _arrange(self, beside: bool) -> None:
        """On a wide, low page the map stands left of the texts and the table, so it keeps its
        height; otherwise everything is stacked."""
        if beside == self.beside:
            return
        self.beside = beside
        texts = (self.remove_mask, self.equality, self.future, self.table)
        for w in (*texts, self.heatmap):
            self.grid.removeWidget(w)
        for r, w in enumerate(texts if beside else (*texts[:2], self.heatmap, *texts[2:])):
            self.grid.addWidget(w, r, 1 if beside else 0)
        if beside:
            self.grid.addWidget(self.heatmap, 0, 0, 5, 1)
        for i in range(5):
            self.grid.setRowStretch(i, int(i == (4 if beside else 2)))
        for c, stretch in enumerate((5, 6) if beside else (0, 0)):
            self.grid.setColumnStretch(c, stretch)

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._arrange(self.width() > 1.5 * self.height())
        if event.oldSize().height() != event.size().height() and not self._refitting:  # room for two bands?
            self._refitting = True
            self._refill()
            self._refitting = False

    def eventFilter(self, obj, event) -> bool:  # noqa: N802
        resized = event.type() == QEvent.Resize and event.oldSize().width() != event.size().width()
        # (and when shown: filled while its tab was hidden, it was cut for no width at all)
        if obj is self.table and (resized or event.type() in (QEvent.FontChange, QEvent.Show)):
            self._refill()
        return False

    def _refill(self) -> None:
        """The table cut again into bands for the room it has now, its cells marked."""
        if self.run is not None:
            self._fill_table()
            self._mark_cells()

    @property
    def causal(self) -> bool:
        return not self.remove_mask.isChecked()

    # -- inputs from the panel ------------------------------------------------------------------
    def set_run(self, run) -> None:
        self.run = run
        self.t = min(self.t, len(run.steps) - 1) if run is not None else 0
        pending = run is not None and run.unmasked is None
        self.remove_mask.setEnabled(not pending)
        if pending and self.remove_mask.isChecked():
            self.remove_mask.setChecked(False)
        self._fill_table()
        self.refresh()
        if pending:
            self.job.submit(run.ensure_unmasked)

    def wait_until_drawn(self, msecs: int = 60000) -> bool:
        """Block until the pass without the mask is computed and drawn (headless figures, tests)."""
        return self.job.wait(msecs)

    def _on_unmasked(self, _unmasked) -> None:
        """The newest run's pass without the mask is in: draw it."""
        if self.run is not None:
            self.set_run(self.run)

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
        run, causal = self.run, self.causal
        if run is None:
            self.heatmap.clear_data()
            self.equality.setText("")
            self.future.setText("")
            return
        p = run.masked if causal else run.unmasked
        labels = run.pieces(p.tgt_in)
        self.heatmap.set_data(p.self_attention[self.layer, self.head].numpy(), labels, labels, blocked=~p.mask.numpy(),
                              highlight_row=run.row(self.t), boundary=not causal,
                              separator=1 + run.n_prompt if run.n_prompt else None)
        mode = "causal mask ON" if causal else "causal mask OFF"
        self.heatmap.set_title(f"Parallel pass, {mode}: self-attention L{self.layer + 1} H{self.head + 1}")
        text, same = mask_equality(run, self.t, causal)
        self.equality.setText(text)
        style.set_sheet(self.equality, "color: {success}" if same else "color: {error}")
        self.future.setText(future_note(run, self.t, self.layer, self.head, causal))
        self._mark_cells()

    def _fill_table(self) -> None:
        """The positions in bands of as many columns as the table's width holds, each band a row
        of position numbers over the three rows, so no row scrolls sideways and every change (the
        no-mask row's red cells) stays in sight."""
        table, n = self.table, self.positions()
        table.clear()
        if n == 0:
            table.setRowCount(0)
            table.setColumnCount(0)
            return
        run = self.run
        unmasked = run.unmasked.predicted if run.unmasked is not None else []
        texts = [[display_piece(p) for p in run.pieces(seq)] if seq else ["…"] * n  # (no mask: still running)
                 for seq in (run.masked.tgt_in, run.masked.predicted, unmasked)]
        small = style.font(style.SMALL_POINT_SIZE)
        column = 8 + max(QFontMetrics(small).horizontalAdvance(str(n)),
                         *(QFontMetrics(table.font()).horizontalAdvance(t) for row in texts for t in row))
        self._band = per_band = self._per_band(n, column)
        bands = -(-n // per_band)
        table.setRowCount(bands * BAND_ROWS)
        table.setColumnCount(per_band)
        table.setVerticalHeaderLabels(["position", *ROWS] * bands)
        for c in range(n):
            band, col = divmod(c, per_band)
            for r, text in enumerate((str(c), *(row[c] for row in texts))):
                item = QTableWidgetItem(text)
                item.setTextAlignment(Qt.AlignCenter)
                if r == 0:
                    item.setForeground(QBrush(style.colour("muted")))
                    item.setFont(small)
                table.setItem(band * BAND_ROWS + r, col, item)
        for r in range(table.rowCount()):
            table.setRowHeight(r, QFontMetrics(small if r % BAND_ROWS == 0 else table.font()).height() + 2)
        for col in range(per_band):
            table.setColumnWidth(col, column)
        overflow = per_band * column > table.viewport().width()  # one band on a narrow page: it scrolls
        scroll = table.horizontalScrollBar().sizeHint().height() if overflow else 0
        height = sum(table.rowHeight(r) for r in range(table.rowCount()))
        table.setFixedHeight(height + 2 * table.frameWidth() + 2 + scroll)

    def _per_band(self, n: int, column: int) -> int:
        """Positions a band holds at the table's width (`band_size`); all of them before the table is shown."""
        table = self.table
        header = max(QFontMetrics(table.verticalHeader().font()).horizontalAdvance(r) for r in ("position", *ROWS))
        room = (table.width() or self.width()) - header - 16 - 2 * table.frameWidth() - 2
        band_px = sum(QFontMetrics(f).height() + 2 for f in (style.font(style.SMALL_POINT_SIZE), *[table.font()] * 3))
        return band_size(n, column, room, band_px, self._table_room(), MAX_BANDS) if table.isVisible() else n

    def _table_room(self) -> float:
        """The height the page leaves the table below the texts (beside the map, or under it:
        then the least the map needs, not the height it has now)."""
        above = (self.remove_mask, self.equality, self.future)
        spacing = self.grid.spacing() if self.grid.spacing() >= 0 else 6
        heatmap = 0 if self.beside else self.heatmap.minimumSizeHint().height() + spacing
        return self.height() - sum(w.height() for w in above) - heatmap - spacing * (len(above) + 1) - 8

    def _on_theme(self, _name: str) -> None:
        """The position numbers, prompt and change colours are set per item: set them again."""
        self._refill()

    def cell(self, row: int, position: int) -> QTableWidgetItem | None:
        """The item of ROWS[row] at a decoder position, whichever band it is in."""
        band, col = divmod(position, max(1, self._band))
        return self.table.item(band * BAND_ROWS + 1 + row, col)

    def positions(self) -> int:
        return len(self.run.masked.predicted) if self.run is not None else 0

    def _mark_cells(self) -> None:
        """The current position, the prompt and the predictions the mask ablation changes (`table_marks`)."""
        run = self.run
        for r, marks in enumerate(table_marks(run, self.t) if run is not None else []):
            for c, mark in enumerate(marks):
                item = self.cell(r, c)
                item.setBackground(QBrush(style.colour(BACKGROUNDS[mark])) if mark else QBrush(Qt.NoBrush))
                if mark == "changed":
                    item.setForeground(QBrush(style.ERROR))
                    item.setToolTip(f"with the mask: {run.masked.predicted[c]!r}, without: {run.unmasked.predicted[c]!r}")
                if r == 0 and 1 <= c <= run.n_prompt:
                    item.setForeground(QBrush(style.colour("prompt")))
                    item.setToolTip("given in the prompt, not generated")

    def displayed_attention(self) -> np.ndarray:
        return self.heatmap.matrix
