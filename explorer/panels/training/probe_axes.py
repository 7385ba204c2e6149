"""The probe map's axes: which tokens label them, and at what size they all fit.

Pure layout arithmetic on font metrics (no plot items): the probe view asks these for the
fonts and label counts of its rows and columns, sized from its canvas, so a first draw and a
second one agree (pyqtgraph's own axis sizes follow what they drew last).
"""
from __future__ import annotations

from PySide6.QtGui import QFont, QFontMetrics

from explorer import style
from explorer.drawing.label_axis import LABEL_GAP_PX, MIN_LABEL_PT

MIN_ROW_PT = MIN_LABEL_PT  # the smallest label: the token axes' legible minimum


def map_axes(result, kind: str) -> tuple[list[str], list[str], str, str]:
    """(key labels, query labels, key axis title, query axis title) of a probe map.

    Cross-attention: keys are source tokens, each decoder row is labelled with what it predicts.
    Decoder self-attention (decoder-only: <bos> prompt continuation): keys are the tokens read,
    rows what each position predicts. Encoder self-attention: the input on both axes."""
    if kind == "encoder":
        return list(result.src_pieces), list(result.src_pieces), "key token", "query (attending)"
    if kind == "decoder_self":
        return list(result.tgt_pieces), list(result.out_pieces), "token read", "predicting"
    return list(result.src_pieces), list(result.out_pieces), "source token", "predicting"


def token_ticks(pieces: list[str], room: int) -> list[list[tuple[float, str]]]:
    """Tick labels at cell centres; when there is no room for all, every k-th (pyqtgraph would overlap them)."""
    k = max(1, -(-len(pieces) // max(1, room)))
    return [[(i + 0.5, p) for i, p in enumerate(pieces) if i % k == 0]]


def tick_font(labels: list[str], room: float, rows: bool) -> tuple[QFont, int]:
    """The largest label font, from the usual size down to the legible minimum (8 pt), at
    which every label has its own cell: row labels need 0.8 of a line each (pyqtgraph packs
    tick labels that tight), column labels the widest one's advance and the token axes' gap
    on each side. Returns the font and how many labels fit at it (all, or at the floor as
    many as fit)."""
    base = style.font(style.SMALL_POINT_SIZE, mono=True)
    for pt in range(max(MIN_ROW_PT, int(base.pointSizeF())), MIN_ROW_PT - 1, -1):
        f = QFont(base)
        f.setPointSize(pt)
        metrics = QFontMetrics(f)
        per_label = (0.8 * metrics.height() + 1 if rows else
                     max((metrics.horizontalAdvance(p) for p in labels), default=8) + 2 * LABEL_GAP_PX)
        if len(labels) * per_label <= room:
            break  # every label at this size (else: the floor, with as many as fit)
    return f, min(len(labels), max(1, int(room // per_label)))


def left_width(metrics: QFontMetrics, queries: list[str]) -> int:
    """The row labels' width and the axis title's room beside them."""
    return max(70, min(140, max((metrics.horizontalAdvance(p) for p in queries), default=0) + 36))


def axis_title(title: str, shown: int, total: int, length: float, advance) -> str:
    """The axis' title, with "(k of n)" when it names only k of its n labels; the count alone
    when both do not fit along the axis (`advance(text)` measures text)."""
    if shown >= total:
        return title
    full, count = f"{title} ({shown} of {total})", f"{shown} of {total}"
    return full if advance(full) <= length else count


__all__ = ["axis_title", "left_width", "map_axes", "tick_font", "token_ticks"]
