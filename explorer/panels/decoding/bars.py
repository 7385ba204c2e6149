"""Next-token distributions as horizontal bars, best at the top: `TokenBars` draws the rows the
height reads (the sampling panel's); `TopKBars` one decoding step's (and each [MASK]'s guesses)."""
from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetricsF

from explorer import style
from explorer.drawing.plot_style import let_shrink, set_title
from explorer.drawing.token_heatmap import display_piece
from model.inference.bundle import smoothed_target
from model.inference.next_token import bar_order, caption_lines, ranked_ids, rows_that_fit, smoothing_tip
from model.inference.token_rows import probability_axis_end, rank_tips, values_inside

BAR_HEIGHT = 0.7  # in rows
ROW_LINES = 1.15  # a row's least height in lines of its token's font: labels never overlap


def _pen(role: str, dash=Qt.PenStyle.DashLine, width: float = 2):
    return pg.mkPen(style.colour(role), width=width, style=dash)


class TokenBars(pg.PlotWidget):
    """Rows of (token, filled bar, dashed outline) `offer`ed best first, of which those the height
    reads are drawn (`rows_that_fit`), again on each resize; a row brought forward out of its rank
    stands after a dotted line. The axis ends at 1, or with `zoom` just past the largest value (the
    label says so); a number that would pass the end sits inside its bar."""

    def __init__(self, most: int, zoom: bool = False, parent=None):
        super().__init__(parent=parent, enableMenu=False)
        self.zoom = zoom
        plot = style.still_plot(self.getPlotItem())
        plot.invertY(True)  # row 0, the most probable, at the top
        plot.showGrid(x=True, alpha=0.25)
        plot.setLabel("bottom", "probability", **{"font-size": style.css_pt(style.SMALL_POINT_SIZE)})
        plot.getAxis("left").setStyle(tickFont=style.font(style.BASE_POINT_SIZE, bold=True, mono=True), tickLength=0)
        plot.getAxis("bottom").setStyle(tickFont=style.role_font("small"))
        plot.getAxis("bottom").enableAutoSIPrefix(False)  # probabilities, never "× 0.001"
        self.bars = pg.BarGraphItem(x0=[0], y=[0], width=[0], height=BAR_HEIGHT, brush=style.colour("bar"),
                                    pen=style.colour("bar"))  # pyqtgraph rejects empty pens
        self.outlines = pg.BarGraphItem(x0=[], y=[], width=[], height=BAR_HEIGHT, brush=None, pen=_pen("text"))
        self.labels = [pg.TextItem(anchor=(0, 0.5)) for _ in range(most)]  # each row's value, right of its bar
        self.skip_line = pg.InfiniteLine(angle=0, movable=False, pen=_pen("muted", Qt.PenStyle.DotLine))
        self.skip_line.setToolTip("The chosen token, from further down the ranking (its rank in its value's tooltip)")
        for item in (self.bars, self.outlines):
            plot.addItem(item)
        for item in (*self.labels, self.skip_line):  # (shown once there are rows)
            item.setVisible(False)
            plot.addItem(item, ignoreBounds=True)
        for label in self.labels:
            label.setFont(style.role_font("small"))
        self.ticks: list = []
        let_shrink(plot.titleLabel)  # a caption never widens its cell
        self.caption: tuple[str, ...] = ()
        self.offered = ([], [], np.zeros(0), None, [], None, None, {})  # (`offer`)
        plot.getViewBox().sigResized.connect(self._on_resized)

    def rows_that_fit(self, n: int) -> int:
        line = QFontMetricsF(self.getPlotItem().getAxis("left").style["tickFont"]).height() * ROW_LINES
        return rows_that_fit(n, self.getPlotItem().getViewBox().height(), line)

    def offer(self, ids: list[int], pieces: list[str], filled, outline=None, marks=(), title=None, order=None,
              **looks) -> None:
        """Rows best first: token ids, pieces, a filled bar and a dashed outline each, a mark each;
        `looks`: per-row lists of fills, edges (palette roles), texts, tips, colours (the texts');
        `title(n)` names n rows drawn; `order(n)` the rows' order when only n fit (else as offered)."""
        self.offered = (list(ids), list(pieces), np.asarray(filled), outline, list(marks), title, order, looks)
        self.fit()

    def fit(self) -> None:
        """Draw the offered rows the height reads: `rows`, `filled`, `outline`, `marks` are theirs;
        `token_ids` and `heights` every offered row's, in the order drawn."""
        ids, pieces, filled, outline, marks, title, order, looks = self.offered
        n = self.rows_that_fit(len(ids))
        every = order(n) if order else list(range(len(ids)))
        shown = every[:n]
        self.token_ids, self.heights = [ids[j] for j in every], filled[every]
        self.rows, self.filled, self.marks = self.token_ids[:n], self.heights[:n], [marks[j] for j in shown if marks]
        self.outline = None if outline is None else np.asarray(outline)[shown]
        look = {key: [list(v)[j] for j in shown] for key, v in looks.items()}
        fills, texts = look.get("fills", ["bar"] * n), look.get("texts", [""] * n)
        colours, tips = look.get("colours", ["text"] * n), look.get("tips", [""] * n)
        for i, label in enumerate(self.labels):
            label.setVisible(i < n)
        self.bars.setVisible(n > 0)
        self.outlines.setVisible(n > 0 and outline is not None)
        plot = self.getPlotItem()
        ticks = [[(float(i), display_piece(pieces[j])) for i, j in enumerate(shown)]]
        if ticks != self.ticks:  # unchanged rows: the axis is not laid out again
            self.ticks = ticks
            plot.getAxis("left").setTicks(ticks)
        moved = next((i for i, j in enumerate(shown) if i != j), None)
        self.skip_line.setVisible(moved is not None)
        if moved is not None:
            self.skip_line.setValue(moved - 0.5)
            self.skip_line.setPen(_pen("muted", Qt.PenStyle.DotLine))  # (the theme's now)
        if title is not None:
            self.set_title(title(n))
        if n == 0:
            return
        y, zeros = np.arange(n, dtype=float), np.zeros(n)
        self.bars.setOpts(x0=zeros, y=y, width=self.filled, height=BAR_HEIGHT, brushes=[style.colour(r) for r in fills],
                          pens=[pg.mkPen(style.colour("chosen_text" if r == "chosen" else "bar_edge"), width=1.5)
                                for r in fills])
        if outline is not None:
            self.outlines.setOpts(x0=zeros, y=y, width=self.outline, height=BAR_HEIGHT,
                                  pens=[_pen(r) for r in look.get("edges", ["text"] * n)])
        right = self.filled if outline is None else np.maximum(self.filled, self.outline)
        end = probability_axis_end(float(np.max(right)), self.zoom)
        plot.setXRange(0, end, padding=0)
        plot.setYRange(-0.6, n - 0.4, padding=0)
        name = "probability" if end >= 1.0 else f"probability (zoomed: 0 – {end:.2g})"
        if plot.getAxis("bottom").labelText != name:
            plot.setLabel("bottom", name, **{"font-size": style.css_pt(style.SMALL_POINT_SIZE)})
        for label, text in zip(self.labels, texts):
            label.setText(text)
        per_px = end / max(plot.getViewBox().width(), 1.0)
        inside = values_inside(right, [(label.textItem.boundingRect().width() + 4) * per_px for label in self.labels[:n]],
                               end)
        for i, label in enumerate(self.labels[:n]):
            on_bar = "on_chosen" if fills[i] == "chosen" else "text"
            label.setColor(style.colour(on_bar if inside[i] else colours[i]))
            label.setToolTip(tips[i])
            label.setAnchor((1, 0.5) if inside[i] else (0, 0.5))
            label.setPos(float(right[i]) + (-4 if inside[i] else 4) * per_px, float(i))

    def _on_resized(self, *_) -> None:
        """Rows, numbers and title for the new room."""
        self.fit()
        self.set_title(*self.caption)

    def set_title(self, *parts: str) -> None:
        """The title: its parts on as few lines as the plot's width needs (a part is never broken)."""
        self.caption = parts
        plot = self.getPlotItem()
        metrics = QFontMetricsF(style.role_font("title"))
        room = self.width() - plot.getAxis("left").width() - 12
        # the title is rich text: a token such as <eos> would otherwise vanish as an unknown tag
        title = "<br>".join(html.escape(line) for line in caption_lines(parts, metrics.horizontalAdvance, room))
        if title != plot.titleLabel.text:
            set_title(plot, title)


class TopKBars(TokenBars):
    """One step's k most probable next tokens (and the chosen one if it ranks lower), as many as
    the height reads, the chosen one moved into view after a dotted line; the rest stay in the data."""

    def __init__(self, k: int = 10, parent=None):
        super().__init__(k + 1, parent=parent)
        self.k = k
        # Section 5.4: a model trained on smoothed targets aims its best guess at 1 − ε + ε/V; named left of the line
        self.smoothed = pg.InfiniteLine(angle=90, movable=False, pen=_pen("muted"), label="smoothed target {value:.2f}",
                                        labelOpts={"position": 0.98, "anchors": [(1, 1), (1, 1)]})
        self.smoothed.label.setFont(style.role_font("small"))
        self.smoothed.setVisible(False)
        self.getPlotItem().addItem(self.smoothed, ignoreBounds=True)
        self.clear_data()

    def set_smoothing(self, epsilon: float, vocab_size: int) -> None:
        """The model was trained with label smoothing ε over `vocab_size` tokens (0: it was not, or
        that is not known): a dashed line at the smoothed target's top, 1 − ε + ε/V."""
        on = epsilon > 0 and vocab_size > 0
        self.smoothed.setVisible(on)
        if on:
            self.smoothed.setValue(smoothed_target(epsilon, vocab_size))
            self.smoothed.setPen(_pen("muted"))  # (the theme's now)
            self.smoothed.label.setColor(style.MUTED)
            self.smoothed.setToolTip(smoothing_tip(epsilon, vocab_size))

    def set_data(self, probs, pieces: list[str], chosen: int | None, sample_probs=None) -> None:
        """probs: (V,) the model's distribution; pieces: the vocabulary; chosen: the id the decoder
        emitted; sample_probs: (V,) what sampling drew from, or None."""
        probs = np.asarray(probs, dtype=np.float64)
        ids = ranked_ids(probs, self.k, chosen)
        self.chosen, at = chosen, ids.index(chosen) if chosen in ids else -1
        heights = probs[ids]
        roles = ["chosen" if i == chosen else "bar" for i in ids]
        self.offer(ids, [pieces[i] for i in ids], heights.astype(np.float32),
                   None if sample_probs is None else np.asarray(sample_probs, dtype=np.float64)[ids],
                   order=lambda n: bar_order(len(ids), at, n), fills=roles, tips=rank_tips(range(len(ids)), heights, self.k),
                   texts=[style.prob_text(float(h)) for h in heights],
                   colours=["chosen_text" if r == "chosen" else "text" for r in roles])

    def clear_data(self) -> None:
        self.set_smoothing(0.0, 0)  # no bars: no target line
        self.chosen = None
        self.offer([], [], np.zeros(0, dtype=np.float32))
