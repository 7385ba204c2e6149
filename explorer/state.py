"""`SessionState`: the one object every panel observes, the Qt adapter of the Qt-free `Session`:
its events as Qt signals, the `Frame` drawn now, the selected step as an index into its trace."""
from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from explorer.session import Session
from model.inference.bundle import ForwardResult, ModelBundle
from model.interpret.frame import Frame
from model.nn.kinds import ATTENTION_KINDS, AttentionKind
from model.nn.step_names import attention_of_step, find_step

READ_THROUGH = ("set_bundle", "set_input", "set_decoding", "set_view")  # Session's, as written there
KIND_LABELS = {kind.value: kind.title for kind in AttentionKind}  # kind → its name in full


class SessionState(QObject):
    """`bundle` is the model the panels show (a training run's while shown), `session.bundle` the session's own."""

    bundleChanged = Signal(object)  # ModelBundle the panels show
    resultChanged = Signal(object)  # ForwardResult (a new trace)
    frameChanged = Signal(object)  # Frame: forward + decode for the model, text and settings
    stepChanged = Signal(int)  # index into result.trace.steps
    attentionSelected = Signal(str, int, int)  # kind, layer, head
    inputChanged = Signal(str, object)  # source text, target text or None
    decodingChanged = Signal(object)  # DecodeSettings
    causalMaskChanged = Signal(bool)
    decodeStepChanged = Signal(object)  # int or None (the last step)
    viewChanged = Signal(str, str)  # panel, tab
    shownModelChanged = Signal(object)  # ShownModel or None
    interventionsChanged = Signal(object)  # {(kind, layer, head): "zero" | "mean" | "uniform"}
    compareChanged = Signal(object)  # the compared checkpoint (str) or None
    chatChanged = Signal(bool)  # a chat model reads the text as a user's message (Session.set_chat)
    themeChanged = Signal(str)
    scaleChanged = Signal(float)
    frameFailed = Signal(str)  # why no Frame could be computed for the session now (the last stays)
    message = Signal(str, str)  # level ("info" | "warning" | "error"), text
    busyChanged = Signal(bool, str)  # busy?, what is running
    panelRequested = Signal(str, str)  # a panel asks the window to bring another forward: panel, its view or ""

    def __init__(self, parent: QObject | None = None, session: Session | None = None):
        super().__init__(parent)
        self.session = session or Session()
        self.frame: Frame | None = None
        self.result: ForwardResult | None = None
        self.step = 0
        self.busy = False
        self._shown_bundle = None
        ev = self.session.events
        ev.bundle.connect(self._on_session_model)
        ev.shown_model.connect(self._on_shown_model)
        relayed = {ev.input: self.inputChanged, ev.decoding: self.decodingChanged, ev.view: self.viewChanged,
                   ev.causal_mask: self.causalMaskChanged, ev.decode_step: self.decodeStepChanged,
                   ev.interventions: self.interventionsChanged, ev.compare: self.compareChanged,
                   ev.chat: self.chatChanged, ev.theme: self.themeChanged, ev.scale: self.scaleChanged}
        for event, signal in relayed.items():  # (Qt disconnects a dead listener: a session may outlive its window)
            event.connect(signal.emit)
        ev.attention.connect(lambda a: self.attentionSelected.emit(a.kind, a.layer, a.head))

    def __getattr__(self, name: str):
        """The session's setters that panels call on the state (`READ_THROUGH`), the session's own."""
        if name in READ_THROUGH:
            return getattr(self.session, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # -- data ------------------------------------------------------------------------------------
    @property
    def bundle(self) -> ModelBundle | None:
        return self.session.model

    @property
    def source_text(self) -> str:
        return self.session.source

    @property
    def kind(self) -> str:
        return self.session.attention.kind

    @property
    def layer(self) -> int:
        return self.session.attention.layer

    @property
    def head(self) -> int:
        return self.session.attention.head

    @property
    def trace(self):
        return self.result.trace if self.result is not None else None

    def _on_session_model(self, bundle) -> None:
        if self.session.shown_model is None:
            self._model_changed(bundle)

    def _on_shown_model(self, shown) -> None:
        self.shownModelChanged.emit(shown)
        drawn = self._shown_bundle
        if shown is not None and drawn is not None and shown.bundle.config.to_dict() == drawn.config.to_dict():
            return  # a training run's copy of the shape drawn: panels keep drawing until its frame comes
        self._model_changed(self.session.model)

    def _model_changed(self, bundle) -> None:
        """A different model on screen: its trace is not drawn yet; keep a selection it has."""
        if bundle is None or bundle is self._shown_bundle:
            return
        self._shown_bundle = bundle
        self.result = self.frame = None
        kinds = self.available_kinds()
        a = self.session.attention
        kind = a.kind if a.kind in kinds else (kinds[0] if kinds else "encoder")
        self.session.set_attention(kind, *self._clamped(kind, a.layer, a.head))
        self.bundleChanged.emit(bundle)

    def set_frame(self, frame: Frame) -> None:
        """A newly computed Frame: its forward becomes the trace every panel reads."""
        self.frame = frame
        self.set_result(frame.forward)
        self.frameChanged.emit(frame)

    def set_result(self, result: ForwardResult) -> None:
        """A new recorded forward: the step of the same name if it exists, else clamped."""
        old_name = self.session.step if self.session.step is not None else (
            self.current_step.name if self.current_step is not None else None)
        self.result = result
        names = result.trace.names()
        self.step = names.index(old_name) if old_name in names else min(self.step, len(names) - 1)
        if names:
            self.session.set_step(names[self.step])
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
        self.session.set_step(self.result.trace.steps[index].name)
        self.stepChanged.emit(index)
        found = attention_of_step(self.result.trace.steps[index].name)
        if found and (found[0], found[1]) != (self.kind, self.layer):
            self.session.set_attention(found[0], found[1], self.head)

    def select_step_named(self, name: str) -> bool:
        """Select the last step called `name`, or the first whose name starts with `name.`."""
        index = find_step(self.result.trace.names(), name) if self.result is not None else None
        if index is not None:
            self.select_step(index)
        return index is not None

    def select_attention(self, kind: str, layer: int, head: int) -> None:
        """Select a head; the stepper follows to that sublayer's softmax weights."""
        layer, head = self._clamped(kind, layer, head)
        self.session.set_attention(kind, layer, head)  # (an unknown kind: its ValueError)
        if self.result is not None:
            name = ATTENTION_KINDS[kind].format(layer=layer) + ".weights"
            if name in self.result.trace:
                self.select_step(self.result.trace.index(name))

    def select_head(self, head: int) -> None:
        """Change only the head (the stepper's head selector): the step stays where it is."""
        self.session.set_attention(self.kind, *self._clamped(self.kind, self.layer, head))

    def _clamped(self, kind: str, layer: int, head: int) -> tuple[int, int]:
        """(layer, head) within what the model shown has (a scene may ask for one it lacks)."""
        layer, head = max(0, int(layer)), max(0, int(head))
        if self.bundle is None:
            return layer, head
        return min(layer, max(0, self.n_layers(kind) - 1)), min(head, self.bundle.config.n_heads - 1)

    def available_kinds(self) -> list[str]:
        return list(self.bundle.model_kind.attention_kinds) if self.bundle is not None else []

    def n_layers(self, kind: str) -> int:
        if self.bundle is None:
            return 0
        cfg = self.bundle.config
        return cfg.n_encoder_layers if kind == "encoder" else cfg.n_decoder_layers

    def axis_labels(self, axis: str) -> list[str] | None:
        """Token labels for a trace axis name ("src" / "tgt"), or None for feature axes."""
        if self.result is None or axis not in ("src", "tgt"):
            return None
        return list(self.result.src_pieces if axis == "src" else self.result.tgt_pieces)

    def axis_title(self, axis: str) -> str | None:
        """A token axis's title where "source" / "target tokens" would mislead; None: the usual."""
        return self.bundle.model_kind.axis_title(axis) if self.bundle is not None else None

    # -- settings and view (written by panels, kept in the session) ---------------------------
    def request_panel(self, panel: str, view: str = "") -> None:
        """Ask the window to bring `panel` forward (showing `view` when given)."""
        if view:
            self.set_view(panel, view)
        self.panelRequested.emit(panel, view)

    # -- feedback ------------------------------------------------------------------------------
    def set_busy(self, busy: bool, what: str = "") -> None:
        self.busy = busy
        self.busyChanged.emit(busy, what)

    def frame_failed(self, text: str) -> None:
        """The pipeline could not compute a Frame (bad input …): the last one stays on screen."""
        self.frameFailed.emit(text)
        self.inform(text, "error")

    def inform(self, text: str, level: str = "info") -> None:
        self.message.emit(level, text)
