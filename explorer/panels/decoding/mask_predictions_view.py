"""`MaskPredictionsView`: a masked LM's (BERT-like) guesses for each [MASK], read from both sides:
its position, context and top-5 candidates as bars (`ForwardResult.mask_predictions`)."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QGridLayout, QScrollArea, QWidget

from explorer import style
from explorer.panels.decoding.bars import TopKBars
from explorer.panels.layouts import column
from explorer.panels.texts import text_label
from model.inference.token_rows import MASK_EXPLAIN, mask_heading, mask_hint, words_html
from model.interpret.token_chips import blank as blank_chip

TOP_K = 5
GROUP_COLUMNS = 2  # side by side on a wide dock; a single [MASK] gets the whole width
CONTEXT = 4  # words each side of a blank in its group's context line
BARS_HEIGHT = 260  # px: five bars with their values and tokens


def blank(text: str) -> str:
    """A [MASK]'s place in a sentence: a chip of its filling (or "____")."""
    return blank_chip(text, style.current(), style.MONO_FAMILY)


class MaskGroup(QFrame):
    """One [MASK]: a heading (which blank, where), its context, and its candidate bars."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setFrameShape(QFrame.StyledPanel)
        self.heading = text_label(point_size=style.TITLE_POINT_SIZE, bold=True)
        self.context = text_label(point_size=style.TITLE_POINT_SIZE, rich=True)
        self.bars = TopKBars(TOP_K)
        self.bars.setFixedHeight(BARS_HEIGHT)
        column(self.heading, self.context, self.bars, parent=self, margins=6)
        self.position = -1

    def set_prediction(self, number: int, prediction, pieces: list[str]) -> None:
        self.position = int(prediction.position)
        self.heading.setText(mask_heading(number, self.position, prediction.pieces))
        self.context.setText(words_html(pieces, {self.position: blank("____")}, max(0, self.position - CONTEXT),
                                        min(len(pieces), self.position + CONTEXT + 1)))
        self.bars.set_data(prediction.probs, list(prediction.pieces), 0 if prediction.pieces else None)


class MaskPredictionsView(QWidget):
    """The masked LM's guesses for every [MASK] of the input, or a hint when there is none."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.sentence = text_label(point_size=style.TITLE_POINT_SIZE, rich=True)
        self.hint = text_label(point_size=style.TITLE_POINT_SIZE,
                               sheet="background:{info_bg}; color:{info_text}; padding:18px; border-radius:6px;")
        self.hint.setAlignment(Qt.AlignCenter)
        self.explain = text_label(MASK_EXPLAIN, sheet="color: {muted}")
        grid_host = QWidget()
        self.grid = QGridLayout()
        self.grid.setContentsMargins(0, 0, 0, 0)
        column(self.grid, None, parent=grid_host, margins=0)  # the groups stand at the top of the page
        scroll = QScrollArea(widgetResizable=True, frameShape=QFrame.Shape.NoFrame)
        scroll.setWidget(grid_host)
        column(self.sentence, self.explain, self.hint, (scroll, 1), parent=self, margins=6)
        self.shown_groups: list[MaskGroup] = []
        self.set_mask_token(None)
        self.set_result(None)

    def set_mask_token(self, token: str | None, example: str | None = None) -> None:
        """The loaded model's mask symbol and an example sentence with it (for the hint)."""
        self.mask_token = token or "[MASK]"
        self.example = example or f"the {self.mask_token} says moo"

    def set_result(self, result) -> None:
        """Show a ForwardResult's mask predictions (None: nothing yet): a group per [MASK], in two
        columns (a single one gets the whole width)."""
        predictions = list(getattr(result, "mask_predictions", None) or [])
        pieces = list(result.src_pieces) if result is not None else []
        for group in self.shown_groups:  # the last input's groups go: none stays on screen stale
            group.setParent(None)
            group.deleteLater()
        self.shown_groups = [MaskGroup() for _ in predictions]
        for i, (group, prediction) in enumerate(zip(self.shown_groups, predictions)):
            group.set_prediction(i + 1, prediction, pieces)
            self.grid.addWidget(group, *divmod(i, 1 if len(predictions) == 1 else GROUP_COLUMNS))
            if self.isVisible():  # (a widget added to a shown page is otherwise shown only later)
                group.show()
        chips = {p.position: blank(p.pieces[0] if p.pieces else "?") + f"<sub>{i + 1}</sub>"
                 for i, p in enumerate(predictions)}
        self.sentence.setText(f"<b>{'Filled in' if predictions else 'Input'}:</b>&nbsp; " + words_html(pieces, chips))
        self.sentence.setVisible(result is not None)
        self.explain.setVisible(bool(predictions))
        self.hint.setVisible(not predictions)
        self.hint.setText(mask_hint(self.mask_token, self.example))

    def clear_data(self) -> None:
        self.set_result(None)
