"""A live run's setup, without widgets: what a new run may learn with which kind of model, what
it learns by default for the loaded model, and the `TrainingRequest` the chosen settings make.
The explorer's training controls show a `RunSetup` and ask these rules; they decide nothing.
"""
from __future__ import annotations

from dataclasses import dataclass

from model.nn.kinds import MODEL_KINDS as KINDS
from model.train.presets import LECTURE, LECTURE_PRESETS
from model.train.request import (
    BUILTIN_TASKS,
    KIND_TASKS,
    LANGUAGE_MODELS,
    MODEL_KINDS,
    TrainingRequest,
    continue_refusal,
    lecture_request,
)
from model.train.trainer import TrainConfig

CONTINUE = "continue"  # the model choice that trains a copy of the loaded model
TSV = "tsv"  # the task choice of a file of (source, target) pairs
DEFAULT_STEPS = 3000  # the tiny model's
# each kind's short name: "encoder-decoder", "encoder-only · masked LM", "decoder-only · next-token LM"
KIND_SHORT = {k.name: k.dashed_name + (f" · {LANGUAGE_MODELS[k]}" if k in LANGUAGE_MODELS else "") for k in KINDS.values()}
DEVICES = (("auto", "auto"), ("cpu", "CPU"), ("cuda", "CUDA"))


def task_refusal(kind: str, task: str) -> str | None:
    """Why a new model of `kind` cannot learn `task` (a variant learns a language model of a
    text corpus), or None if it can."""
    allowed = KIND_TASKS.get(kind, BUILTIN_TASKS)
    if allowed is BUILTIN_TASKS or task in allowed:  # (the encoder-decoder learns any pairs, a file's too)
        return None
    return f"a {KIND_SHORT.get(kind, kind)} model learns from a text corpus: {', '.join(allowed)}"


def fitting_task(kind: str, task: str) -> str:
    """`task` if a model of `kind` can learn it, else the first task it can."""
    return task if task_refusal(kind, task) is None else KIND_TASKS[kind][0]


def model_defaults(bundle, kind_now: str) -> tuple[str | None, str | None]:
    """(kind, task) a new run takes from the loaded model: its own kind and its built-in task
    (gpt-facts: decoder-only, facts); None where it has none to give (an encoder without a
    masked-LM head has no objective to train here; a model of no built-in task)."""
    kind = bundle.config.kind
    kind = kind if kind in MODEL_KINDS and (bundle.model_kind.has_decoder or bundle.fills_masks) else None
    task = (bundle.task or {}).get("name")
    return kind, (task if task in BUILTIN_TASKS and task_refusal(kind or kind_now, task) is None else None)


def continue_choice(bundle) -> tuple[str, str, str | None]:
    """(text, tooltip, kind) of the choice that continues training the loaded model; kind None
    where the Trainer cannot train it with its own task (the tooltip says why)."""
    why = continue_refusal(bundle)
    if why:
        return "continue training the loaded model (none)", why, None
    return (f"continue training “{bundle.name}”", "Train a copy of the model the other panels show, on its own task",
            bundle.config.kind)


@dataclass
class RunSetup:
    """The settings a run starts with, as the controls show them."""

    task: str = "reverse"  # a built-in task, or TSV
    tsv_path: str | None = None
    tsv_tokenizer: str = "char"
    kind: str = "encoder_decoder"  # the loaded model's own when continuing it
    preset: str = "tiny"  # a MODEL_PRESETS size, LECTURE or CONTINUE
    device: str = "auto"
    steps: int = DEFAULT_STEPS
    warmup: int = 400
    batch_size: int = 64

    def request(self, session_bundle, probe: str, start_paused: bool = False, eval_size: int = 50) -> TrainingRequest:
        """The run these settings describe (`session_bundle` is continued when CONTINUE is chosen);
        the lecture preset brings its model, schedule and pace for its tasks."""
        train = TrainConfig(steps=self.steps, batch_size=self.batch_size, warmup=self.warmup, device=self.device,
                            eval_size=eval_size)
        continuing = self.preset == CONTINUE
        request = TrainingRequest(task=self.task, tsv_path=self.tsv_path if self.task == TSV else None,
                                  tsv_tokenizer=self.tsv_tokenizer, preset="tiny" if continuing else self.preset,
                                  kind=self.kind, continue_from=session_bundle if continuing else None, train=train,
                                  probe=probe, snapshots=True, start_paused=start_paused)
        if self.preset == LECTURE and request.tsv_path is None and request.task in LECTURE_PRESETS:
            return lecture_request(request)
        return request


__all__ = ["CONTINUE", "DEFAULT_STEPS", "DEVICES", "KIND_SHORT", "RunSetup", "TSV", "continue_choice", "fitting_task",
           "model_defaults", "task_refusal"]
