"""`SpacedAxis`: a horizontal number axis whose labels never run together (pyqtgraph spaces ticks by
length alone): the spacing widens (1, 2, 5 × 10ⁿ) until the widest label has a gap."""
from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtGui import QFontMetricsF

from model.inference.labels import nice_at_least

GAP_CHARS = 2  # the room between two labels, in widths of "0"


class SpacedAxis(pg.AxisItem):

    def tickSpacing(self, minVal, maxVal, size):  # noqa: N802 - pyqtgraph's name
        levels = super().tickSpacing(minVal, maxVal, size)
        if not levels or self.orientation not in ("bottom", "top") or size <= 0 or maxVal <= minVal:
            return levels
        metrics = QFontMetricsF(self.style.get("tickFont") or self.font())
        major = levels[0][0]
        widest = max(metrics.horizontalAdvance(text) for text in self.tickStrings([minVal, maxVal], 1.0, major))
        least = (widest + GAP_CHARS * metrics.horizontalAdvance("0")) * (maxVal - minVal) / size  # in axis units
        if major >= least:
            return levels
        spaced = nice_at_least(least)
        mantissa = round(spaced / 10.0 ** math.floor(math.log10(spaced)))
        return [(spaced, 0), (spaced / (2 if mantissa == 2 else 5), 0)]  # minor ticks: unlabelled marks


def step_and_value_axes() -> dict[str, pg.AxisItem]:
    """A `SpacedAxis` of steps and a value axis for `axisItems`, without pyqtgraph's SI prefix (no
    "(x0.001)", no title re-rendered at every change of the range)."""
    axes = {"bottom": SpacedAxis("bottom"), "left": pg.AxisItem("left")}
    for axis in axes.values():
        axis.enableAutoSIPrefix(False)
    return axes
