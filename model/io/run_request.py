"""What a run starts from: the model a window opens with, the first of some texts a model can read,
and a run asked for before any window draws it (a figure's --input, --target, --ablate, --compare)
checked against its model."""
from __future__ import annotations

from model.inference.bundle import InputError, ModelBundle
from model.interpret.comparison import ComparisonError, check_comparable
from model.interpret.interventions import InterventionError, parse_heads, validate_heads
from model.io.checkpoints import UNTRAINED, bundled_checkpoints, random_bundle
from model.io.open_model import load_model
from model.io.snapshots import resolve_reference

DEFAULT_TASK = "reverse"  # the task of the model a window opens with


class RequestError(ValueError):
    """A request the model cannot serve; the message names what is wrong."""


def default_model() -> ModelBundle:
    """The bundled `reverse` model, else an untrained model of its task."""
    if DEFAULT_TASK in bundled_checkpoints():
        return load_model(DEFAULT_TASK)
    return random_bundle(DEFAULT_TASK, dropout=0.0)


def first_readable(bundle: ModelBundle, texts, chat: bool = True) -> str | None:
    """The first of `texts` the model reads (as a user's chat message where `chat`), else None."""
    for text in filter(None, texts):
        try:
            bundle.encode_source(bundle.chat_input(text, chat))
        except InputError:
            continue
        return text
    return None


def check_request(bundle: ModelBundle, text: str, target: str | None = None, chat: bool = True,
                  ablate: str | None = None, compare: str | None = None) -> dict:
    """The heads `ablate` edits, once the text, target, head edits and compared checkpoint (loaded,
    of the same architecture; `untrained` is by construction) are known to fit `bundle`."""
    try:
        bundle.encode_source(bundle.chat_input(text, chat))
        if target and target.strip():
            bundle.encode_target(target)
    except InputError as exc:
        raise RequestError(f"bad input: {exc}") from None
    try:
        heads = validate_heads(bundle.model, parse_heads(ablate)) if ablate else {}
    except InterventionError as exc:
        raise RequestError(f"--ablate: {exc}") from None
    if compare and compare != UNTRAINED:
        try:
            check_comparable(bundle, load_model(resolve_reference(compare)))
        except ComparisonError as exc:
            raise RequestError(str(exc)) from None
        except (ValueError, OSError) as exc:
            raise RequestError(f"cannot load --compare {compare}: {exc}") from None
    return heads
