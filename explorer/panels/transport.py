"""`Transport`: walk positions 0 … n − 1 (a forward pass's steps, a decode's tokens, a cache's
rows): first, back, play / pause, next, last, a slider and "i / n". It keeps no position of its
own: `moved(i)` asks the owner to show position i, `show_position(i, n)` shows what the owner shows."""
from __future__ import annotations

from PySide6.QtCore import QSignalBlocker, QSize, Qt, QTimer, Signal
from PySide6.QtWidgets import QLabel, QSlider, QToolButton, QWidget

from explorer import style
from explorer.panels.layouts import row

BUTTONS = (("first", "|◀", "First"), ("back", "◀", "Back"), ("play", "Play", "Play / pause"), ("next", "▶", "Next"),
           ("last", "▶|", "Last"))  # (attribute, text, tooltip)


class Transport(QWidget):
    moved = Signal(int)

    def __init__(self, interval_ms: int, parent=None):
        super().__init__(parent)
        self.timer = QTimer(self, interval=interval_ms, timeout=lambda: self.go(self.slider.value() + 1))
        self.slider = QSlider(Qt.Horizontal, pageStep=5)
        self.slider.valueChanged.connect(self.moved)
        self.counter = style.set_font_role(QLabel("– / –", alignment=Qt.AlignRight | Qt.AlignVCenter), "mono")
        for name, text, tip in BUTTONS:
            setattr(self, name, QToolButton(text=text, toolTip=tip, minimumSize=QSize(40, 34)))
        self.first.clicked.connect(lambda: self.go(0))
        self.back.clicked.connect(lambda: self.go(self.slider.value() - 1))
        self.play.clicked.connect(self.toggle_play)
        self.next.clicked.connect(lambda: self.go(self.slider.value() + 1))
        self.last.clicked.connect(lambda: self.go(self.slider.maximum()))
        row(*(getattr(self, name) for name, _, _ in BUTTONS), (self.slider, 1), self.counter, parent=self, margins=0)

    def show_position(self, i: int, n: int) -> None:
        """Position i of n shown (n = 0: nothing to walk), announced to no one."""
        with QSignalBlocker(self.slider):
            self.slider.setRange(0, max(n - 1, 0))
            self.slider.setValue(i)
        self.counter.setText(f"{i + 1:>3} / {n}" if n else "– / –")
        self.back.setEnabled(i > 0)
        self.next.setEnabled(i < n - 1)

    def go(self, i: int) -> None:
        """Ask for position i (clamped); a jump to either end stops playing."""
        if i <= 0 or i >= self.slider.maximum():
            self.stop()
        self.slider.setValue(i)

    def toggle_play(self) -> None:
        if self.timer.isActive():
            self.stop()
        elif self.slider.maximum() > 0:
            if self.slider.value() >= self.slider.maximum():
                self.slider.setValue(0)  # play again from the start
            self.timer.start()
            self.play.setText("Pause")

    def stop(self) -> None:
        self.timer.stop()
        self.play.setText("Play")
