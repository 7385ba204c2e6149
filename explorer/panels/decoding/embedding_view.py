"""`EmbeddingView`: what a sentence encoder without a language-model head computes: one vector
per "|"-separated sentence (`Frame.embedding`), shown as their cosine similarities (colour and
number in each cell), under a note that the model has no LM head."""
from __future__ import annotations

from PySide6.QtWidgets import QWidget

from explorer.drawing.heatmap import Heatmap
from explorer.panels.layouts import column, row
from explorer.panels.texts import NOTE_SHEET, text_label
from model.interpret.token_chips import NO_HEAD, sentences_html


class EmbeddingView(QWidget):
    """The no-LM-head note, the sentences (S1, S2, …) and their cosine-similarity matrix."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.note = text_label(sheet=NOTE_SHEET.format(level="info"))
        self.sentences = text_label(rich=True, top_left=True)
        self.matrix = Heatmap("cosine similarity")
        column(self.note, (row((self.matrix, 3), (self.sentences, 2)), 1), parent=self, margins=4)

    def set_embedding(self, embedding, dim: int) -> None:
        """Show `embedding` (model.inference.embedding.SentenceEmbeddings, or None before any input)."""
        self.note.setText(NO_HEAD.format(dim=dim))
        if embedding is None:
            self.matrix.clear_data()
            self.sentences.setText("")
            return
        n = len(embedding.sentences)
        names = [f"S{i + 1}" for i in range(n)]
        sims = embedding.similarity.numpy()
        texts = [[[f"{sims[r, c]:.2f}"] for c in range(n)] for r in range(n)]
        self.matrix.set_data(sims.clip(0.0, 1.0), names, names, texts=texts)
        self.sentences.setText(sentences_html(embedding.sentences, embedding.n_tokens))
