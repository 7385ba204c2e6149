"""The patching work, off the GUI thread: a superqt generator worker that yields progress
(one report per patched forward) and returns a `PatchingView` (the patching result and the
clean input's direct logit attribution; numpy arrays and strings only)."""
from __future__ import annotations

from dataclasses import dataclass

from superqt.utils import GeneratorWorker, create_worker

from model.data.masking import mask_id_of
from model.interpret.logit_attribution import LogitAttribution, direct_logit_attribution
from model.interpret.patching import PatchingResult, iter_activation_patching

AUTO_RUN_PARAMETERS = 10_000_000  # larger models are patched on Run only (a forward per cell)


def parameters_beyond_auto_run(bundle) -> int:
    """The model's parameter count when it is too large to patch unasked, else 0."""
    size = sum(p.numel() for p in bundle.model.parameters())
    return size if size > AUTO_RUN_PARAMETERS else 0


def cell_view(key: str, layer: int, column: int) -> str:
    return f"cell {key} {layer} {column}"


def parse_cell(view: str | None) -> tuple[str, int, int] | None:
    parts = (view or "").split()
    if len(parts) == 4 and parts[0] == "cell" and parts[2].isdigit() and parts[3].isdigit():
        return parts[1], int(parts[2]), int(parts[3])
    return None


@dataclass(frozen=True)
class PatchingRequest:
    """Everything the picture depends on: the model, the two inputs and the tokens compared."""

    bundle: object
    model_label: str
    clean: str
    corrupted: str
    answer: str | None  # None: the clean run's top token
    wrong: str | None  # None: the corrupted run's top token


@dataclass
class PatchingView:
    request: PatchingRequest
    result: PatchingResult
    dla: LogitAttribution


def compute(request: PatchingRequest):
    """Generator: yields (what, done, total); returns the PatchingView."""
    steps = iter_activation_patching(request.bundle, request.clean, request.corrupted, request.answer, request.wrong)
    while True:
        try:
            done, total = next(steps)
        except StopIteration as stop:
            result = stop.value
            break
        yield "patched forwards", done, total + 1
    yield "direct logit attribution", total, total + 1
    dla = direct_logit_attribution(request.bundle, request.clean, result.answer_id, result.wrong_id)
    return PatchingView(request, result, dla)


def start(request: PatchingRequest, receiver) -> GeneratorWorker:
    """Start the work; its reports go to the receiver's bound methods (Qt drops them if the
    receiver is gone): on_progress((what, done, total)), on_done(view), on_failed(exc), on_finished()."""
    worker = create_worker(compute, request, _start_thread=False, _ignore_errors=True)
    worker.yielded.connect(receiver.on_progress)
    worker.returned.connect(receiver.on_done)
    worker.errored.connect(receiver.on_failed)
    worker.finished.connect(receiver.on_finished)
    worker.start()
    return worker


def corrupted_default(bundle, text: str) -> str:
    """The session's text with its last ordinary token swapped for the next one in the
    vocabulary: a corrupted input of the same length to start from ("abcde" → "abcdf").
    A tokenizer that cannot join pieces back (a pretrained one) gives the text unchanged."""
    tok = bundle.src_tokenizer
    if not hasattr(tok, "join") or not hasattr(tok, "vocab"):
        return text
    try:
        ids = tok.encode(text).ids
        pieces = tok.pieces(ids)
        skip = {mask_id_of(tok), tok.unk_id, *getattr(tok, "special_ids", ())}
        ordinary = [i for i in range(4, len(tok.vocab)) if i not in skip]
        where = [k for k, i in enumerate(ids) if i in ordinary]
        if not where or len(ordinary) < 2:
            return text
        k = where[-1]
        pieces[k] = tok.vocab[ordinary[(ordinary.index(ids[k]) + 1) % len(ordinary)]]
        return tok.join(pieces)
    except (NotImplementedError, ValueError):
        return text
