"""`SessionState`: the one object every panel observes (napari's components / glue's state).

It holds data only — the loaded bundle, the current input and its recorded forward pass,
and the selection (step, attention kind, layer, head). Panels read it, listen to its
signals, and change it through its setters; they never call each other. Nothing here runs
a model: slow work lives in `explorer.runner`.
"""
from __future__ import annotations

import re

from PySide6.QtCore import QObject, Signal

from model.bundle import ForwardResult, ModelBundle
from model.recorder import ATTENTION_KINDS

_ATTN_STEP = re.compile(r"^(encoder|decoder)\.layers\.(\d+)\.(self_attn|cross_attn)\.")

KIND_LABELS = {
    "encoder": "Encoder self-attention",
    "decoder_self": "Decoder masked self-attention",
    "cross": "Encoder–decoder (cross) attention",
}


def attention_of_step(name: str) -> tuple[str, int] | None:
    """(kind, layer) of the attention sublayer a step belongs to, or None."""
    m = _ATTN_STEP.match(name)
    if not m:
        return None
    stack, layer, sub = m.groups()
    kind = "encoder" if stack == "encoder" else ("decoder_self" if sub == "self_attn" else "cross")
    return kind, int(layer)


class SessionState(QObject):
    """Shared state of one explorer window."""

    bundleChanged = Signal(object)  # ModelBundle
    resultChanged = Signal(object)  # ForwardResult (a new trace)
    stepChanged = Signal(int)  # index into result.trace.steps
    attentionSelected = Signal(str, int, int)  # kind, layer, head
    inputChanged = Signal(str, object)  # source text, target text or None
    message = Signal(str, str)  # level ("info" | "warning" | "error"), text
    busyChanged = Signal(bool, str)  # busy?, what is running

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.bundle: ModelBundle | None = None
        self.result: ForwardResult | None = None
        self.source_text = ""
        self.target_text: str | None = None
        self.step = 0
        self.kind = "encoder"
        self.layer = 0
        self.head = 0
        self.busy = False

    # -- data ------------------------------------------------------------------------------------
    @property
    def trace(self):
        return self.result.trace if self.result is not None else None

    def set_bundle(self, bundle: ModelBundle) -> None:
        self.bundle = bundle
        self.result = None
        kinds = self.available_kinds()
        self.kind = kinds[0] if kinds else "encoder"
        self.layer = min(self.layer, max(0, self.n_layers(self.kind) - 1))
        self.head = min(self.head, bundle.config.n_heads - 1)
        self.bundleChanged.emit(bundle)

    def set_input(self, source: str, target: str | None = None) -> None:
        self.source_text, self.target_text = source, target
        self.inputChanged.emit(source, target)

    def set_result(self, result: ForwardResult) -> None:
        """A new recorded forward: keep the step's name if it still exists, else clamp."""
        old_name = self.current_step.name if self.current_step is not None else None
        self.result = result
        names = result.trace.names()
        self.step = names.index(old_name) if old_name in names else min(self.step, len(names) - 1)
        self.resultChanged.emit(result)
        self.stepChanged.emit(self.step)

    # -- selection -------------------------------------------------------------------------------
    @property
    def current_step(self):
        if self.result is None or not self.result.trace.steps:
            return None
        return self.result.trace.steps[min(self.step, len(self.result.trace.steps) - 1)]

    def n_steps(self) -> int:
        return len(self.result.trace.steps) if self.result is not None else 0

    def select_step(self, index: int) -> None:
        """Move the stepper; entering an attention sublayer also selects its kind and layer."""
        n = self.n_steps()
        if n == 0:
            return
        index = max(0, min(int(index), n - 1))
        if index == self.step:
            return
        self.step = index
        self.stepChanged.emit(index)
        found = attention_of_step(self.result.trace.steps[index].name)
        if found and (found[0], found[1]) != (self.kind, self.layer):
            self.kind, self.layer = found
            self.attentionSelected.emit(self.kind, self.layer, self.head)

    def select_step_named(self, name: str) -> bool:
        """Select the last step called `name`, or the first whose name starts with `name.`."""
        if self.result is None:
            return False
        names = self.result.trace.names()
        if name in names:
            self.select_step(len(names) - 1 - names[::-1].index(name))
            return True
        for i, n in enumerate(names):
            if n.startswith(name + "."):
                self.select_step(i)
                return True
        return False

    def select_attention(self, kind: str, layer: int, head: int) -> None:
        """Select a head; the stepper follows to that sublayer's softmax weights."""
        if kind not in ATTENTION_KINDS:
            raise ValueError(f"unknown attention kind {kind!r}")
        changed = (kind, layer, head) != (self.kind, self.layer, self.head)
        self.kind, self.layer, self.head = kind, int(layer), int(head)
        if changed:
            self.attentionSelected.emit(self.kind, self.layer, self.head)
        if self.result is not None:
            name = ATTENTION_KINDS[kind].format(layer=layer) + ".weights"
            if name in self.result.trace:
                self.select_step(self.result.trace.index(name))

    def select_head(self, head: int) -> None:
        """Change only the head (the stepper's head selector): the step stays where it is."""
        head = int(head)
        if self.bundle is not None:
            head = max(0, min(head, self.bundle.config.n_heads - 1))
        if head != self.head:
            self.head = head
            self.attentionSelected.emit(self.kind, self.layer, self.head)

    def available_kinds(self) -> list[str]:
        if self.bundle is None:
            return []
        cfg = self.bundle.config
        kinds = []
        if cfg.has_encoder:
            kinds.append("encoder")
        if cfg.has_decoder:
            kinds.append("decoder_self")
        if cfg.kind == "encoder_decoder":
            kinds.append("cross")
        return kinds

    def n_layers(self, kind: str) -> int:
        if self.bundle is None:
            return 0
        cfg = self.bundle.config
        return cfg.n_encoder_layers if kind == "encoder" else cfg.n_decoder_layers

    def axis_labels(self, axis: str) -> list[str] | None:
        """Token labels for a trace axis name ("src" / "tgt"), or None for feature axes."""
        if self.result is None:
            return None
        if axis == "src":
            return list(self.result.src_pieces)
        if axis == "tgt":
            return list(self.result.tgt_pieces)
        return None

    def axis_title(self, axis: str) -> str | None:
        """What a token axis holds for this model, where the encoder-decoder names ("source" /
        "target tokens") would mislead: a decoder-only model reads one sequence, <bos> + prompt
        + its continuation; an encoder-only model reads only its input. None: the usual title."""
        if self.bundle is None:
            return None
        kind = self.bundle.config.kind
        if kind == "decoder_only" and axis == "tgt":
            return "tokens: <bos> prompt | continuation"
        if kind == "encoder_only" and axis == "src":
            return "input tokens"
        return None

    # -- feedback ------------------------------------------------------------------------------
    def set_busy(self, busy: bool, what: str = "") -> None:
        self.busy = busy
        self.busyChanged.emit(busy, what)

    def inform(self, text: str, level: str = "info") -> None:
        self.message.emit(level, text)
