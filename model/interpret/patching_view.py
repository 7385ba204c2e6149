"""Activation patching with progress, for a GUI's worker: `compute_patching` reports (done, total,
what) per patched forward and returns a `PatchingView`, the patching result and the clean input's
direct logit attribution."""
from __future__ import annotations

from dataclasses import dataclass

from model.interpret.logit_attribution import LogitAttribution, direct_logit_attribution
from model.interpret.patching import PatchingResult, iter_activation_patching

AUTO_RUN_PARAMETERS = 10_000_000  # larger models are patched on Run only (a forward per cell)


def parameters_beyond_auto_run(bundle) -> int:
    """The model's parameter count when it is too large to patch unasked, else 0."""
    size = sum(p.numel() for p in bundle.model.parameters())
    return size if size > AUTO_RUN_PARAMETERS else 0


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


def compute_patching(request: PatchingRequest):
    """Generator: yields (done, total, what); returns the PatchingView."""
    steps = iter_activation_patching(request.bundle, request.clean, request.corrupted, request.answer, request.wrong)
    while True:
        try:
            done, total = next(steps)
        except StopIteration as stop:
            result = stop.value
            break
        yield done, total + 1, f"Computing patched forwards… ({done}/{total + 1})"
    yield total, total + 1, f"Computing direct logit attribution… ({total}/{total + 1})"
    dla = direct_logit_attribution(request.bundle, request.clean, result.answer_id, result.wrong_id)
    return PatchingView(request, result, dla)
