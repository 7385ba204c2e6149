"""Leave-one-out (occlusion): how much log p(chosen token) drops when one input token is
replaced by <pad>.

Why <pad>: every attention mask in the model hides <pad> keys (model.nn.transformer.padding_mask),
so the token is left out while every other token keeps its position, which is as close to
"without this token" as a fixed-length input gets. (<unk> or [MASK] would put in a token of
their own that the model has learned something about.)
"""
from __future__ import annotations

import numpy as np
import torch

from model.interpret.attribution.problem import AttributionProblem


@torch.no_grad()
def occlusion(problem: AttributionProblem, replacement_id: int | None = None) -> np.ndarray:
    """log p(token | input) − log p(token | input with token j replaced), for each scored j;
    all replacements run as one batch."""
    replacement = problem.bundle.config.pad_id if replacement_id is None else replacement_id
    a, b = problem.span
    ids = problem.attributed_ids  # (1, L)
    occluded = ids.repeat(b - a, 1)  # (span, L): row k has token a + k replaced
    k = torch.arange(b - a, device=ids.device)
    occluded[k, a + k] = replacement
    full = problem.log_prob(problem.logits(ids))  # (1,)
    dropped = problem.log_prob(problem.logits(occluded))  # (span,)
    return (full - dropped).double().cpu().numpy()
