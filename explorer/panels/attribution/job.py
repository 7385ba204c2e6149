"""The attribution work, off the GUI thread: a superqt generator worker that yields one
progress report per method and returns a plain `AttributionView` (numpy arrays and strings;
no live tensors reach the widgets)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from superqt.utils import GeneratorWorker, create_worker

from model.interpret.attribution import (
    METHOD_TITLES,
    METHODS,
    attribution_steps,
    build_problem,
    describe_head,
    rank_correlations,
)

SHORT_NAMES = {"attention": "attn", "attention_head": "head", "rollout": "roll", "flow": "flow",
               "grad_x_input": "g×i", "integrated_gradients": "IG", "occlusion": "occl"}
PROGRESS_TITLES = {"attention": "raw attention", "attention_head": "one head's attention",
                   "rollout": "attention rollout", "flow": "attention flow (max-flow per token)",
                   "grad_x_input": "gradient × input", "integrated_gradients": "integrated gradients (captum)",
                   "occlusion": "occlusion (one forward per token)"}


def legend_html() -> str:
    """What the short names stand for (the bars' and the table's tooltip)."""
    rows = "".join(f"<tr><td><b>{SHORT_NAMES[m]}</b></td><td>{METHOD_TITLES[m]}</td></tr>" for m in METHODS)
    return f"<table>{rows}</table><br>"


@dataclass(frozen=True)
class AttributionRequest:
    """Everything the picture depends on: the model, its text, which output token, which head."""

    bundle: object
    model_label: str
    source: str
    target: str | None
    position: int
    head: tuple[int, int]
    output_ids: tuple[int, ...] | None = None  # the frame's greedy output: not decoded again


@dataclass
class AttributionView:
    request: AttributionRequest
    input_pieces: list[str]
    outputs: list[str]
    position: int
    head_label: str
    scores: dict[str, np.ndarray] = field(default_factory=dict)
    names: list[str] = field(default_factory=list)
    rho: np.ndarray | None = None
    probability: float | None = None  # p(the explained token), as the model gives it

    @property
    def output_piece(self) -> str:
        return self.outputs[self.position]


def compute(request: AttributionRequest):
    """Generator: yields (what, done, total) before each method (and each refinement of
    integrated gradients, the slow one on a large model); returns the AttributionView."""
    total = len(METHODS) + 1
    yield "the model's output", 0, total
    ids = list(request.output_ids) if request.output_ids is not None else None
    problem = build_problem(request.bundle, request.source, request.target, position=0, output_ids=ids)
    # a position kept from a longer output is clamped to this output's last token
    problem = problem.with_position(max(-len(problem.outputs), min(request.position, len(problem.outputs) - 1)))
    view = AttributionView(request, problem.input_pieces, problem.outputs, problem.position,
                           describe_head(problem, request.head), probability=problem.probability())
    steps, done = attribution_steps(problem, METHODS, request.head), 0
    while True:
        try:
            method, detail = next(steps)
        except StopIteration as end:
            view.scores.update(end.value)
            break
        done += not detail
        yield PROGRESS_TITLES[method] + (f", {detail}" if detail else ""), done, total
    view.names, view.rho = rank_correlations(view.scores)
    return view


_preloaded = False


def preload_libraries() -> None:
    """Import captum (and the matplotlib it pulls in), networkx and scipy.stats here, on the GUI
    thread, once (~1 s). Imported for the first time on the worker while the GUI thread re-polishes
    every widget (F11), they can crash the process (SIGSEGV)."""
    global _preloaded
    if _preloaded:
        return
    import captum.attr  # noqa: F401
    import networkx.algorithms.flow  # noqa: F401
    import scipy.stats  # noqa: F401
    _preloaded = True


def start(request: AttributionRequest, receiver) -> GeneratorWorker:
    """Start the work; its reports go to the receiver's bound methods (Qt drops them if the
    receiver is gone): on_progress((what, done, total)), on_done(view), on_failed(exc), on_finished()."""
    preload_libraries()
    worker = create_worker(compute, request, _start_thread=False, _ignore_errors=True)
    worker.yielded.connect(receiver.on_progress)
    worker.returned.connect(receiver.on_done)
    worker.errored.connect(receiver.on_failed)
    worker.finished.connect(receiver.on_finished)
    worker.start()
    return worker
