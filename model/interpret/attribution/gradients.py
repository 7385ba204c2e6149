"""Gradient scores on the token embeddings: gradient × input and integrated gradients.

"Input" is the token embedding lookup E[token] of the scored tokens (before the √d_model
scale and the positional encoding, which stay as they are), so a score says what that token's
identity contributed. Each score is the signed sum over the d_model dimensions; integrated
gradients' scores therefore add up to f(x) − f(baseline) (completeness, Sundararajan et al. 2017),
with f = log p(chosen token) and the baseline the all-zero embedding (the <pad> row).

The embedding is swapped in with a forward hook on the lookup that fires only for the
scored sequence's ids, so a model whose source and target share one table (Section 3.4) keeps
its target embeddings as they are.
"""
from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import torch

from model.interpret.attribution.problem import AttributionProblem

IG_STEPS = 32  # Gauss-Legendre points to start with; doubled until completeness holds
IG_MAX_STEPS = 512
IG_TOLERANCE = 0.01  # |Σ scores − (f(x) − f(0))| allowed, as a share of |f(x) − f(0)| (or of 1 nat if smaller)


@contextmanager
def substituted_embeddings(problem: AttributionProblem, ids: torch.Tensor, span_embeddings: torch.Tensor):
    """Inside the block, the lookup of exactly `ids` returns its embeddings with positions
    span[0]:span[1] replaced by `span_embeddings` (B, span, d_model)."""
    a, b = problem.span

    def hook(module, inputs, output):
        if inputs[0] is not ids:
            return None  # another sequence (the target) through a shared table
        return torch.cat([output[:, :a], span_embeddings, output[:, b:]], dim=1)

    handle = problem.embedding_table.register_forward_hook(hook)
    try:
        yield
    finally:
        handle.remove()


def log_prob_of_embeddings(problem: AttributionProblem, span_embeddings: torch.Tensor) -> torch.Tensor:
    """f(e) = log p(chosen token) when the scored tokens' embeddings are `span_embeddings`
    (B, span, d_model); one value per batch entry (captum batches the interpolation steps)."""
    ids = problem.attributed_ids.expand(span_embeddings.size(0), -1).clone()  # a tensor of its own, for the hook
    with substituted_embeddings(problem, ids, span_embeddings):
        return problem.log_prob(problem.logits(ids))


def input_embeddings(problem: AttributionProblem) -> torch.Tensor:
    """E[token] of the scored tokens (1, span, d_model), detached."""
    a, b = problem.span
    with torch.no_grad():
        return problem.embedding_table(problem.attributed_ids[:, a:b]).detach().clone()


def grad_x_input(problem: AttributionProblem) -> np.ndarray:
    """Σ_d e_d · ∂f/∂e_d per scored token (Shrikumar et al. 2016; Denil et al. 2014)."""
    x = input_embeddings(problem).requires_grad_(True)
    with torch.enable_grad():
        (grad,) = torch.autograd.grad(log_prob_of_embeddings(problem, x).sum(), x)
    return (grad * x).sum(-1)[0].detach().double().cpu().numpy()


def integrated_gradients(problem: AttributionProblem, n_steps: int | None = None,
                         return_delta: bool = False):
    """Captum's IntegratedGradients from the zero embedding to the input, summed over d_model.

    With `n_steps` left out the integral is refined (32, 64, … up to IG_MAX_STEPS points) until
    the scores add up to f(x) − f(0) within IG_TOLERANCE: a fixed 32 missed by up to 7% on a
    near-certain output. With `return_delta` also returns captum's convergence delta,
    Σ scores − (f(x) − f(0)), of the scores returned."""
    refinements = integrated_gradients_steps(problem, n_steps)
    while True:
        try:
            next(refinements)
        except StopIteration as done:
            scores, delta = done.value
            return (scores, delta) if return_delta else scores


def integrated_gradients_steps(problem: AttributionProblem, n_steps: int | None = None):
    """`integrated_gradients` as a generator: yields the number of points before each try at the
    integral (a viewer reports them: on an LLM each try is many passes), returns (scores, delta)."""
    from captum.attr import IntegratedGradients  # imported here: captum takes seconds to import

    x = input_embeddings(problem)
    ig = IntegratedGradients(lambda e: log_prob_of_embeddings(problem, e))
    steps = n_steps or IG_STEPS
    while True:
        yield steps
        with torch.enable_grad():
            attributions, delta = ig.attribute(x, baselines=torch.zeros_like(x), n_steps=steps,
                                               internal_batch_size=min(steps, 64), return_convergence_delta=True)
        scores = attributions.sum(-1)[0].detach().double().cpu().numpy()
        delta = float(delta.item())
        change = float(scores.sum()) - delta  # f(x) − f(0)
        if n_steps or steps >= IG_MAX_STEPS or abs(delta) <= IG_TOLERANCE * max(abs(change), 1.0):
            return scores, delta
        steps *= 2


SATURATED_RATIO = 0.05  # gradient × input's largest |score| below this share of IG's: a flat gradient


def gradient_saturated(grad_x_input_scores: np.ndarray, ig_scores: np.ndarray,
                       ratio: float = SATURATED_RATIO) -> bool:
    """Gradient × input near 0 beside integrated gradients (largest |score| under `ratio` of
    IG's): log p is flat where the input is — as it is for a near-certain output (the gradient
    of log p carries a factor 1 − p) — so g×i's scores and signs say little; the top token
    "lowering p" is such a sign. IG integrates the gradient from the baseline, where it is not flat; its scores add
    up to the whole change in log p (completeness), which g×i's need not."""
    top_ig = float(np.abs(ig_scores).max()) if np.size(ig_scores) else 0.0
    top_gxi = float(np.abs(grad_x_input_scores).max()) if np.size(grad_x_input_scores) else 0.0
    return top_ig > 0 and top_gxi < ratio * top_ig


def short_value(value: float) -> str:
    """A largest |score| in at most 5 characters ("0.99", "4.45", "2e-3")."""
    if value >= 100:
        return f"{value:.0f}"
    if value >= 0.01:
        return f"{value:.2f}"
    return f"{value:.0e}".replace("e-0", "e-")


NEAR_CERTAIN = 0.8  # p above which the caption names a flat gradient's likely reason


def saturation_note(scores: dict, probability: float | None = None) -> str:
    """A sentence when gradient × input is near 0 beside IG (`gradient_saturated`): its row of
    specks, one of them "lowering p" on the top token, read as a finding. The reason (a
    near-certain output: ∇ log p carries a factor 1 − p) is named only when p says so."""
    gxi, ig = scores.get("grad_x_input"), scores.get("integrated_gradients")
    if gxi is None or ig is None or not gradient_saturated(gxi, ig):
        return ""
    scales = f"largest {short_value(float(abs(gxi).max()))}, IG's {short_value(float(abs(ig).max()))}"
    if probability is not None and probability >= NEAR_CERTAIN:
        p = "p > 0.99" if probability >= 0.995 else f"p = {probability:.2f}"  # (never "1.00": not certainty)
        return f" g×i ≈ 0 ({scales}): at {p} the gradient at the input is nearly flat, so its signs say little."
    return f" g×i ≈ 0 ({scales}): the gradient at the input is nearly flat, so its signs say little."
