"""`SpearmanTable`: Spearman's ρ between the attribution methods' scores, as a map of numbers
on the shared heatmap (its labels under the one label policy)."""
from __future__ import annotations

import numpy as np

from explorer.drawing import plot_style as st
from explorer.drawing.heatmap import Heatmap
from model.interpret.attribution.method_texts import RHO_TIP, legend_html, short_rho


class SpearmanTable(Heatmap):
    def __init__(self, parent=None):
        super().__init__(colormap=st.signed_cmap(), levels=(-1.0, 1.0), square=False, parent=parent)
        self.set_title("Spearman ρ between the methods")
        self.setToolTip(legend_html() + RHO_TIP)
        self.describe = lambda i, j: (f"ρ({self.row_labels[i]}, {self.col_labels[j]}) = {self.values[i, j]:.4f}"
                                      if not np.isnan(self.values[i, j]) else "ρ undefined: a constant score")

    def show_rho(self, short_names: list[str], rho: np.ndarray) -> None:
        self.set_data(rho, short_names, short_names, texts=[[[short_rho(v)] for v in row] for row in rho], row_names=True)

    def value(self, i: int, j: int) -> str:
        """The number written in cell (i, j) ("" where ρ is undefined)."""
        return short_rho(float(self.values[i, j]))
