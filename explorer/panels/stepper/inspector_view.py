"""The tensor inspector: one recorded tensor as a heatmap with token labels, the exact value under
the mouse, and masked entries that can never be mistaken for small ones."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF

from explorer import style
from explorer.drawing.heatmap import Heatmap
from explorer.drawing.plot_style import free_colorbar_axis
from model.nn.step_summary import TOKEN_AXES, colour_scale, format_value

SCALE_RULE = "weight: 0–1 on every map"
FEW_ROWS = 8  # token rows whose labels the view always has room for


def visible_text(piece: str) -> str:
    """Spaces and control characters as visible symbols, so a label is never blank."""
    return piece.replace(" ", "␣").replace("\n", "⏎").replace("\t", "⇥") if piece.strip() else "␣" * len(piece) or "∅"


class TensorView(Heatmap):
    """A step's 2-D slice: a colour scale chosen by meaning, −∞ scores and blocked entries hatched,
    the exact value under the mouse (`readout_at`, emitted as `hovered`)."""

    def __init__(self, parent=None):
        super().__init__(colour_bar=True, square=False, parent=parent)
        free_colorbar_axis(self.bar)  # "−0.2" as whole as "0.2"
        self.data = np.zeros((1, 1), dtype=np.float32)
        self.is_bool = False
        self.row_axis = self.col_axis = ""
        self.colormap_name = style.SEQUENTIAL
        self.describe = self.readout_at

    def show_matrix(self, data: np.ndarray, row_axis: str, col_axis: str, row_labels: list[str] | None,
                    col_labels: list[str] | None, kind: str, titles: tuple[str, str]) -> None:
        """data (R, C): float (maybe −∞) or bool; kind: "probs" | "signed" | "mask" | "auto"; titles: the axes'."""
        data = np.asarray(data)
        self.is_bool = data.dtype == bool
        self.data = data.astype(np.float32)
        rows, cols = self.data.shape
        self.row_axis, self.col_axis = row_axis, col_axis
        scale, levels = colour_scale(data, kind)
        self.colormap_name = {"sequential": style.SEQUENTIAL, "diverging": style.DIVERGING}.get(scale, scale)
        cmap = style.mask_colormap() if scale == "mask" else style.colormap(self.colormap_name)
        self.set_colormap(cmap)
        self.set_levels(levels)
        self.bar.getAxis("right").setLabel(SCALE_RULE if kind == "probs" else "")
        self.square = row_axis in TOKEN_AXES and col_axis in TOKEN_AXES  # query × key: square cells
        self.set_axis_names(*titles)
        self.set_data(self.data, [visible_text(t) for t in row_labels] if row_labels else [str(i) for i in range(rows)],
                      [visible_text(t) for t in col_labels] if col_labels else [str(i) for i in range(cols)],
                      allowed=~self.masked(), row_names=True)
        # tall enough for a few token rows' labels (a longer input strides them, and says so)
        few = min(rows, FEW_ROWS) if row_labels else 0
        self.canvas.setMinimumHeight(int(few * self.rows_axis.min_cell_px() + 110) if few else 60)

    def masked(self) -> np.ndarray:
        """Cells drawn as masked: −∞ scores, or blocked (0) entries of a boolean mask."""
        return self.data == 0 if self.is_bool else np.isneginf(self.data)

    def overlay_contains(self, row: int, col: int) -> bool:
        return self.hatch.contains_cell(row, col)

    def value_at(self, row: int, col: int) -> float:
        return float(self.data[row, col])

    def readout_at(self, row: int, col: int) -> str:
        if not (0 <= row < self.data.shape[0] and 0 <= col < self.data.shape[1]):
            return ""
        v = self.data[row, col]
        if self.is_bool:
            value = "1  (may attend)" if v else "0  (blocked)"
        else:
            value = format_value(float(v)) + ("  (masked)" if np.isneginf(v) else "")
        row_name = f"{self.row_axis} {row}" + ("" if self.rows_axis.numeric else f" “{self.row_labels[row]}”")
        col_name = f"{self.col_axis} {col}" + ("" if self.cols_axis.numeric else f" “{self.col_labels[col]}”")
        return f"{row_name},  {col_name}  =  {value}"

    def cell_to_scene(self, row: int, col: int) -> QPointF:
        """Scene position of a cell's centre (tests move the mouse there)."""
        return self.plot.vb.mapViewToScene(QPointF(col + 0.5, row + 0.5))

