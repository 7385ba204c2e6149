"""The sampling playground: temperature, top-k and top-p on the model's next-token distribution,
computed once per prompt off the GUI thread and re-filtered at once on each control move (as
sampling filters); Generate runs seeded sampling, greedy or beam search with these settings."""
from __future__ import annotations

import html

import numpy as np
from PySide6.QtCore import QSignalBlocker
from PySide6.QtWidgets import QComboBox, QFormLayout, QLabel, QPushButton, QSpinBox, QWidget

from explorer import style, theme
from explorer.latest_job import LatestJob
from explorer.panels.base import Panel
from explorer.panels.decoding.bars import TokenBars
from explorer.panels.decoding.controls import knob_box
from explorer.panels.knobs import refill
from explorer.panels.layouts import column, row
from explorer.panels.texts import say, text_label
from model.inference.next_token import cut_by, filter_summary, filtered, from_decode_step, next_token_logits, token_text
from model.inference.token_rows import generated_heading, rows_title, sampled_rows
from model.interpret.decode_knobs import KNOBS
from model.interpret.input_texts import printable

METHODS = {"sample": "Sample (these settings)", "greedy": "Greedy (argmax)", "beam": "Beam search (4, α 0.6)"}
MAX_TOP_K = 1000
ROWS = 12  # the most tokens drawn: the top of the ranking, as many as the plot's height holds


class SamplingControls(QWidget):
    """The filters' controls (temperature, top-k, top-p), the recorded step shown, and Generate's method and seed."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.temperature = knob_box(KNOBS["temperature"], slider=True, high=3.0)
        self.top_k = knob_box(KNOBS["top_k"], high=MAX_TOP_K)
        self.top_p = knob_box(KNOBS["top_p"], slider=True)
        self.method = QComboBox()
        refill(self.method, [(text, key) for key, text in METHODS.items()])
        self.seed = knob_box(KNOBS["seed"])
        self.seed.setPrefix("seed ")
        self.step = QSpinBox(prefix="decoding step ", toolTip="Which step of the recorded decode: step k is the "
                             "distribution after the prompt and the output's first k − 1 tokens")
        self.button = QPushButton("Generate", toolTip="Generate a continuation with the chosen method (off the GUI thread).")
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        for name, widget in (("Temperature", self.temperature), ("Top-k", self.top_k), ("Top-p", self.top_p)):
            form.addRow(style.set_font_role(QLabel(name), "heading"), widget)
        form.addRow(self.step)
        form.addRow(row((self.method, 1), self.seed, self.button))

    def settings(self) -> tuple[float, int, float]:
        """(temperature, top_k, top_p) as the controls read now."""
        return float(self.temperature.value()), int(self.top_k.value()), float(self.top_p.value())


class SamplingPanel(Panel):
    panel_name = "sampling"
    title = "Sampling"

    def __init__(self, state, parent=None, synchronous: bool = False):
        super().__init__(state, parent)
        self.next_token = None  # the NextToken row drawn
        self.steps = []  # the Frame's recorded decoding steps
        self.current = None  # its Filtered row drawn now
        self._source = None
        self.note = text_label()
        self.controls = SamplingControls()
        self.bars = TokenBars(ROWS, zoom=True)  # outline tempered, filled what sampling draws from
        self.summary = text_label()
        self.output = text_label(rich=True, selectable=True)
        # the bars take the whole width under the controls: every token and value readable
        column(self.note, row((self.controls, 3), (column(self.summary, (self.output, 1)), 2)), (self.bars, 1),
               parent=self, margins=4)
        self.logits_job = self.add_job(self._on_logits, lambda text: say(self.note, text, "warning"), synchronous)
        self.generate_job = LatestJob(self, synchronous)
        self.generate_job.done.connect(self._on_generated)
        self.generate_job.failed.connect(lambda text: self.output.setText(html.escape(text)))
        self.generate_job.busy.connect(lambda busy: self.controls.button.setEnabled(not busy))
        for control in (self.controls.temperature, self.controls.top_p, self.controls.top_k):
            control.valueChanged.connect(self.redraw)
        self.controls.step.valueChanged.connect(self._show_step)
        self.controls.button.clicked.connect(self.generate)
        theme.notifier().changed.connect(self.redraw)
        self.follow(bundle=self._on_bundle, frame=self._on_frame)

    def _on_bundle(self, bundle) -> None:
        self.next_token = self.current = self._source = None
        self.bars.offer([], [], np.zeros(0))
        self.output.setText("")
        if bundle.model_kind.generates:
            say(self.note, "Run an input: its next-token distribution appears here.", "info")
        else:
            say(self.note, f"{bundle.name} is encoder-only: it does not generate text, so there is nothing to "
                "sample.", "warning")
        self.controls.setEnabled(bundle.model_kind.generates)
        self.controls.top_k.setMaximum(min(bundle.output_size, MAX_TOP_K))

    def _on_frame(self, frame) -> None:
        bundle = frame.bundle
        if not bundle.model_kind.generates:
            return
        self.steps = steps = frame.decode.steps if frame.decode is not None else []
        with QSignalBlocker(self.controls.step):
            self.controls.step.setRange(1, max(len(steps), 1))  # counted from 1, as a lecturer reads it
            self.controls.step.setSuffix(f" of {len(steps)}" if steps else "")
            self.controls.step.setValue(1)
        self.controls.step.setEnabled(len(steps) > 1)
        if steps:  # the recorded decode has every step's row already
            self._source = None
            self._show_step()
        elif frame.source != self._source:  # no recorded decode: one forward for the first step
            self._source = frame.source
            self.logits_job.submit(lambda: next_token_logits(bundle, frame.source))

    def _show_step(self, *_) -> None:
        if self.steps and self.state.bundle is not None:
            self._on_logits(from_decode_step(self.steps[self.controls.step.value() - 1], self.state.bundle))

    def _on_logits(self, next_token) -> None:
        self.next_token = next_token
        say(self.note, next_token.describe(lambda text: printable(text).replace("␣", " ")), "info")
        self.redraw()

    def redraw(self, *_) -> None:
        """Re-filter the row with the controls' settings and redraw the bars (no model run)."""
        if self.next_token is None:
            return
        temperature, top_k, top_p = self.controls.settings()
        logits = self.next_token.logits
        self.current = f = filtered(logits, temperature, top_k, top_p)
        top = f.tempered.topk(min(ROWS, f.tempered.numel()))
        ids = top.indices.tolist()
        bundle = self.state.bundle
        pieces = token_text(bundle.tgt_tokenizer, ids) if bundle is not None else [str(i) for i in ids]
        tempered, final, notes = top.values.numpy(), f.final[ids].numpy(), cut_by(f, ids)  # notes: the filter that cut
        self.bars.offer(ids, [printable(p) for p in pieces], final, tempered, notes,
                        lambda n: rows_title(n, f.final.numel()), edges=["masked" if m else "text" for m in notes],
                        texts=sampled_rows(notes, tempered, final), colours=["muted" if m else "text" for m in notes])
        self.summary.setText(filter_summary(f, logits, temperature, top_k, top_p))

    def generate(self) -> None:
        frame, bundle = self.state.frame, self.state.bundle
        if frame is None or bundle is None or not bundle.model_kind.generates:
            return
        temperature, top_k, top_p = self.controls.settings()
        method, seed = self.controls.method.currentData(), int(self.controls.seed.value())
        self.output.setText("<i>generating…</i>")
        self.generate_job.submit(lambda: (method, seed, bundle.translate(
            frame.source, method=method, temperature=temperature, top_k=top_k, top_p=top_p, seed=seed)))

    def _on_generated(self, result) -> None:
        method, seed, text = result
        self.output.setText(f"<b>Output</b> ({html.escape(generated_heading(method, seed))}):<br>{html.escape(text)}")
