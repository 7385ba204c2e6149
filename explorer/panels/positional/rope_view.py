"""The positional panel's "RoPE" tab. Left: how far each pair of a head vector turns at each
position, m·θ_i (the sinusoids' ladder of speeds, as a rotation of q and k). Right: the model's own
q and k placed at m and n for several n per offset m − n: with RoPE each row holds one number."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtWidgets import QLabel, QSpinBox, QWidget

from explorer import style
from explorer.drawing.heatmap import Heatmap
from explorer.panels.layouts import column, row
from model.interpret.input_texts import printable
from model.interpret.positions import model_scores, rope_note, turns

SHOWN_POSITIONS = 48
ROPE_BASE = 10000.0  # the paper's base, for a model without rotary positions


class RopeView(QWidget):
    """Rotation angles per pair and position; scores at equal offsets on the model's q and k."""

    def __init__(self, state, parent=None):
        super().__init__(parent)
        self.state = state
        self.scores = None  # positions.OffsetScores drawn now
        self.note = QLabel(wordWrap=True)
        self.angles = Heatmap(colour_bar=True, square=False)
        self.angles.set_axis_names("position m", "pair i")
        self.table = Heatmap(colormap=style.colormap(style.DIVERGING), square=False, numbers=True, colour_bar=False)
        self.table.set_axis_names("m − n", "key at n")
        self.head = QSpinBox(prefix="head ", valueChanged=self.refresh)
        self.verdict = QLabel(wordWrap=True, textFormat=Qt.RichText)
        right = column(row(self.head, None), (self.table, 1))
        column(self.note, (row((self.angles, 1), (right, 1)), 1), self.verdict, parent=self, margins=0)  # full width

    def refresh(self, *_) -> None:
        bundle, result = self.state.bundle, self.state.result
        if bundle is None:
            return
        cfg = bundle.config
        rotary = cfg.positional == "rope"
        base = cfg.rope_base if rotary else ROPE_BASE
        with QSignalBlocker(self.head):
            self.head.setRange(1, cfg.n_heads)  # counted from 1, as every panel names heads
        shown = min(SHOWN_POSITIONS, cfg.max_len)
        angle = turns(shown, cfg.d_k, base).numpy()
        self.angles.set_data(angle, [str(m) for m in range(shown)], [str(i) for i in range(angle.shape[1])],
                             row_names=True)
        self.angles.set_title("Turns of pair i at m: m·θ_i / 2π")
        self.angles.setToolTip(f"θ_i = {base:g}^(−2i/{cfg.d_k}): pair 0 turns a radian per position, "
                               f"pair {cfg.d_k // 2 - 1} {base ** (-(cfg.d_k - 2) / cfg.d_k):.2g} rad")
        self.note.setText(rope_note(bundle.name, cfg.positional, cfg.d_k))
        self.scores = model_scores(bundle, result, self.head.value() - 1) if result is not None else None
        self._show_scores()

    def _show_scores(self) -> None:
        s = self.scores
        if s is None:
            self.table.clear_data()
            self.verdict.setText("Run an input: its first layer's q and k fill this table.")
            return
        values = s.scores.numpy()
        bound = float(np.abs(values).max()) or 1.0
        self.table.set_levels((-bound, bound))
        texts = [[[f"{v:.3f}"] for v in row] for row in values]
        self.table.set_data(values, [f"{o:+d}" if o else "0" for o in s.offsets], [f"n={n}" for n in s.starts],
                            texts=texts, row_names=True)
        self.table.set_title(f"score(q “{printable(s.query)}” at m, k “{printable(s.key)}” at n), head {s.head + 1}")
        self.verdict.setText(s.verdict)
