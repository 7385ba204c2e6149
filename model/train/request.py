"""What a live training run is made of: a task, a model size, the paper's recipe (Section 5).

`TrainingRequest` is the plain description a GUI fills in on its own thread;
`build_trainer(request)` turns it into a `model.train.trainer.Trainer` and runs on a worker
thread, because building a paper-base model or copying a loaded one takes a while.
The explorer's training panel (explorer.panels.training) is one such GUI; nothing here knows it.
"""
from __future__ import annotations

import copy
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from model.data.tasks import CORPUS_TASKS, TASKS, Task, get_task
from model.inference.bundle import ModelBundle
from model.nn.config import TransformerConfig
from model.nn.kinds import DECODER_ONLY, ENCODER_DECODER, ENCODER_ONLY, model_kind
from model.nn.kinds import MODEL_KINDS as KINDS
from model.nn.transformer import Transformer
from model.train.presets import LECTURE, LECTURE_PRESETS, lecture_bundle, lecture_preset
from model.train.trainer import TrainConfig, Trainer, TrainingError

# Sizes students can train in seconds (tiny), minutes (small), and Table 3's base model.
MODEL_PRESETS: dict[str, dict] = {
    "tiny": dict(d_model=64, n_heads=4, n_encoder_layers=2, n_decoder_layers=2, d_ff=256),
    "small": dict(d_model=128, n_heads=4, n_encoder_layers=3, n_decoder_layers=3, d_ff=512),
    "paper-base": dict(d_model=512, n_heads=8, n_encoder_layers=6, n_decoder_layers=6, d_ff=2048),
}
PRESET_LABELS = {
    "tiny": "tiny — d_model 64, 2+2 layers, 4 heads",
    "small": "small — d_model 128, 3+3 layers, 4 heads",
    "paper-base": "paper base — d_model 512, 6+6 layers, 8 heads",
    LECTURE: "lecture — fast settings for a live demo (reverse, translation, facts)",
}
BUILTIN_TASKS = tuple(TASKS)
# The three kinds a new model can be (Section 3's Transformer and its two descendants), with
# what each learns (model.train.trainer.OBJECTIVES) and the tasks it can learn from: the variants
# learn a language model of a corpus, the encoder-decoder any task of (source, target) pairs.
MODEL_KINDS = {
    ENCODER_DECODER.name: "encoder-decoder (paper)",
    ENCODER_ONLY.name: "encoder-only, masked LM (BERT-like)",
    DECODER_ONLY.name: "decoder-only, next-token LM (GPT-like)",
}
KIND_TASKS = {k.name: BUILTIN_TASKS if k.has_cross_attention else CORPUS_TASKS for k in KINDS.values()}
LANGUAGE_MODELS = {ENCODER_ONLY: "masked LM", DECODER_ONLY: "next-token LM"}  # what a variant learns, in short


@dataclass
class TrainingRequest:
    """Everything the worker needs to start; built on the GUI thread from the controls."""

    task: str = "reverse"  # a built-in task name (ignored when tsv_path or continue_from is set)
    tsv_path: str | None = None
    tsv_tokenizer: str = "char"
    preset: str = "tiny"
    kind: str = ENCODER_DECODER.name  # of a new model (MODEL_KINDS); a continued model keeps its own
    continue_from: ModelBundle | None = None  # the session's model: copied by the worker, never trained
    train: TrainConfig = field(default_factory=TrainConfig)
    probe: str = ""  # "" → the task's first example
    snapshots: bool = True
    start_paused: bool = False
    threads: int | None = None  # torch threads in the worker; None → all cores but one
    target: float | None = None  # a held-out score whose time to reach the panel shows (lecture preset)
    eval_interval: float | None = None  # s between live evaluations; None → paced by their cost

    def model_kind(self):
        """The kind of model the run trains (a continued model keeps its own)."""
        return self.continue_from.model_kind if self.continue_from is not None else model_kind(self.kind)


_warm_up: threading.Thread | None = None  # the process's one warm-up import


def warm_up_in_background() -> threading.Thread | None:
    """Import what a run's first optimiser imports, on a daemon thread, well before the run
    (once per process; None where it is imported already).

    `torch.optim.Adam(...)` imports `torch._dynamo` the first time (seconds on a small laptop's
    CPU), which would otherwise delay a run's first steps and leave its curves empty.
    A worker that builds its optimiser while this runs waits for the same import."""
    global _warm_up
    if _warm_up is not None or "torch._dynamo" in sys.modules:
        return _warm_up

    def work() -> None:
        import importlib
        try:
            importlib.import_module("torch._dynamo")
        except Exception:  # noqa: BLE001 - the app quit mid-import (a run would have imported it anew)
            if not sys.is_finalizing():
                raise
    _warm_up = threading.Thread(target=work, name="warm-up torch._dynamo", daemon=True)
    _warm_up.start()
    return _warm_up


def worker_threads() -> int:
    """Leave one core to the GUI thread so the window stays responsive while training."""
    return max(1, (os.cpu_count() or 2) - 1)


@contextmanager
def torch_threads(threads: int) -> Iterator[int]:
    """Run the block with `threads` torch threads, then give back the count it had, so frames
    computed after a run (and the GUI thread meanwhile) keep the app's own setting."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield threads
    finally:
        torch.set_num_threads(before)


def load_task(request: TrainingRequest) -> Task:
    if request.tsv_path:
        from model.data.user_data import tsv_task

        return tsv_task(request.tsv_path, request.tsv_tokenizer)
    return get_task(request.task)


def default_probe(task: Task, kind: str = ENCODER_DECODER.name) -> str:
    """The probe input students watch: the task's first example fit for the model's kind (a
    sentence with [MASK] for a masked LM, a prompt without one for the others; a corpus lists
    both, as `ModelBundle.examples` sorts them), else a held-out source."""
    if task.examples:
        fills_masks = not model_kind(kind).has_decoder
        fit = [e for e in task.examples if ("[MASK]" in e.split()) == fills_masks]
        return (fit or task.examples)[0]
    pairs = task.pairs(1, seed=0, split="eval")
    return pairs[0][0] if pairs else ""


def check_kind_task(kind: str, task_name: str) -> None:
    """A variant learns a language model of a corpus; refuse other tasks with the reason."""
    if kind not in MODEL_KINDS:
        raise TrainingError(f"unknown model kind {kind!r}; choose one of {', '.join(MODEL_KINDS)}")
    if not model_kind(kind).has_cross_attention and task_name not in KIND_TASKS[kind]:
        raise TrainingError(f"an {MODEL_KINDS[kind]} model learns from a text corpus "
                            f"({', '.join(KIND_TASKS[kind])}), not from the {task_name!r} task")


def new_bundle(task: Task, preset: str, seed: int = 0, kind: str = ENCODER_DECODER.name) -> ModelBundle:
    """An untrained model of a preset size and kind for `task`, with the task's own tokenizers.
    A variant keeps the preset's layers on its one stack (tiny: 2 encoder or 2 decoder layers)."""
    import torch

    if preset not in MODEL_PRESETS:
        raise TrainingError(f"unknown model size {preset!r}; choose one of {', '.join(MODEL_PRESETS)}")
    check_kind_task(kind, task.name)
    src_tok, tgt_tok = task.build_tokenizers()
    sizes = dict(MODEL_PRESETS[preset], dropout=0.1, max_len=max(64, task.max_src_len + 2, task.max_tgt_len + 2))
    mk = model_kind(kind)
    stacks = {**({} if mk.has_encoder else dict(n_encoder_layers=0)), **({} if mk.has_decoder else dict(n_decoder_layers=0))}
    torch.manual_seed(seed)
    if preset == "paper-base":  # Table 3 base; embeddings shared only when the vocabularies are one
        config = TransformerConfig.base(len(src_tok), len(tgt_tok), max_len=sizes["max_len"],
                                        share_embeddings=mk.has_cross_attention and src_tok.vocab == tgt_tok.vocab,
                                        kind=kind, **stacks)
    else:
        config = TransformerConfig(src_vocab_size=len(src_tok), tgt_vocab_size=len(tgt_tok), kind=kind,
                                   **{**sizes, **stacks})
    short = f"{LANGUAGE_MODELS[mk]}, " if mk in LANGUAGE_MODELS else ""
    return ModelBundle(Transformer(config), src_tok, tgt_tok, task.to_dict(), {},
                       name=f"{task.name} ({short}{preset})")


def build_trainer(request: TrainingRequest) -> Trainer:
    """The Trainer for a request: a fresh model, or a private copy of the session's model."""
    if request.continue_from is not None:
        bundle = copy.deepcopy(request.continue_from)  # the other panels keep showing the original
        bundle.path = None
        task = load_task(request) if request.tsv_path else None  # None → the bundle's own task
        return Trainer(bundle, task, request.train)
    if request.tsv_path:
        check_kind_task(request.kind, "tsv")
    if request.preset == LECTURE:
        if request.tsv_path:
            raise TrainingError(f"the lecture preset is for built-in tasks ({', '.join(LECTURE_PRESETS)}), "
                                "not a TSV file")
        preset = lecture_preset(request.task)
        task = preset.build_task(request.train.batch_size)
        return Trainer(lecture_bundle(preset, task, request.train.seed), task, request.train)
    task = load_task(request)
    return Trainer(new_bundle(task, request.preset, request.train.seed, request.kind), task, request.train)


def continue_refusal(bundle) -> str | None:
    """Why a loaded model cannot be trained further by the Trainer, or None if it can."""
    if bundle is None:
        return "No model is loaded"
    if bundle.task.get("pretrained"):
        return "A pretrained model's own training task is not one this trainer has"
    if bundle.task.get("at_scale"):
        return "A model trained at scale (BPE, token batches) continues on the command line: train … --resume"
    if not bundle.model_kind.has_decoder and not bundle.fills_masks:
        return "An encoder-only model is trained as a masked LM, which needs a [MASK] token in its vocabulary"
    return None


def lecture_request(request: TrainingRequest) -> TrainingRequest:
    """The lecture preset's model, schedule and evaluation pace for the request's task (its
    steps, warm-up and batch stay what the controls say: they show the preset's values)."""
    preset = lecture_preset(request.task)
    t = request.train
    request.kind = preset.kind
    request.train = preset.train_config(steps=t.steps, batch_size=t.batch_size, warmup=t.warmup, device=t.device,
                                        seed=t.seed)
    request.target, request.eval_interval = preset.target, preset.eval_every_s
    return request


def describe_model(trainer: Trainer) -> str:
    c = trainer.model.config
    n = sum(p.numel() for p in dict.fromkeys(trainer.model.parameters()))
    mk = c.model_kind
    if mk.has_cross_attention:
        layers = f"{c.n_encoder_layers}+{c.n_decoder_layers} layers"
    else:  # a variant: its one stack, and the language model it learns
        stack, depth = ("encoder", c.n_encoder_layers) if mk.has_encoder else ("decoder", c.n_decoder_layers)
        layers = f"{depth} {stack} layers ({LANGUAGE_MODELS[mk]})"
    return f"d_model {c.d_model}, {layers}, {c.n_heads} heads, d_ff {c.d_ff} · {n:,} parameters"


__all__ = ["LECTURE", "lecture_request", "MODEL_PRESETS", "PRESET_LABELS", "BUILTIN_TASKS", "MODEL_KINDS", "KIND_TASKS",
           "LANGUAGE_MODELS", "check_kind_task", "TrainingRequest", "build_trainer", "new_bundle", "default_probe",
           "load_task", "worker_threads", "torch_threads", "warm_up_in_background", "describe_model", "continue_refusal"]
