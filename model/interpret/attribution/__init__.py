"""Which input mattered: six attribution methods side by side for one output token.

`attribute(bundle, source, target=None, position=-1, methods=None, head=None)` returns a dict
from method name to a 1-D numpy array over the source tokens (a decoder-only model's prompt),
for the output token at `position` of the model's own greedy output (or of `target`):

* "attention": the last layer's attention row, mean of heads (cross-attention for the
  encoder-decoder); "attention_head": one head, `head=(layer, head)`, default the last
  layer's first head;
* "rollout" and "flow": Abnar & Zuidema (2020), see `model.interpret.attribution.graph` for how they
  pass through an encoder-decoder's cross-attention;
* "grad_x_input" and "integrated_gradients" (captum): on the token embeddings, signed sums
  over d_model, see `model.interpret.attribution.gradients`;
* "occlusion": the drop in log p(token) when the input token is replaced by <pad>.

What `position` indexes, and what is unsupported (a pretrained encoder without a masked-LM
head), is in `model.interpret.attribution.problem`. `rank_correlations` gives the Spearman table.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from model.interpret.attribution.attention_scores import (
    attention_flow,
    attention_rollout,
    check_head,
    head_label,
    raw_attention,
    record_attention,
)
from model.interpret.attribution.correlation import rank_correlations, top1
from model.interpret.attribution.gradients import grad_x_input, integrated_gradients_steps
from model.interpret.attribution.occlusion import occlusion
from model.interpret.attribution.problem import AttributionProblem, UnsupportedAttribution, build_problem

METHODS = ("attention", "attention_head", "rollout", "flow", "grad_x_input", "integrated_gradients", "occlusion")
METHOD_TITLES = {
    "attention": "attention (last layer, mean of heads)", "attention_head": "attention (one head)",
    "rollout": "attention rollout", "flow": "attention flow", "grad_x_input": "gradient × input",
    "integrated_gradients": "integrated gradients", "occlusion": "occlusion (leave one out)",
}
_ATTENTION_METHODS = {"attention", "attention_head", "rollout", "flow"}

__all__ = ["METHODS", "METHOD_TITLES", "AttributionProblem", "UnsupportedAttribution", "attribute",
           "attribute_problem", "attribution_steps", "build_problem", "rank_correlations", "top1"]


def attribute(bundle, source: str, target: str | None = None, position: int = -1,
              methods=None, head: tuple[int, int] | None = None) -> dict[str, np.ndarray]:
    """Scores of every input token for one output token, per method (see the module docstring).

    Raises InputError for text the model cannot take, UnsupportedAttribution for a model
    with no output token to explain, ValueError for an unknown method name."""
    return attribute_problem(build_problem(bundle, source, target, position), methods, head)


def attribute_problem(problem: AttributionProblem, methods=None, head: tuple[int, int] | None = None,
                      progress: Callable[[str], None] | None = None) -> dict[str, np.ndarray]:
    """`attribute` for an already-built problem; `progress(method)` is called before each method
    (the GUI's worker reports it)."""
    steps = attribution_steps(problem, methods, head)
    while True:
        try:
            method, detail = next(steps)
        except StopIteration as done:
            return done.value
        if progress is not None and not detail:
            progress(method)


def attribution_steps(problem: AttributionProblem, methods=None, head: tuple[int, int] | None = None):
    """`attribute_problem` as a generator: yields (method, "") before each method and (method,
    "64 points") before each refinement of integrated gradients; returns {method: scores}. The
    attention is recorded once for every attention method (one recorded pass of the model)."""
    methods = tuple(METHODS if methods is None else methods)
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown attribution method(s) {unknown}; expected some of {', '.join(METHODS)}")
    check_finite_outputs(problem)
    heads = record_attention(problem) if _ATTENTION_METHODS & set(methods) or head is not None else None
    layer_head = check_head(problem, heads, head) if head is not None else (-1, 0)
    compute = {
        "attention": lambda: raw_attention(problem, heads),
        "attention_head": lambda: raw_attention(problem, heads, layer_head),
        "rollout": lambda: attention_rollout(problem, heads),
        "flow": lambda: attention_flow(problem, heads),
        "grad_x_input": lambda: grad_x_input(problem),
        "occlusion": lambda: occlusion(problem),
    }
    scores = {}
    for method in methods:
        yield method, ""
        if method == "integrated_gradients":
            refinements = integrated_gradients_steps(problem)
            while True:
                try:
                    points = next(refinements)
                except StopIteration as done:
                    values = done.value[0]
                    break
                yield method, f"{points} points"
        else:
            values = compute[method]()
        scores[method] = np.asarray(values, dtype=np.float64)
    return scores


def check_finite_outputs(problem: AttributionProblem) -> None:
    """Refuse a model whose logits are NaN or infinite on this input (weights that hold NaN or
    inf): every method would return NaN scores (and flow zeros) that explain nothing."""
    import torch

    with torch.no_grad():
        finite = bool(torch.isfinite(problem.logits(problem.attributed_ids)).all())
    if not finite:
        raise UnsupportedAttribution(f"{problem.bundle.name}: its outputs are NaN or infinite on this input (its "
                                     "weights hold NaN or infinite values, e.g. a run that diverged), so no "
                                     "attribution can explain them")


def describe_head(problem: AttributionProblem, head: tuple[int, int] | None = None) -> str:
    """How the panel names the chosen head ("layer 2, head 1")."""
    return head_label(problem, record_attention(problem), head if head is not None else (-1, 0))
