"""`MaskPredictionsView`: what a masked language model (BERT-like, encoder-only) guesses for each [MASK].

An encoder-only model reads the whole sentence at once (no causal mask) and predicts the
token behind each [MASK] from both sides. Per [MASK]: its position, its context and the top-5
candidates as horizontal bars (the best in orange), from `ForwardResult.mask_predictions`.
"""
from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QFrame, QGridLayout, QLabel, QScrollArea, QVBoxLayout, QWidget

from explorer import style
from explorer.drawing.token_heatmap import display_piece
from explorer.panels.decoding.chips import chip

TOP_K = 5
GROUP_COLUMNS = 2  # side by side on a wide dock; a single [MASK] gets the whole width


def context_html(pieces: list[str], position: int, filled: str | None = None, window: int = 4) -> str:
    """The words around position `position`, the masked one shown as a blank (or its filling)."""
    lo, hi = max(0, position - window), min(len(pieces), position + window + 1)
    words = []
    for i in range(lo, hi):
        if i == position:
            words.append(chip(filled if filled is not None else "____",
                              style.current().mask_blank, style.current().chosen_text, True))
        else:
            words.append(html.escape(display_piece(pieces[i])))
    return ("… " if lo > 0 else "") + " ".join(words) + (" …" if hi < len(pieces) else "")


class MaskBars(pg.PlotWidget):
    """Top-k candidates for one [MASK]: horizontal bars, best on top, probability at each bar's end."""

    def __init__(self, k: int = TOP_K, parent=None):
        super().__init__(parent=parent, enableMenu=False)
        self.k = k
        plot = style.still_plot(self.getPlotItem())
        plot.invertY(True)  # the best candidate on top, read first
        plot.showGrid(x=True, alpha=0.25)
        plot.setLabel("bottom", "probability", **{"font-size": style.css_pt(style.SMALL_POINT_SIZE)})
        self.tick_font = style.font(style.TITLE_POINT_SIZE, bold=True, mono=True)
        plot.getAxis("left").setStyle(tickFont=self.tick_font, tickLength=0)
        plot.getAxis("bottom").setStyle(tickFont=style.font(style.SMALL_POINT_SIZE))
        self.bars = pg.BarGraphItem(x0=[0], y=[0], width=[0], height=0.7, brush=style.colour("bar"), pen=style.colour("bar"))
        plot.addItem(self.bars)
        self.values: list[pg.TextItem] = []
        for _ in range(k):
            item = pg.TextItem(anchor=(0.0, 0.5), color=style.TEXT)
            item.setFont(style.font(style.BASE_POINT_SIZE, bold=True))
            plot.addItem(item)
            self.values.append(item)
        plot.getAxis("bottom").setTicks([[(v, f"{v:g}") for v in (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)], []])
        plot.setXRange(0, 1.18, padding=0)  # room right of a full bar for its number
        plot.setYRange(-0.6, k - 0.4, padding=0)
        self.pieces: list[str] = []
        self.probs = np.zeros(0, dtype=np.float64)
        self._fit_axis()

    def _axis_font(self):
        """The left axis' font as drawn: presentation mode replaces it with a scaled copy, so
        `tick_font` alone measured "goat" too narrow and pyqtgraph dropped the label."""
        return self.getPlotItem().getAxis("left").style.get("tickFont") or self.tick_font

    def _fit_axis(self) -> None:
        """Axis width for the widest candidate and a height that gives each bar a text line."""
        metrics = QFontMetricsF(self._axis_font())
        self.setMinimumHeight(int(metrics.height() * (self.k + 2.5)))
        widest = max((metrics.horizontalAdvance(display_piece(p)) for p in self.pieces), default=20.0)
        left = self.getPlotItem().getAxis("left")
        if left.width() != int(widest + 14):
            left.setWidth(int(widest + 14))

    def sizeHint(self):  # noqa: N802 - Qt's name
        """Its least height: a scroll area sizes a word-wrapped page by preferred heights, and
        QGraphicsView's default would push the last bars below the fold on a short screen."""
        return QSize(400, self.minimumHeight())

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        if hasattr(self, "pieces"):  # (pyqtgraph resizes it while it is being built)
            self._fit_axis()  # (presentation mode rescales the fonts, and the layout then resizes us)

    def set_data(self, pieces: list[str], probs: list[float]) -> None:
        """pieces/probs: the candidates, best first (MaskPrediction.pieces / .probs)."""
        n = min(len(pieces), self.k)
        self.pieces, self.probs = list(pieces[:n]), np.asarray(probs[:n], dtype=np.float64)
        y = np.arange(n)
        self.bars.setOpts(x0=np.zeros(n), y=y, width=self.probs, height=0.7,
                          brushes=[style.colour("chosen" if i == 0 else "bar") for i in range(n)],
                          pens=[pg.mkPen(style.colour("chosen_text" if i == 0 else "bar_edge"), width=1.5) for i in range(n)])
        for i, item in enumerate(self.values):
            item.setVisible(i < n)
            if i < n:
                p = float(self.probs[i])
                item.setText(style.prob_text(p))
                item.setColor(style.colour("chosen_text") if i == 0 else style.TEXT)
                item.setPos(p + 0.01, i)
        left = self.getPlotItem().getAxis("left")
        left.setTicks([[(i, display_piece(piece)) for i, piece in enumerate(self.pieces)]])
        self._fit_axis()


class MaskGroup(QFrame):
    """One [MASK]: a heading (which blank, where), its context, and its candidate bars."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setFrameShape(QFrame.StyledPanel)
        self.heading = QLabel()
        self.heading.setFont(style.font(style.TITLE_POINT_SIZE, bold=True))
        self.heading.setWordWrap(True)  # two lines, not a card wider than half a narrow screen
        self.context = QLabel()
        self.context.setTextFormat(Qt.RichText)
        self.context.setFont(style.font(style.TITLE_POINT_SIZE))
        self.context.setWordWrap(True)
        self.bars = MaskBars()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.heading)
        layout.addWidget(self.context)
        layout.addWidget(self.bars, 1)
        self.position = -1

    def set_prediction(self, number: int, prediction, pieces: list[str]) -> None:
        self.position = int(prediction.position)
        best = prediction.pieces[0] if prediction.pieces else "?"
        self.heading.setText(f"[MASK] {number} · position {self.position}: best guess “{display_piece(best)}”")
        self.context.setText(context_html(pieces, self.position))
        self.bars.set_data(list(prediction.pieces), list(prediction.probs))


class MaskPredictionsView(QWidget):
    """The masked LM's guesses for every [MASK] of the input, or a hint when there is none."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.sentence = QLabel()
        self.sentence.setTextFormat(Qt.RichText)
        self.sentence.setWordWrap(True)
        self.sentence.setFont(style.font(style.TITLE_POINT_SIZE))
        self.hint = QLabel()
        self.hint.setWordWrap(True)
        self.hint.setFont(style.font(style.TITLE_POINT_SIZE))
        self.hint.setAlignment(Qt.AlignCenter)
        style.set_sheet(self.hint, "background:{info_bg}; color:{info_text}; padding:18px; border-radius:6px;")
        self.explain = QLabel(
            "Encoder-only (BERT-like): the whole sentence is read at once — no causal mask, so each "
            "blank is guessed from the words on both sides. Bars: the model's softmax at that position "
            "(top 5; orange = the filling).")
        self.explain.setWordWrap(True)
        self.explain.setFont(style.font(style.BASE_POINT_SIZE))
        style.set_sheet(self.explain, "color: {muted}")
        self.grid_host = QWidget()
        self.grid = QGridLayout(self.grid_host)
        self.grid.setContentsMargins(0, 0, 0, 0)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.NoFrame)
        scroll.setWidget(self.grid_host)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.sentence)
        layout.addWidget(self.explain)
        layout.addWidget(self.hint)
        layout.addWidget(scroll, 1)
        self.groups: list[MaskGroup] = []  # a pool: grows to the most masks seen, extras hidden
        self.n_shown = 0
        self.mask_token = "[MASK]"
        self.example = "the [MASK] says moo"
        self.set_result(None)

    def set_mask_token(self, token: str | None, example: str | None = None) -> None:
        """The loaded model's mask symbol and an example sentence with it (for the hint)."""
        self.mask_token = token or "[MASK]"
        self.example = example or f"the {self.mask_token} says moo"

    @property
    def shown_groups(self) -> list[MaskGroup]:
        return self.groups[: self.n_shown]

    def _group(self, i: int) -> MaskGroup:
        while len(self.groups) <= i:
            self.groups.append(MaskGroup())
        return self.groups[i]

    def set_result(self, result) -> None:
        """Show a ForwardResult's mask predictions (None: nothing yet)."""
        predictions = list(getattr(result, "mask_predictions", None) or [])
        pieces = list(result.src_pieces) if result is not None else []
        for i, prediction in enumerate(predictions):
            group = self._group(i)
            group.set_prediction(i + 1, prediction, pieces)
            slot = divmod(i, 1 if len(predictions) == 1 else GROUP_COLUMNS)  # a single [MASK]: the whole width
            if self.grid.indexOf(group) < 0 or self.grid.getItemPosition(self.grid.indexOf(group))[:2] != slot:
                self.grid.addWidget(group, *slot)
            group.setVisible(True)
        for group in self.groups[len(predictions):]:
            group.setVisible(False)
        self.n_shown = len(predictions)
        self.sentence.setText(self._sentence_html(pieces, predictions) if result is not None else "")
        self.sentence.setVisible(result is not None)
        self.explain.setVisible(bool(predictions))
        self.hint.setVisible(not predictions)
        self.hint.setText(
            f"No {self.mask_token} in the input. Type {self.mask_token} where a word is missing, "
            f"e.g. “{self.example}”, and the model guesses the word from the words around it.")

    def _sentence_html(self, pieces: list[str], predictions) -> str:
        at = {p.position: (i + 1, p.pieces[0] if p.pieces else "?") for i, p in enumerate(predictions)}
        words = []
        for i, piece in enumerate(pieces):
            if i in at:
                n, best = at[i]
                words.append(chip(best, style.current().mask_blank, style.current().chosen_text, True)
                             + f"<sub>{n}</sub>")
            else:
                words.append(html.escape(display_piece(piece)))
        label = "Filled in" if predictions else "Input"
        return f"<b>{label}:</b>&nbsp; " + " ".join(words)

    def clear_data(self) -> None:
        self.set_result(None)
