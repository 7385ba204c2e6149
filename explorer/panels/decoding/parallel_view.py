"""`ParallelPassView`: the causal mask (Section 3.2.3) makes row t of the teacher-forced parallel pass
equal step t of decoding one token at a time (max |Δp|); removing it lets attention reach the future
and predictions change (red in the table)."""
from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from explorer import style
from explorer.drawing.token_heatmap import TokenHeatmap, display_piece
from explorer.latest_job import LatestJob
from explorer.panels.layouts import column, row
from explorer.panels.texts import text_label
from explorer.theme import notifier
from model.interpret.decode_texts import future_note, mask_equality, table_marks

COLUMNS = ("input", "with mask", "no mask")  # decoder input; the prediction at each position
BACKGROUNDS = {"changed": "changed", "current": "current_column", "prompt": "prompt_fill"}  # mark → palette role


class ParallelPassView(QWidget):
    """Parallel pass of the decoded sequence, with or without the causal mask: its map left of the
    equality, the note on the future, and a table of each position's input and predictions."""

    causalChanged = Signal(bool)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.run = None
        self.job = LatestJob(self)  # computes a run's pass without the mask when the frame left it for later
        self.job.done.connect(lambda _unmasked: self.set_run(self.run))  # (the newest run's: draw it)
        self.t = 0
        self.layer = self.head = 0
        self.remove_mask = QCheckBox("Remove the causal mask", toolTip="Ablation: run the parallel pass with "
                                     "causal=False, so every position can attend the tokens after it — the future "
                                     "the mask hides in training.")
        style.set_font_role(self.remove_mask, "heading")
        self.remove_mask.toggled.connect(self._on_toggle)
        self.equality = style.set_font_role(text_label(), "heading")
        self.heatmap = TokenHeatmap()
        self.future = text_label()
        self.table = table = QTableWidget(0, len(COLUMNS), editTriggers=QAbstractItemView.NoEditTriggers,
                                          selectionMode=QAbstractItemView.NoSelection, focusPolicy=Qt.NoFocus,
                                          toolTip="Column 'input': what the decoder reads at each position (<bos> "
                                          "y1 y2 …). The columns after it: the token it predicts there, with and "
                                          "without the causal mask.")
        notifier().changed.connect(self._mark_cells)  # a bound method: disconnected with the view
        style.set_font_role(table, "mono")
        table.setHorizontalHeaderLabels(COLUMNS)
        table.horizontalHeader().setSectionResizeMode(QHeaderView.Stretch)
        style.set_font_role(table.verticalHeader(), "small")
        table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        table.viewport().installEventFilter(self)
        beside = column(self.remove_mask, self.equality, self.future, (table, 1), margins=0)
        row((self.heatmap, 5), (beside, 4), parent=self, margins=4)

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

    def show_step(self, t: int, layer: int, head: int) -> None:
        self.t, self.layer, self.head = t, layer, head
        self.refresh()

    def _on_toggle(self, _checked: bool) -> None:
        self.refresh()
        self.causalChanged.emit(not self.remove_mask.isChecked())

    # -- drawing ----------------------------------------------------------------------------------
    def refresh(self) -> None:
        run, causal = self.run, not self.remove_mask.isChecked()
        self._mark_cells()
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
        self._scroll()

    def _scroll(self) -> None:
        """The step's position in sight (again when the table is laid out: `eventFilter`)."""
        if self.run is not None:
            self.table.scrollToItem(self.table.item(self.run.row(self.t), 0))

    def eventFilter(self, obj, event) -> bool:  # noqa: N802
        if event.type() == QEvent.Resize:
            self._scroll()
        return False

    def _fill_table(self) -> None:
        """A row per position: its number, the token read there and the predictions with and
        without the mask ("…" while that pass still runs); once a run (a step only re-marks them)."""
        run = self.run
        table, n = self.table, len(run.masked.predicted) if run is not None else 0
        table.clearContents()
        table.setRowCount(n)
        if n == 0:
            return
        unmasked = run.unmasked.predicted if run.unmasked is not None else []
        columns = [[display_piece(p) for p in run.pieces(seq)] if seq else ["…"] * n
                   for seq in (run.masked.tgt_in, run.masked.predicted, unmasked)]
        table.setVerticalHeaderLabels([str(i) for i in range(n)])
        for c, texts in enumerate(columns):
            for r, text in enumerate(texts):
                item = QTableWidgetItem(text)
                item.setTextAlignment(Qt.AlignCenter)
                table.setItem(r, c, item)

    def _mark_cells(self, *_) -> None:
        """The current position, the prompt and the predictions the mask ablation changes
        (`table_marks`), in the theme's colours."""
        run = self.run
        for r, marks in enumerate(table_marks(run, self.t) if run is not None else []):
            for c, mark in enumerate(marks):
                item = self.table.item(c, r)
                item.setBackground(QBrush(style.colour(BACKGROUNDS[mark])) if mark else QBrush(Qt.NoBrush))
                if mark == "changed":
                    item.setForeground(QBrush(style.ERROR))
                    item.setToolTip(f"with the mask: {run.masked.predicted[c]!r}, without: {run.unmasked.predicted[c]!r}")
                if r == 0 and 1 <= c <= run.n_prompt:
                    item.setForeground(QBrush(style.colour("prompt")))
                    item.setToolTip("given in the prompt, not generated")
