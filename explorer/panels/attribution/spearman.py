"""`SpearmanTable`: Spearman's ρ between the attribution methods' scores, as a map of numbers
on the shared heatmap (its labels under the one label policy)."""
from __future__ import annotations

import numpy as np

from explorer.drawing import plot_style as st
from explorer.drawing.heatmap import Heatmap

RHO_TIP = ("Spearman's ρ between two methods' scores over the input tokens: 1 = the same ranking, 0 = unrelated, "
           "−1 = reversed. Blank: undefined (a method gave every token the same score, or there is one token).")


def short_rho(value: float) -> str:
    """ρ in 4 characters, as tables in papers print it: ".93", "−.21", "1"."""
    if abs(value) > 0.995:
        return "1" if value > 0 else "-1"
    return f"{value:.2f}".replace("0.", ".")  # ASCII "-": the narrow minus fits a narrow cell


class SpearmanTable(Heatmap):
    def __init__(self, parent=None):
        super().__init__(colormap=st.signed_cmap(), levels=(-1.0, 1.0), square=False, parent=parent)
        self.set_title("Spearman ρ between the methods")
        self.setToolTip(RHO_TIP)
        self.describe = lambda i, j: (f"ρ({self.row_labels[i]}, {self.col_labels[j]}) = {self.values[i, j]:.4f}"
                                      if not np.isnan(self.values[i, j]) else "ρ undefined: a constant score")

    def show_rho(self, short_names: list[str], rho: np.ndarray) -> None:
        texts = [[["" if np.isnan(v) else short_rho(v)] for v in row] for row in rho]
        self.set_data(rho, short_names, short_names, texts=texts, row_names=True)

    def value(self, i: int, j: int) -> str:
        """The number written in cell (i, j) ("" where ρ is undefined)."""
        return "" if np.isnan(self.values[i, j]) else short_rho(float(self.values[i, j]))
