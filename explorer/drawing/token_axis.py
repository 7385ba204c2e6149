"""`TokenAxis`: an axis that names every token — shrinking its labels to a legible minimum,
then turning them, and only then showing every k-th one and saying so."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, QTimer
from PySide6.QtGui import QFont, QFontMetricsF, QTextDocument

from explorer.drawing import plot_style as st
from explorer.theme import current


_WIDTHS: dict[str, dict[str, float]] = {}  # font key → token → pixels

MIN_LABEL_PT = 8  # the smallest token label drawn: legible from the back row of a lecture room
LABEL_GAP_PX = 3
UPRIGHT_SLACK = 3  # points a turned label must gain over an upright one to be chosen


@dataclass(frozen=True)
class LabelFit:
    """How an axis draws its token labels at the current zoom: point size, turned 90° or not,
    and every `stride`-th label (1 = every label; more only when not even 8 pt fits)."""

    pt: int
    rotated: bool
    stride: int


class TokenAxis(pg.AxisItem):
    """An axis labelled with tokens at cell centres that never silently drops a label.

    For the cell size it has, it shrinks the font (down to MIN_LABEL_PT), turns column labels
    by 90° when they are wider than a column, and only when not even that fits shows every
    k-th label — and then says so in its title ("showing 16 of 40 labels"). Zooming in brings
    every label back. Position / dimension indices (`numeric`) are labelled at round numbers.
    `shown()` is what was drawn last, for tests and the readout.
    """

    def __init__(self, orientation: str, **kwargs):
        super().__init__(orientation, **kwargs)
        self.setStyle(hideOverlappingLabels=40)  # an end label (e.g. <bos>) may reach past the corner
        self.enableAutoSIPrefix(False)  # token names carry no unit: relabelling on each range change cost ~4 ms a frame
        self._tokens: list[str] = []
        self._numeric = False
        self._metrics: dict = {}  # pt → (label widths, line height); (pt, turned) → px per cell
        self.fit = LabelFit(st.TICK_PT, False, 1)
        self._shown: list[tuple[int, str]] = []
        self._note = ""
        self.origin = 0.0
        self.period = 0.0
        self.repeats = 1

    def _updateLabel(self) -> None:  # noqa: N802 - pyqtgraph's name
        """The title placed again for its new text: pyqtgraph places it only when the axis is
        resized, so a title changed at an unchanged size kept the place of the text before it —
        in a 1920-px window the compare maps' "key (source)" stood 60 px right of its map and
        "query (source)" under it, placed for "… (showing 5 of 9 labels, zoom in for all)", the
        note of a smaller size the window had on its way."""
        super()._updateLabel()
        self._label_html = self.labelString()  # (what `super` set)
        self.resizeEvent()

    @property
    def horizontal(self) -> bool:
        return self.orientation in ("bottom", "top")

    @property
    def tokens(self) -> list[str]:
        return self._tokens

    @property
    def numeric(self) -> bool:
        return self._numeric

    def set_tokens(self, tokens: list[str], numeric: bool | None = None, origin: float = 0.0,
                   period: float | None = None, repeats: int = 1) -> bool:
        """`origin`: the view coordinate of token 0's cell (a map inside a mosaic starts further on).
        `repeats` maps side by side, `period` cells apart (a mosaic's layers or heads), each get
        the labels: whichever map the user zooms into is named under and beside it. Returns
        whether anything changed (the same tokens again keep their measurements and picture)."""
        numeric = list(tokens) == [str(i) for i in range(len(tokens))] if numeric is None else numeric
        period = float(period if period is not None else len(tokens))
        if (list(tokens), numeric, float(origin), period, max(1, int(repeats))) == \
                (self._tokens, self._numeric, self.origin, self.period, self.repeats):
            return False
        self.origin = float(origin)
        self.repeats = max(1, int(repeats))
        self.period = period
        self._tokens = list(tokens)
        self._numeric = numeric
        self._metrics = {}
        self.picture = None
        self.update()
        return True

    def setStyle(self, **kwargs):  # noqa: N802 - pyqtgraph's name
        self._metrics = {}
        return super().setStyle(**kwargs)

    def setTickFont(self, font):  # noqa: N802
        self._metrics = {}
        return super().setTickFont(font)

    # -- fitting --------------------------------------------------------------------------------
    def label_font(self, pt: int) -> QFont:
        f = QFont(self.style["tickFont"] or st.font(st.TICK_PT))
        f.setPointSize(pt)
        return f

    def base_pt(self) -> int:
        f = self.style["tickFont"]
        return max(MIN_LABEL_PT, f.pointSize() if f is not None and f.pointSize() > 0 else st.TICK_PT)

    def _measure(self, pt: int) -> tuple[list[float], float]:
        if pt not in self._metrics:
            font = self.label_font(pt)
            m = QFontMetricsF(font)
            # Token widths are kept across inputs and axes: a 512-token axis measured every
            # label at every size it tried, on every frame (~30 ms of a MiniLM frame).
            known = _WIDTHS.setdefault(font.key(), {})
            if len(known) > 50_000:
                known.clear()
            widths = [known.get(t) or known.setdefault(t, m.horizontalAdvance(t)) for t in self._tokens]
            self._metrics[pt] = (widths, m.height())
        return self._metrics[pt]

    def _height(self, pt: int) -> float:
        if pt in self._metrics:
            return self._metrics[pt][1]
        return QFontMetricsF(self.label_font(pt)).height()

    def _need_along(self, pt: int, rotated: bool) -> float:
        """Pixels per cell the labels need side by side at `pt` (neighbours share the gap between
        them, so one wide <bos> beside one-letter tokens still fits). Kept with the widths: a
        frame asks ~10 times per axis, ~10 ms of a 512-token frame when recomputed."""
        key = (pt, rotated)
        need = self._metrics.get(key)
        if need is None:
            need = self._metrics[key] = self._compute_need(pt, rotated)
        return need

    def _compute_need(self, pt: int, rotated: bool) -> float:
        if not self.horizontal or rotated:
            return 0.8 * self._height(pt) + 1  # Qt's line height has ~20% of air; pyqtgraph packs at 0.8 too
        widths, _ = self._measure(pt)
        if len(widths) < 2:
            return (widths[0] if widths else 0) + LABEL_GAP_PX
        w = np.asarray(widths)
        return float((w[:-1] + w[1:]).max()) / 2 + LABEL_GAP_PX

    def fit_for(self, cell_px: float) -> LabelFit:
        """The largest legible way to draw every label in cells of `cell_px` pixels."""
        base = self.base_pt()
        if self._numeric:
            widths, height = self._measure(base)
            need = (max(widths, default=10) + 8) if self.horizontal else height
            stride = max(1, math.ceil(need / max(cell_px, 1e-9)))
            if stride > 1:
                stride = next(m * 10 ** e for e in range(9) for m in (1, 2, 5) if m * 10 ** e >= stride)
            return LabelFit(base, False, stride)
        sizes = range(base, MIN_LABEL_PT - 1, -1)
        upright = next((pt for pt in sizes if self._need_along(pt, False) <= cell_px), None)
        turned = next((pt for pt in sizes if self._need_along(pt, True) <= cell_px), None) if self.horizontal else None
        # Upright unless turning buys UPRIGHT_SLACK points or more: one-letter tokens turned 90°
        # (a 16-letter date at 11 pt, when 10 pt fitted upright) read worse than slightly smaller
        # upright ones; long words turned stay far larger than upright ones squeezed to 8 pt.
        if upright is not None and (turned is None or upright > turned - UPRIGHT_SLACK):
            return LabelFit(upright, False, 1)
        if turned is not None:
            return LabelFit(turned, True, 1)
        need = self._need_along(MIN_LABEL_PT, self.horizontal)
        return LabelFit(MIN_LABEL_PT, self.horizontal, max(1, math.ceil(need / max(cell_px, 1e-9))))

    def min_cell_px(self) -> float:
        """Pixels per cell in which every label still fits at the legible minimum (turned if need be)."""
        return self._need_along(MIN_LABEL_PT, self.horizontal)

    def extent_px(self, pt: int, rotated: bool) -> float:
        """Pixels the axis takes across the plot with its labels at `pt`: the widest label
        beside a vertical axis (or under a horizontal one turned), else one line's height."""
        widths, height = self._measure(pt)
        across = max(widths, default=0.0) if (rotated or not self.horizontal) else height
        offset = max(0, self.style["tickLength"]) + self.style["tickTextOffset"][1 if self.horizontal else 0]
        return across + offset + 2

    def _in_view(self, lo: float, hi: float) -> list[tuple[float, int, int]]:
        """(start of the map's cells, first, last token index in view) for each map in lo…hi."""
        n, spans = len(self._tokens), []
        for m in range(self.repeats if n else 0):
            base = self.origin + m * self.period
            first, last = max(0, math.ceil(lo - base - 0.5)), min(n - 1, math.floor(hi - base - 0.5))
            if first <= last:
                spans.append((base, first, last))
        return spans

    def visible_slots(self, lo: float, hi: float, size: float) -> list[tuple[float, int]]:
        """(view coordinate of the cell, token index) of every label drawn when cells lo…hi fill
        `size` pixels."""
        lo, hi = min(lo, hi), max(lo, hi)
        spans = self._in_view(lo, hi)
        if not spans or size <= 0:
            return []
        stride = self.fit_for(size / max(hi - lo, 1e-9)).stride
        return [(base + i, i) for base, first, last in spans
                for i in range(first + (-first) % stride, last + 1, stride)]

    def visible_ticks(self, lo: float, hi: float, size: float) -> list[int]:
        """Token indices labelled when cells lo…hi fill `size` pixels."""
        return [i for _pos, i in self.visible_slots(lo, hi, size)]

    def tickValues(self, minVal, maxVal, size):  # noqa: N802 (pyqtgraph's name)
        slots = self.visible_slots(minVal, maxVal, size)
        return [(1.0, [pos + 0.5 for pos, _i in slots])] if slots else []

    def tickStrings(self, values, scale, spacing):  # noqa: N802
        n, out = len(self._tokens), []
        for v in values:
            offset = v - self.origin
            if self.repeats > 1 and self.period > 0:
                offset -= min(self.repeats - 1, max(0, math.floor(offset / self.period))) * self.period
            out.append(self._tokens[int(offset)] if 0 <= int(offset) < n else "")
        return out

    def shown(self) -> list[tuple[int, str]]:
        """(index, text) of every label drawn last."""
        return list(self._shown)

    # -- drawing --------------------------------------------------------------------------------
    def generateDrawSpecs(self, p):  # noqa: N802
        if not self._tokens or self.range is None:
            return super().generateDrawSpecs(p)
        bounds = self.mapRectFromParent(self.geometry())
        horizontal = self.horizontal
        if self.orientation == "left":
            line = (bounds.topRight(), bounds.bottomRight())
        elif self.orientation == "right":
            line = (bounds.topLeft(), bounds.bottomLeft())
        elif self.orientation == "top":
            line = (bounds.bottomLeft(), bounds.bottomRight())
        else:
            line = (bounds.topLeft(), bounds.topRight())
        axis_spec = (self.pen(), line[0], line[1])
        r0, r1 = float(self.range[0]), float(self.range[1])
        length = bounds.width() if horizontal else bounds.height()
        if r1 == r0 or length <= 1:
            self._shown = []
            return axis_spec, [], []
        scale = length / (r1 - r0)
        self.fit = fit = self.fit_for(abs(scale))
        widths, height = self._measure(fit.pt)
        offset = max(0, self.style["tickLength"]) + self.style["tickTextOffset"][0 if not horizontal else 1]
        specs, shown, perp = [], [], 0.0
        for pos, i in self.visible_slots(r0, r1, length):
            text, w = self._tokens[i], widths[i]
            if horizontal:
                x = bounds.left() + (pos + 0.5 - r0) * scale
                if fit.rotated:
                    top = bounds.top() + offset if self.orientation == "bottom" else bounds.bottom() - offset - w
                    rect, flags = QRectF(x - height / 2, top, height, w), Qt.AlignmentFlag.AlignRight
                    perp = max(perp, w)
                else:
                    top = bounds.top() + offset if self.orientation == "bottom" else bounds.bottom() - offset - height
                    rect, flags = QRectF(x - w / 2, top, w, height), Qt.AlignmentFlag.AlignHCenter
                    perp = max(perp, height)
            else:
                y = bounds.bottom() - (pos + 0.5 - r0) * scale
                if self.orientation == "left":
                    rect = QRectF(bounds.right() - offset - w, y - height / 2, w, height)
                    flags = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                else:
                    rect = QRectF(bounds.left() + offset, y - height / 2, w, height)
                    flags = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
                perp = max(perp, w)
            specs.append((rect, flags | Qt.TextFlag.TextDontClip, text))
            shown.append((i, text))
        self._shown = shown
        self._updateMaxTextSize(int(math.ceil(perp)) + 2)
        in_view = sum(last - first + 1 for _base, first, last in self._in_view(min(r0, r1), max(r0, r1)))
        note = f"showing {len(shown)} of {in_view} labels, zoom in for all" if len(shown) < in_view and not self._numeric else ""
        if note != self._note:
            self._note = note
            self._note_counts = (len(shown), in_view)
            QTimer.singleShot(0, self._show_note)
        return axis_spec, [], specs

    def _show_note(self) -> None:
        try:
            if self._note and not self.labelText:  # an axis without a title still says what it left out
                self.showLabel(True)
            elif not self.labelText:
                self.showLabel(False)
            self._label_html = self.labelString()
            self.label.setHtml(self._label_html)
            self.resizeEvent()  # placed for its new width (a note come or gone; see `_updateLabel`)
        except RuntimeError:  # the axis was deleted meanwhile
            pass

    def labelString(self) -> str:  # noqa: N802
        s = super().labelString()
        note = getattr(self, "_note", "")  # (pyqtgraph asks before __init__ has run)
        if note and not self.labelText:
            return f"<span style='color: {current().muted}; font-size: {st.css_pt(st.TICK_PT - 2)}'>{note}</span>"
        if note and s.endswith("</span>"):
            # the note beside the title, shorter where the axis is short ("(5 of 9 labels)"), else
            # the count alone, else the title alone: a 78-px compare map's "key (source) (showing
            # 5 of 9 labels, zoom in for all)" ran 440 px over its neighbours' titles
            shown, total = getattr(self, "_note_counts", (0, 0))
            length = self.size().height() if self.orientation in ("left", "right") else self.size().width()
            title = s[: -len("</span>")]
            forms = [f"{title}{tail}</span>" for tail in (f" ({note})", f" ({shown} of {total} labels)")]
            # shorter still, what is left out before what the axis is: its hover readout names the rest
            forms.append(f"<span style='color: {current().muted}; font-size: {st.css_pt(st.TICK_PT - 2)}'>"
                         f"{shown} of {total} labels</span>")
            if length <= 1:
                return forms[0]
            widths = [self._html_width(html) for html in forms]
            fits = [html for html, w in zip(forms, widths) if w <= length]
            return fits[0] if fits else min(zip(widths, forms))[1]  # (none fits: the narrowest)
        return s

    def _html_width(self, html: str) -> float:
        """`html` as the title would draw it: its font and the text item's margins."""
        doc = QTextDocument()
        doc.setDefaultFont(self.label.font())
        doc.setDocumentMargin(self.label.document().documentMargin())
        doc.setHtml(html)
        return doc.size().width()

    def resizeEvent(self, ev=None) -> None:  # noqa: N802 - pyqtgraph's name
        """Placed for the new length, the note's form first chosen for it (`labelString`)."""
        if self.label is not None and getattr(self, "_note", "") and self.labelText:
            html = self.labelString()
            if html != getattr(self, "_label_html", None):  # (the form last set, by any path)
                self._label_html = html
                self.label.setHtml(html)
        super().resizeEvent(ev)

    def drawPicture(self, p, axisSpec, tickSpecs, textSpecs):  # noqa: N802
        if not self._tokens:
            return super().drawPicture(p, axisSpec, tickSpecs, textSpecs)
        p.setRenderHint(p.RenderHint.TextAntialiasing, True)
        # Nothing outside the item's bounds: a label wider than the axis is now (it grows to fit
        # on the next layout pass) would leave pixels there that no repaint of the axis clears,
        # seen on X11 as stray letters beside the map.
        p.setClipRect(self.boundingRect())
        pen, p1, p2 = axisSpec
        p.setPen(pen)
        p.drawLine(p1, p2)
        p.setFont(self.label_font(self.fit.pt))
        p.setPen(self.textPen())
        for rect, flags, text in textSpecs:
            if self.fit.rotated and self.horizontal:  # read bottom to top, ending at the axis
                p.save()
                p.translate(rect.center().x(), rect.top() if self.orientation == "bottom" else rect.bottom())
                p.rotate(-90)
                if self.orientation == "bottom":
                    box, align = QRectF(-rect.height(), -rect.width() / 2, rect.height(), rect.width()), Qt.AlignmentFlag.AlignRight
                else:
                    box, align = QRectF(0, -rect.width() / 2, rect.height(), rect.width()), Qt.AlignmentFlag.AlignLeft
                p.drawText(box, int(align | Qt.AlignmentFlag.AlignVCenter), text)
                p.restore()
            else:
                p.drawText(rect, int(flags), text)
