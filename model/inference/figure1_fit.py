"""Which arrangement of Figure 1 suits a view: the drawn figure's extent, wide against tall."""
from __future__ import annotations

from model.inference.figure1_layout import Measure, figure1_layout


def figure1_extent(cfg, expanded: bool, inline: bool, measure: Measure) -> tuple[float, float]:
    """(width, height) of the figure drawn (token lines still empty): every block, symbol with its
    name under it, layer box, arrow and text."""
    fig = figure1_layout(cfg, expanded, inline, measure)
    xs, ys = [], []
    for e in fig.elements:
        below = measure.height("small") * (e.label or "").count("\n") + measure.height("small") + 4 if e.kind == "wave" else 0
        half = max(e.w, measure.width(e.label or "", "small")) / 2 if e.kind == "wave" else e.w / 2
        xs += [e.x - half, e.x + half]
        ys += [e.y - e.h / 2, e.y + e.h / 2 + below]
    for b in fig.boxes:
        xs += [b.x, b.x + b.w]
        ys += [b.y, b.y + b.h]
    for a in fig.arrows:
        xs += [p[0] for p in a.points]
        ys += [p[1] for p in a.points]
    for t in (t for t in fig.texts if t.value):
        w, h = measure.width(t.value, t.font), measure.height(t.font) * (t.value.count("\n") + 1)
        left = {"left": t.x, "right": t.x - w}.get(t.align, t.x - w / 2)
        xs += [left, left + w]
        ys += [t.y - h / 2, t.y + h / 2]
    return (max(xs) - min(xs), max(ys) - min(ys)) if xs else (0.0, 0.0)


def better_inline(wide: tuple[float, float], tall: tuple[float, float], room: tuple[float, float],
                  inline: bool) -> bool:
    """Whether the wide arrangement (shapes beside names) is drawn over 2 % larger than the tall one
    in a view of `room` (no flapping at the edge); with no room yet, `inline` (the arrangement now)."""
    if room[0] <= 0 or room[1] <= 0:
        return inline

    def fit(size: tuple[float, float]) -> float:
        return min(room[0] / max(size[0], 1.0), room[1] / max(size[1], 1.0))
    return fit(wide) > fit(tall) * 1.02
