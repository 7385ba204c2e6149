"""`Session`: everything that decides a picture (model, text, decoding, selection, views, theme,
head edits, a training run's model shown), one Qt-free psygnal event per change. `SessionState`
is its Qt adapter, the runner turns it into a `Frame`, a scene is it serialised."""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields, replace

from psygnal import Signal, SignalGroup

from model.interpret.decode_run import DecodeSettings
from model.interpret.interventions import OPERATIONS, format_heads, heads_that_fit, parse_heads
from model.nn.kinds import ATTENTION_KINDS as RECORDED_ATTENTION

ATTENTION_KINDS = tuple(RECORDED_ATTENTION)  # "encoder", "decoder_self", "cross": the recorder's names
DEFAULT_VIEWS = {"attention": "grid", "attention_grid": "selected", "decoding": "steps"}


@dataclass(frozen=True)
class AttentionSelection:
    """The head a user looks at: kind, layer and head from 0 (the screen counts from 1)."""

    kind: str = "encoder"
    layer: int = 0
    head: int = 0


@dataclass(frozen=True)
class ShownModel:
    """A model shown in place of the session's own (a live training run), and its name."""

    bundle: object
    label: str


class SessionEvents(SignalGroup):
    bundle = Signal(object)  # the session's own ModelBundle
    input = Signal(str, object)  # source text, target text or None
    decoding = Signal(object)  # DecodeSettings
    causal_mask = Signal(bool)  # the decoding panel's "remove the causal mask" ablation
    step = Signal(object)  # the selected trace step's name (or None)
    attention = Signal(object)  # AttentionSelection
    decode_step = Signal(object)  # the decoding panel's step t (None: the last)
    view = Signal(str, str)  # panel name, tab name
    theme = Signal(str)
    scale = Signal(float)
    shown_model = Signal(object)  # ShownModel or None
    interventions = Signal(object)  # {(kind, layer, head): "zero" | "mean" | "uniform"} (head surgery)
    compare = Signal(object)  # the checkpoint compared with the model (a folder or bundled name), or None
    chat = Signal(bool)  # a chat model reads the text as a user's message, laid out by its chat template


class Session:
    """The explorer's state; setters emit an event only when the value really changes."""

    def __init__(self) -> None:
        self.events = SessionEvents()
        self._batching = 0
        self._queued: dict[str, tuple] = {}  # event name → its latest arguments, while batching
        self.bundle = None
        self.source = ""
        self.target: str | None = None
        self.decoding = DecodeSettings()
        self.causal_mask = True
        self.step: str | None = None
        self.attention = AttentionSelection()
        self.decode_step: int | None = None
        self.views: dict[str, str] = dict(DEFAULT_VIEWS)
        self.theme = "light"
        self.scale = 1.0
        self.shown_model: ShownModel | None = None
        self.interventions: dict[tuple[str, int, int], str] = {}  # model.interpret.interventions: heads edited
        self.compare: str | None = None
        self.chat = True  # (only a model with a chat template uses it: `uses_chat`)

    # -- events ----------------------------------------------------------------------------------
    def _set(self, name: str, value) -> None:
        """Field `name` to `value`, and its event of the same name when it changed."""
        if value != getattr(self, name):
            setattr(self, name, value)
            self._emit(name, value)

    def _emit(self, name: str, *args) -> None:
        if self._batching:
            self._queued.pop(name, None)
            self._queued[name] = args  # the latest value, in the order of the last change
        else:
            getattr(self.events, name).emit(*args)

    @contextmanager
    def batch(self):
        """Several fields as one step: listeners hear each changed field once, after all are set."""
        self._batching += 1
        try:
            yield self
        finally:
            self._batching -= 1
            if not self._batching:
                queued, self._queued = self._queued, {}
                for name, args in queued.items():
                    getattr(self.events, name).emit(*args)

    # -- what the frames are computed from -------------------------------------------------------
    @property
    def model(self):
        """The bundle the panels show: a training run's while one is shown, else the session's."""
        return self.shown_model.bundle if self.shown_model is not None else self.bundle

    @property
    def model_label(self) -> str:
        if self.shown_model is not None:
            return self.shown_model.label
        return self.bundle.name if self.bundle is not None else ""

    def set_bundle(self, bundle) -> None:
        """The session's own model; a training run shown in its place is put away in the same step."""
        with self.batch():
            self.show_model(None)
            if bundle is not self.bundle:
                self.bundle = bundle
                self._emit("bundle", bundle)
                if bundle is not None:  # edits of heads the new model lacks are dropped
                    self.set_interventions(heads_that_fit(bundle.model, self.interventions))

    @property
    def uses_chat(self) -> bool:
        """The model shown reads the text as a chat message: chat is on and it has a chat template."""
        return self.chat and self.model is not None and self.model.chat_template is not None

    def set_chat(self, on: bool) -> None:
        """On: a chat model reads the text as the user's message; off: as a prompt to continue."""
        self._set("chat", bool(on))

    def set_input(self, source: str, target: str | None = None) -> None:
        """The text; a typed target is followed step by step, clearing it returns to greedy."""
        target = target if target and target.strip() else None
        if (source, target) == (self.source, self.target):
            return
        with self.batch():  # the strategy a target switches and the text: one step
            self.source, self.target = source, target
            if target is not None and self.decoding.strategy != "target":
                self.set_decoding(strategy="target")
            elif target is None and self.decoding.strategy == "target":
                self.set_decoding(strategy="greedy")
            self._emit("input", source, target)

    def revert_input(self, source: str, target: str | None, decoding: DecodeSettings | None = None) -> None:
        """Back to the text the picture shows, without an input event (the field keeps the refused text)."""
        self.source, self.target = source, target
        if decoding is not None:
            self.set_decoding(decoding)

    def set_decoding(self, settings: DecodeSettings | None = None, **changes) -> None:
        self._set("decoding", replace(settings or self.decoding, **changes))  # (DecodeSettings checks itself)

    def set_causal_mask(self, on: bool) -> None:
        self._set("causal_mask", bool(on))

    def show_model(self, shown: ShownModel | None) -> None:
        """Show a training run's model in every panel (None: back to the session's own)."""
        self._set("shown_model", shown)

    def set_interventions(self, heads: dict | None) -> None:
        """Head surgery: the heads edited for every frame ({} edits none)."""
        heads = dict(heads or {})
        for key, op in heads.items():
            if op not in OPERATIONS or not (isinstance(key, tuple) and len(key) == 3 and key[0] in ATTENTION_KINDS):
                raise ValueError(f"not a head edit: {key!r} = {op!r}")
        if heads != self.interventions:
            self.interventions = heads
            self._emit("interventions", dict(heads))

    def set_head_intervention(self, kind: str, layer: int, head: int, op: str | None) -> None:
        """Edit one head ("zero" | "mean" | "uniform"), or restore it (None)."""
        heads = dict(self.interventions)
        heads.pop((kind, int(layer), int(head)), None)
        if op is not None:
            heads[(kind, int(layer), int(head))] = op
        self.set_interventions(heads)

    def set_compare(self, checkpoint: str | None) -> None:
        """The checkpoint the compare panel runs beside the model (None: nothing compared)."""
        self._set("compare", str(checkpoint) if checkpoint else None)

    # -- selection and view --------------------------------------------------------------------
    def set_step(self, name: str | None) -> None:
        self._set("step", name)

    def set_attention(self, kind: str, layer: int, head: int) -> None:
        if kind not in ATTENTION_KINDS:
            raise ValueError(f"unknown attention kind {kind!r}; use one of {', '.join(ATTENTION_KINDS)}")
        self._set("attention", AttentionSelection(kind, max(0, int(layer)), max(0, int(head))))

    def set_decode_step(self, t: int | None) -> None:
        self._set("decode_step", t)

    def view(self, panel: str) -> str | None:
        return self.views.get(panel)

    def set_view(self, panel: str, tab: str) -> None:
        if self.views.get(panel) != tab:
            self.views[panel] = tab
            self._emit("view", panel, tab)

    def set_theme(self, theme: str) -> None:
        self._set("theme", theme)

    def set_scale(self, scale: float) -> None:
        self._set("scale", float(scale))

    # -- scenes ----------------------------------------------------------------------------------
    def to_scene_dict(self) -> dict:
        """The picture-deciding fields a scene file stores (the model by name elsewhere)."""
        return {"input": self.source or None, "target": self.target, "step": self.step,
                "attention": asdict(self.attention), "decoding": asdict(self.decoding),
                "causal_mask": self.causal_mask, "views": dict(self.views), "compare": self.compare,
                "chat": self.chat,
                "interventions": format_heads(self.interventions) or None}

    def reset_view_state(self, views: dict | None = None, decoding: dict | None = None,
                         causal_mask: bool = True, compare: str | None = None,
                         interventions: str | None = None, chat: bool = True) -> None:
        """Every view field a scene decides, to the scene's value or its default."""
        self.set_interventions(parse_heads(interventions or ""))
        self.set_chat(chat)
        self.set_decoding(DecodeSettings(**{f.name: (decoding or {}).get(f.name, f.default)
                                            for f in fields(DecodeSettings)}))
        self.set_causal_mask(causal_mask)
        self.set_compare(compare)
        self.set_decode_step(None)
        for panel, tab in (DEFAULT_VIEWS | (views or {})).items():
            self.set_view(panel, tab)
