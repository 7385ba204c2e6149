"""Every attribution method for one output token, side by side, and how far they agree.

`compare_methods` is a generator: it yields (done, total, what) before each method (a GUI
shows the progress; a script can `list()` it away) and returns a `MethodComparison` of plain
numpy arrays and strings, which the attribution panel draws as it is.
"""
from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field

import numpy as np

from model.interpret.attribution import METHOD_TITLES, METHODS, attribution_steps, build_problem, describe_head
from model.interpret.attribution.correlation import rank_correlations


@dataclass
class MethodComparison:
    """Each method's scores over the input tokens for the output token at `position`."""

    input_pieces: list[str]
    outputs: list[str]
    position: int
    head_label: str  # the head "attention_head" read ("layer 2, head 1")
    scores: dict[str, np.ndarray] = field(default_factory=dict)  # method → one score per input token
    names: list[str] = field(default_factory=list)  # the methods in `rho`'s order
    rho: np.ndarray | None = None  # Spearman's ρ between the methods' scores
    probability: float | None = None  # p(the explained token), as the model gives it

    @property
    def output_piece(self) -> str:
        return self.outputs[self.position]


@dataclass(frozen=True)
class AttributionRequest:
    """Everything a comparison depends on: the model, its text, which output token, which head."""

    bundle: object
    model_label: str
    source: str
    target: str | None
    position: int
    head: tuple[int, int]
    output_ids: tuple[int, ...] | None = None  # the greedy output already decoded: not decoded again


def head_layers(config) -> int:
    """The layers whose heads the "one head" method may pick: the decoder's, else the encoder's."""
    return config.n_decoder_layers if config.has_decoder else config.n_encoder_layers


def request_for(frame, output_view: str | None, head_view: str | None) -> AttributionRequest:
    """The request for a frame and the session's views: the output position ("3"; default 0) and
    the head ("layer,head"; default the last layer's first head), clamped to the model's."""
    position = int(output_view) if output_view and output_view.lstrip("-").isdigit() else 0
    parts = (head_view or "").split(",")
    layer, head = (int(parts[0]), int(parts[1])) if len(parts) == 2 and all(p.isdigit() for p in parts) else (-1, 0)
    config, layers = frame.bundle.config, head_layers(frame.bundle.config)
    head = (min(layer, layers - 1) if layer >= 0 else layers - 1, min(head, config.n_heads - 1))
    run = frame.decode  # the greedy output the frame decoded, reused (an LLM's decode is seconds)
    own = (tuple(i for i in run.output_ids if i != run.eos_id)
           if run is not None and frame.target is None and frame.settings.strategy == "greedy" else None)
    return AttributionRequest(frame.bundle, frame.model_label, frame.source, frame.target, position, head, own)


def compare_methods(bundle, source: str, target: str | None, position: int, head: tuple[int, int],
                    output_ids: tuple[int, ...] | None = None) -> Generator[tuple[int, int, str], None, MethodComparison]:
    """Yields (done, total, what) before each method and each refinement of integrated gradients
    (the slow one on a large model); returns the MethodComparison. A position past this output's
    end is clamped to its last token. `output_ids`: the greedy output already decoded (a frame's),
    not decoded again."""
    total = len(METHODS) + 1
    yield 0, total, "Computing the model's output…"
    ids = list(output_ids) if output_ids is not None else None
    problem = build_problem(bundle, source, target, position=0, output_ids=ids)
    problem = problem.with_position(max(-len(problem.outputs), min(position, len(problem.outputs) - 1)))
    result = MethodComparison(problem.input_pieces, problem.outputs, problem.position, describe_head(problem, head),
                              probability=problem.probability())
    steps, done = attribution_steps(problem, METHODS, head), 0
    while True:
        try:
            method, detail = next(steps)
        except StopIteration as end:
            result.scores.update(end.value)
            break
        done += not detail
        what = METHOD_TITLES[method] + (f", {detail}" if detail else "")
        yield done, total, f"Computing {what}… ({done + 1}/{total})"
    result.names, result.rho = rank_correlations(result.scores)
    return result


def compare_request(request: AttributionRequest):
    """`compare_methods` for a request (a GUI's job): yields its progress, returns (request, comparison)."""
    return request, (yield from compare_methods(request.bundle, request.source, request.target, request.position,
                                                request.head, request.output_ids))


__all__ = ["AttributionRequest", "MethodComparison", "compare_methods", "compare_request", "head_layers", "request_for"]
