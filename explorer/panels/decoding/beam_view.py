"""`BeamTreeView`: beam search (Section 6.1) as its tree of hypotheses (`model.inference.beam_tree`):
x the step, a dot per node with its token and score; pruned grey, finished green, the winner orange,
a prompt a purple stem."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor, QFontMetricsF, QTextDocument

from explorer import presentation, style
from explorer.drawing.token_heatmap import display_piece
from explorer.theme import notifier
from model.inference.beam_tree import edge_state, label_density, node_labels, node_tip, step_ticks
from model.interpret.token_chips import node_label

EDGE_PENS = {"pruned": ("beam_pruned", 1.5), "live": ("beam_alive", 2), "best": ("beam_best", 4),
             "prompt": ("prompt", 4)}  # kind of edge → (palette role, width), in drawing order
NODE_ROLES = {"prompt": "prompt", "best": "beam_best", "pruned": "beam_pruned", "finished": "beam_finished",
              "live": "beam_alive"}  # a node's state → its palette role
LABEL_ROLES = {"pruned": "disabled_text", "prompt": "prompt_text"}  # (else the text's own colour)


def label_sizes(scale: float) -> tuple[float, float]:
    """A node label's token and score point sizes at the presentation `scale` (the HTML carries them)."""
    return style.BASE_POINT_SIZE * scale, style.SMALL_POINT_SIZE * scale


class BeamTreeView(pg.PlotWidget):
    """All hypotheses beam search expanded; one dot per `BeamNode`."""

    def __init__(self, parent=None):
        super().__init__(parent=parent, enableMenu=False)
        plot = self.getPlotItem()
        plot.setMenuEnabled(False)
        plot.hideButtons()
        plot.hideAxis("left")
        plot.invertY(True)
        plot.setLabel("bottom", "decoding step (the token each hypothesis ends with)",
                      **{"font-size": style.css_pt(style.SMALL_POINT_SIZE)})
        plot.getAxis("bottom").setStyle(tickFont=style.role_font("small"))
        self.current = pg.LinearRegionItem(values=(0.5, 1.5), movable=False,
                                           brush=pg.mkBrush(QColor(9, 105, 218, 28)), pen=pg.mkPen(None))
        plot.addItem(self.current)
        self.edges = {kind: pg.PlotDataItem(connect="pairs") for kind in EDGE_PENS}
        self._pen_edges()
        self.scatter = pg.ScatterPlotItem(size=15, pxMode=True, hoverable=True, tip=self._tip)
        for item in (*self.edges.values(), self.scatter):
            plot.addItem(item)
        self.labels: list[pg.TextItem] = []  # reused between results; only labels shown are filled
        self.label_html: list[str] = []  # what each label item shows now (set again only when it changes)
        self.colours: list[QColor] = []  # per node, in BeamResult order (what the tests inspect)
        self.result = None
        notifier().changed.connect(self._restyle)  # a bound method: disconnected with the view

    def _pen_edges(self) -> None:
        # (scaled with the presentation, as every line: `_scaled_pen` widens what is set here)
        for kind, (role, width) in EDGE_PENS.items():
            colour = style.colour(role)
            self.edges[kind].setPen(pg.mkPen(colour.darker(120) if kind == "live" else colour, width=width * style.scale()))

    def _restyle(self, *_) -> None:
        """The theme changed: edges, nodes and labels in its colours (so pruned edges stay faint
        on the dark theme's black canvas, not the light theme's pale grey); the user's zoom and pan stay."""
        self._pen_edges()
        if self.result is not None:
            self._paint_nodes()

    def _label(self, i: int) -> pg.TextItem:
        """The i-th label item, made when first needed and kept for every later result."""
        while len(self.labels) <= i:
            item = pg.TextItem(anchor=(-0.08, 0.5))
            item.setVisible(False)  # (shown when filled)
            self.getPlotItem().addItem(item)
            self.labels.append(item)
            self.label_html.append("")
        return self.labels[i]

    def _tip(self, x, y, data) -> str:
        """Hover text of a node: its whole hypothesis and both scores."""
        if self.result is None or data is None:
            return ""
        return node_tip(self.result, int(data), self._pieces, display_piece)

    def set_result(self, result, pieces: list[str]) -> None:
        """Draw `result` (a BeamResult); `pieces` is the target vocabulary for token labels."""
        self.result, self._pieces, nodes = result, pieces, result.nodes
        self._label_parts = parts = node_labels(result, pieces, display_piece)
        edges = {kind: [] for kind in EDGE_PENS}
        for p in (p for p in parts if p.node.parent is not None):
            edges[edge_state(p.node, p.best)] += [parts[p.node.parent].pos, p.pos]
        for kind, item in self.edges.items():
            xy = np.array(edges[kind], dtype=float).reshape(-1, 2)
            item.setData(xy[:, 0], xy[:, 1])
        stem = any(n.prompt for n in nodes)
        for label in self.labels[len(nodes):]:
            label.setVisible(False)
        xs, ys = [p.pos[0] for p in parts], [p.pos[1] for p in parts]
        self._y_range = self._y_applied = (min(ys) - 1.0, max(ys) + 0.7)  # (y points down: room above is off `min`)
        left = 0.6 if stem else 0.3  # a centred stem label reaches half a word left of <bos>
        self.getPlotItem().setRange(xRange=(min(xs) - left, max(xs) + 1.4), yRange=self._y_range, padding=0)
        self.getPlotItem().getAxis("bottom").setTicks([step_ticks(nodes, pieces, xs)])
        self._n_steps = int(max(xs)) - int(min(xs)) + 1
        self._n_rows = max(ys) - min(ys) + 1.7  # the y range drawn, in slots
        self._paint_nodes()

    def _paint_nodes(self) -> None:
        """The nodes and their labels in the theme's colours."""
        self.colours = [style.colour(NODE_ROLES[p.state]) for p in self._label_parts]
        self.scatter.setData(
            [{"pos": p.pos, "brush": pg.mkBrush(c), "pen": pg.mkPen(c.darker(140), width=1.5),
              "symbol": "s" if p.node.finished else ("d" if p.node.prompt else "o"), "data": p.node.id}
             for p, c in zip(self._label_parts, self.colours)])
        self._density = None
        self._apply_density()

    def _apply_density(self) -> None:
        """Label as much as the room allows (`label_density`; zoom with the wheel): the best path
        always, every score in the hover tip."""
        if not self._label_parts:
            return
        scale = presentation.applied_scale()  # the labels' sizes are in their HTML: scaled here
        box = self.getPlotItem().getViewBox()
        px = box.width() / (self._n_steps + 1.2) / scale  # (unscaled px) of a step's column
        one, two = self._label_heights(scale)
        # the best path's labels alternate above/right of their dots when wider than a column
        crowded = self._best_label_width() + 12 > px * scale
        above = 1.5 * (two + 8) if crowded else 0.0  # px over the top slot for the labels drawn above
        row = (box.height() - above) / max(self._n_rows, 1.0)  # screen px between two slots of a step
        wanted = (self._y_range[0] - above / max(row, 1.0), self._y_range[1])
        if wanted != self._y_applied:  # only when it changes: a resize keeps the user's zoom and pan
            self._y_applied = wanted
            box.setYRange(*wanted, padding=0)
        density = (*label_density(px, row, one, two), crowded, scale)
        if density == self._density:
            return
        self._density = density
        kept_tokens, kept_scores, pruned_tokens, crowded, _ = density
        for i, part in enumerate(self._label_parts):
            if not (part.always or (pruned_tokens if part.node.pruned else kept_tokens)):
                if i < len(self.labels):
                    self.labels[i].setVisible(False)
                continue  # a hidden label is neither made nor filled
            label = self._label(i)
            with_score = part.score and (part.always or (kept_scores and not part.node.pruned))
            colour = getattr(style.current(), LABEL_ROLES.get(part.state, "text"))
            text = node_label(colour, part.best, part.token, part.score if with_score else "", label_sizes(scale),
                              style.MONO_FAMILY)
            if text != self.label_html[i]:
                label.setHtml(text)
                self.label_html[i] = text
            label.setPos(*part.pos)
            anchor = part.anchor
            if anchor is None:  # (the stem keeps its own placement)
                above = crowded and part.always and int(round(part.pos[0])) % 2 == 1
                anchor = (0.5, 1.5) if above else (-0.08, 0.5)
            label.setAnchor(anchor)
            label.setVisible(True)

    def _label_heights(self, scale: float) -> tuple[float, float]:
        """Screen px of a one-line (token) and a two-line (token and score) label's text, as the labels lay it out."""
        doc = QTextDocument()
        doc.setDefaultFont(self.labels[0].textItem.font() if self.labels else style.font())
        heights = []
        for score in ("", "-0.00"):
            doc.setHtml(node_label(style.current().text, True, "0", score, label_sizes(scale), style.MONO_FAMILY))
            heights.append(doc.size().height() - 2 * doc.documentMargin())
        return heights[0], heights[1]

    def _best_label_width(self) -> float:
        """Screen px of the widest best-path label line (`style.font` sizes by the presentation scale)."""
        tokens = QFontMetricsF(style.font(style.BASE_POINT_SIZE, bold=True, mono=True))
        scores = QFontMetricsF(style.role_font("small"))
        return max((max(tokens.horizontalAdvance(p.token), scores.horizontalAdvance(p.score))
                    for p in self._label_parts if p.always), default=0.0)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if "_label_parts" in self.__dict__ and self.getPlotItem() is not None:  # (None once closed)
            self._apply_density()

    def set_current_step(self, t: int | None) -> None:
        """Shade the tree column of decoding step t (None: none)."""
        self.current.setVisible(t is not None)
        if t is not None:
            self.current.setRegion((t - 0.4, t + 0.4))

    def clear_data(self) -> None:
        self.result, self._label_parts, self.colours = None, [], []
        self.scatter.clear()
        for item in self.edges.values():
            item.setData([], [])
        for label in self.labels:
            label.setVisible(False)
