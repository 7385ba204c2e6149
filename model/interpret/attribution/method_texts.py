"""What the attribution panel draws and writes, without Qt: the methods' short names, Spearman's ρ
as papers print it, each method's row of bars (every row scaled to its own largest |score|: the
methods' units differ) and the tables of its tooltips."""
from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np

from model.interpret.attribution import METHOD_TITLES, METHODS, top1
from model.interpret.attribution.gradients import short_value
from model.nn.step_summary import format_value

SHORT_NAMES = {"attention": "attn", "attention_head": "head", "rollout": "roll", "flow": "flow",
               "grad_x_input": "g×i", "integrated_gradients": "IG", "occlusion": "occl"}
ROW_FILL = 0.78  # the tallest bar's share of its row
RHO_TIP = ("Spearman's ρ between two methods' scores over the input tokens: 1 = the same ranking, 0 = unrelated, "
           "−1 = reversed. Blank: undefined (a method gave every token the same score, or there is one token).")


def short_rho(value: float) -> str:
    """ρ in 4 characters, as tables in papers print it: ".93", "-.21", "1"; "" where undefined."""
    if np.isnan(value):
        return ""
    if abs(value) > 0.995:
        return "1" if value > 0 else "-1"
    return f"{value:.2f}".replace("0.", ".")  # ASCII "-": the narrow minus fits a narrow cell


def legend_html() -> str:
    """What the short names stand for."""
    rows = "".join(f"<tr><td><b>{SHORT_NAMES[m]}</b></td><td>{METHOD_TITLES[m]}</td></tr>" for m in METHODS)
    return f"<table>{rows}</table><br>"


def scores_html(pieces: list[str], scores: dict[str, np.ndarray]) -> str:
    """Every method's score of every token, as a table (the bars' tooltip)."""
    rows = ["<tr><th></th>" + "".join(f"<th>{html.escape(p)}</th>" for p in pieces) + "</tr>"]
    for method, values in scores.items():
        cells = "".join(f"<td>{format_value(v)}</td>" for v in values)
        rows.append(f"<tr><td>{html.escape(SHORT_NAMES.get(method, method))}</td>{cells}</tr>")
    return "<table>" + "".join(rows) + "</table>"


@dataclass
class BarRows:
    """One bar per (method, token), methods top to bottom: where each bar stands and how tall it is."""

    x: list[int]
    y0: list[float]
    height: list[float]  # a share of its row's largest |score|, times ROW_FILL
    negative: list[bool]  # lowers the output's probability
    best: list[bool]  # its method's top-1 token
    names: list[tuple[float, str]]  # (y, short name) of each row
    peaks: list[tuple[float, str]]  # (y, its largest |score|, or "all 0")


def bar_rows(scores: dict[str, np.ndarray]) -> BarRows:
    """The bars of `scores` (method → one score per token), the first method's row on top."""
    rows = BarRows([], [], [], [], [], [], [])
    for r, (method, values) in enumerate(scores.items()):
        base = len(scores) - 1 - r + 0.08
        values = np.asarray(values, float)
        peak = float(np.max(np.abs(values))) if len(values) else 0.0
        best = top1(values) if peak > 0 else -1
        for j, v in enumerate(values):
            rows.x.append(j)
            rows.y0.append(base)
            rows.height.append(abs(v) / peak * ROW_FILL if peak > 0 else 0.0)
            rows.negative.append(bool(v < 0))
            rows.best.append(j == best)
        rows.names.append((base + 0.37, SHORT_NAMES.get(method, method)))
        rows.peaks.append((base + 0.37, short_value(peak) if peak > 0 else "all 0"))
    return rows
