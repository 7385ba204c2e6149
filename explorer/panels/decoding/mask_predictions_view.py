"""`MaskPredictionsView`: a masked LM's (BERT-like) guesses for each [MASK], read from both sides:
a bar chart of its top-5 candidates per blank, titled with its position and context
(`ForwardResult.mask_predictions`)."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QGridLayout, QScrollArea, QWidget

from explorer import style
from explorer.panels.decoding.bars import TopKBars
from explorer.panels.layouts import column
from explorer.panels.texts import text_label
from model.inference.token_rows import MASK_EXPLAIN, mask_context, mask_heading, mask_hint, words_html
from model.interpret.token_chips import blank

TOP_K = 5
GROUP_COLUMNS = 2  # side by side on a wide dock; a single [MASK] gets the whole width
CONTEXT = 4  # words each side of a blank in its chart's title
LEAST_LINES = 18  # a chart's least height in lines of text: its title (up to three lines), five bars, the axis


class MaskPredictionsView(QWidget):
    """The masked LM's guesses for every [MASK] of the input, or a hint when there is none."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.sentence = style.set_font_role(text_label(rich=True), "title")
        self.hint = style.set_font_role(text_label(sheet="background:{info_bg}; color:{info_text}; padding:18px; "
                                                       "border-radius:6px;"), "title")
        self.hint.setAlignment(Qt.AlignCenter)
        self.explain = text_label(MASK_EXPLAIN, sheet="color: {muted}")
        grid_host = QWidget()
        self.grid = QGridLayout()
        self.grid.setContentsMargins(0, 0, 0, 0)
        column(self.grid, parent=grid_host, margins=0)  # the charts share the page's height, scrolling below their least
        scroll = QScrollArea(widgetResizable=True, frameShape=QFrame.Shape.NoFrame)
        scroll.setWidget(grid_host)
        column(self.sentence, self.explain, self.hint, (scroll, 1), parent=self, margins=6)
        self.shown_groups: list[TopKBars] = []
        self.set_mask_token(None)
        self.set_result(None)

    def set_mask_token(self, token: str | None, example: str | None = None) -> None:
        """The loaded model's mask symbol and an example sentence with it (for the hint)."""
        self.mask_token = token or "[MASK]"
        self.example = example or f"the {self.mask_token} says moo"

    def set_result(self, result) -> None:
        """Show a ForwardResult's mask predictions (None: nothing yet): a chart per [MASK], in two
        columns (a single one gets the whole width)."""
        predictions = list(getattr(result, "mask_predictions", None) or [])
        pieces = list(result.src_pieces) if result is not None else []
        for group in self.shown_groups:  # the last input's charts go: none stays on screen stale
            group.setParent(None)
            group.deleteLater()
        self.shown_groups = [self._chart(i + 1, p, pieces) for i, p in enumerate(predictions)]
        for i, group in enumerate(self.shown_groups):
            self.grid.addWidget(group, *divmod(i, 1 if len(predictions) == 1 else GROUP_COLUMNS))
            if self.isVisible():  # (a widget added to a shown page is otherwise shown only later)
                group.show()
        palette = style.current()
        chips = {p.position: blank(p.pieces[0] if p.pieces else "?", palette, style.MONO_FAMILY) + f"<sub>{i + 1}</sub>"
                 for i, p in enumerate(predictions)}
        self.sentence.setText(f"<b>{'Filled in' if predictions else 'Input'}:</b>&nbsp; " + words_html(pieces, chips))
        self.sentence.setVisible(result is not None)
        self.explain.setVisible(bool(predictions))
        self.hint.setVisible(not predictions)
        self.hint.setText(mask_hint(self.mask_token, self.example))

    @staticmethod
    def _chart(number: int, prediction, pieces: list[str]) -> TopKBars:
        """The number-th [MASK]'s candidates, titled with where it is and its context."""
        chart = TopKBars(TOP_K)
        chart.position = int(prediction.position)
        chart.setMinimumHeight(int(LEAST_LINES * chart.fontMetrics().height()))
        chart.set_data(prediction.probs, list(prediction.pieces), 0 if prediction.pieces else None)
        chart.set_title(*mask_heading(number, chart.position, prediction.pieces),
                        mask_context(pieces, chart.position, CONTEXT))
        return chart
