"""The dashed line where the warm-up ends (Eq. 3's peak) on the learning-rate plot. Its label
sits near the plot's bottom on the side with more room, clear of the rate curve (high there)."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt

from explorer import style

TEXTS = ("warm-up ends", "warm-up")  # a wide plot's, a narrow one's
LEFT_OF, RIGHT_OF = (1, 1), (0, 1)  # anchors: the text's bottom right / bottom left corner at the line


class WarmupMark:
    def __init__(self, plot: pg.PlotItem):
        self.plot = plot
        self.line = pg.InfiniteLine(angle=90, movable=False, label=TEXTS[0],
                                    labelOpts=dict(position=0.04, anchors=[RIGHT_OF, RIGHT_OF]))
        self.line.setZValue(-10)  # under the curve
        self.label = self.line.label
        self.label.setFont(style.font(style.SMALL_POINT_SIZE))
        self.restyle()
        self.line.hide()
        plot.addItem(self.line)
        plot.getViewBox().sigRangeChanged.connect(lambda *_: self.place())

    def restyle(self) -> None:
        """The theme's colours; the canvas behind the text hides the dashed line there."""
        p = style.current()
        self.line.setPen(pg.mkPen(p.muted, width=1.5, style=Qt.DashLine))
        self.label.setColor(p.muted)
        self.label.fill = pg.mkBrush(p.canvas)
        self.label.update()

    def show_at(self, step: int | None) -> None:
        self.line.setVisible(bool(step))
        if step:
            self.line.setValue(step)
            self.place()

    def set_texts(self, narrow: bool) -> None:
        text = TEXTS[1] if narrow else TEXTS[0]
        self.label.setFormat(text)
        self.label.setText(text)  # (setFormat alone skips a hidden label)

    def place(self) -> None:
        """Beside the line, towards the middle of the view."""
        (left, right), _ = self.plot.getViewBox().viewRange()
        anchor = LEFT_OF if self.line.value() > (left + right) / 2 else RIGHT_OF
        if self.label.anchors[0] != anchor:
            self.label.anchors = [anchor, anchor]
            self.label.updatePosition()


__all__ = ["WarmupMark"]
