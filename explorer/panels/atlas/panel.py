"""The head atlas: what every attention head of the model does, at a glance.

`model.interpret.head_scores` runs the model once over repeated random token sequences and
scores each head as previous-token, duplicate-token, induction, first-token (a sink) or self;
this panel draws a layers × heads grid per attention kind, each cell coloured by its head's
type (the legend names the colours), every score in the cell's tooltip. The scoring runs on a
pool thread with progress, when the panel is shown and whenever the model changes.

Clicking a head selects it in the session and asks for the Attention maps panel on that head
(the session's attention selection, its "single" view and `SessionState.request_panel`): the panel
never calls another panel.
"""
from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QElapsedTimer, QObject, QThreadPool, Signal
from PySide6.QtWidgets import QLabel, QProgressBar, QVBoxLayout, QWidget
from superqt.utils import create_worker

from explorer.drawing import plot_style as st
from explorer.panels.atlas.atlas_grid import AtlasGrid, Legend, scores_text
from explorer.state import SessionState
from explorer.theme import notifier
from model.interpret.head_scores import head_scores
from model.nn.kinds import AttentionKind

ABOUT = ("Each head read {n} random sequences of {L} tokens, each repeated; its colour is the pattern "
         "that takes the largest share of its attention when that share is at least {t:.0%}.{cross} "
         "Hover or click a head for its scores.")
CROSS_NOTE = " Cross-attention reads another sequence: only first-token applies to it."


def lengths_text(atlas) -> str:
    """The copies' lengths in words: "12", or "12 (source), 3 (target)" where they differ."""
    lengths = atlas.segment_lens
    if len(set(lengths.values())) == 1:
        return str(next(iter(lengths.values())))
    return ", ".join(f"{n} ({'source' if axis == 'src' else 'target'})" for axis, n in lengths.items())


class _Progress(QObject):
    """Carries the worker thread's progress callbacks to the GUI thread (a queued signal)."""

    moved = Signal(int, int, str)


class AtlasPanel(QWidget):
    panel_name = "atlas"
    title = "Head atlas"
    tab_title = "Atlas"

    def __init__(self, state: SessionState, parent=None):
        super().__init__(parent)
        self.state = state
        self.atlas = None
        self._scored_bundle = None  # the bundle the atlas (or the running worker) belongs to
        self._worker = None
        self._progress = _Progress(self)
        self._progress.moved.connect(self._on_progress)
        self._build()
        state.bundleChanged.connect(self._on_bundle)
        state.attentionSelected.connect(self._on_selected)
        notifier().changed.connect(self._restyle)  # (a bound method: dropped with the panel)
        if state.bundle is not None:
            self._on_bundle(state.bundle)

    def _build(self) -> None:
        self.status = QLabel("Load a model to see what its heads do.")
        self.status.setWordWrap(True)
        self.status.setFont(st.font(st.LABEL_PT))
        self.bar = QProgressBar()
        self.bar.setRange(0, 1)
        self.bar.setTextVisible(False)
        self.bar.hide()
        self.legend = Legend()
        self.about = QLabel()
        self.about.setWordWrap(True)
        self.about.setFont(st.font(st.TICK_PT))
        self.grid = AtlasGrid()
        self.grid.headClicked.connect(self._on_head_clicked)
        self.grid.headHovered.connect(self._show_scores)
        self.readout = QLabel(" ")
        self.readout.setWordWrap(True)
        self.readout.setFont(st.font(st.TICK_PT))
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.status)
        lay.addWidget(self.bar)
        lay.addWidget(self.legend)
        lay.addWidget(self.about)
        lay.addWidget(self.grid, 1)
        lay.addWidget(self.readout)
        lay.addStretch(0)

    # -- scoring ---------------------------------------------------------------------------------
    def _on_bundle(self, bundle) -> None:
        if bundle is not self._scored_bundle:
            self.compute()

    def compute(self, synchronous: bool = False) -> None:
        """Score the shown model's heads on a pool thread (`synchronous`: here, for tests); a
        model changed while a scoring runs is scored when it ends."""
        bundle = self.state.bundle
        if bundle is None or self._worker is not None:
            return
        self._scored_bundle = bundle
        self.grid.set_atlas(None)
        self.atlas = None
        self.status.setText(f"Scoring the heads of {bundle.name}…")
        self.bar.show()
        if synchronous:
            try:
                self._on_done(head_scores(bundle, progress=self._progress.moved.emit))
            except ValueError as exc:
                self._on_error(exc)
            return
        self._worker = create_worker(head_scores, bundle, progress=self._progress.moved.emit,
                                     _start_thread=False, _ignore_errors=True)
        self._worker.returned.connect(self._on_done)
        self._worker.errored.connect(self._on_error)
        self._worker.finished.connect(self._on_finished)
        self._worker.start()

    def _on_progress(self, done: int, total: int, what: str) -> None:
        self.bar.setRange(0, max(total, 1))
        self.bar.setValue(done)
        self.status.setText(what)

    def _on_done(self, atlas) -> None:
        self.bar.hide()
        if self._scored_bundle is not self.state.bundle:
            return  # a newer model: `_on_finished` scores it
        self.atlas = atlas
        self.grid.set_atlas(atlas)
        self._on_selected(self.state.kind, self.state.layer, self.state.head)
        counts = ", ".join(f"{n} {kind}" for kind, n in atlas.counts().items() if n)
        self.status.setText(f"{atlas.model_name}: {counts}.")
        self.about.setText(ABOUT.format(n=len(next(iter(atlas.tokens.values()))), L=lengths_text(atlas),
                                        t=atlas.threshold,
                                        cross=CROSS_NOTE if AttentionKind.CROSS in atlas.attention_kinds else ""))

    def _on_error(self, exc) -> None:
        self.bar.hide()
        self.status.setText(str(exc))
        self.state.inform(str(exc), "warning")

    def _on_finished(self) -> None:
        self._worker = None
        if self.state.bundle is not None and self.state.bundle is not self._scored_bundle:
            self.compute()

    # -- selection -------------------------------------------------------------------------------
    def _on_head_clicked(self, kind: str, layer: int, head: int) -> None:
        """Select the head for every panel and ask for the Attention maps on it."""
        self.state.select_attention(kind, layer, head)
        self.state.set_view("attention", "single")
        self.state.request_panel("attention")

    def _on_selected(self, kind: str, layer: int, head: int) -> None:
        self.grid.select((kind, layer, head))
        if self.atlas is not None and (kind, layer, head) in self.grid.cells:
            self._show_scores(kind, layer, head)

    def _show_scores(self, kind: str, layer: int, head: int) -> None:
        if self.atlas is not None:
            self.readout.setText(scores_text(self.atlas.head(kind, layer, head)))

    def _restyle(self) -> None:
        self.legend.restyle()
        self.grid.restyle()

    def wait_until_drawn(self, msecs: int = 60000) -> bool:
        """Block until the running scoring is drawn (headless figures, tests)."""
        clock = QElapsedTimer()
        clock.start()
        while self._worker is not None and clock.elapsed() < msecs:
            QThreadPool.globalInstance().waitForDone(20)
            QCoreApplication.sendPostedEvents()
            QCoreApplication.processEvents()
        return self._worker is None

    def shutdown(self) -> None:
        """Wait for a scoring still running (the window is closing)."""
        if self._worker is not None:
            self._worker.quit()
