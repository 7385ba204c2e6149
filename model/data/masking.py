"""BERT's masked-language-model corruption (Devlin et al. 2019, Section 3.1, "Task #1").

Each real token is chosen for prediction with probability 15%. A chosen token is replaced
by [MASK] 80% of the time, by a random token 10% of the time, and left unchanged 10% of the
time; the model must predict the original token at every chosen position, and only there.
The random and unchanged cases keep the model from learning that only [MASK] positions
matter, since at fine-tuning time no input contains [MASK].
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

MASK_PROB = 0.15
SPLIT = (0.8, 0.1, 0.1)  # [MASK], random token, unchanged

# What happened at each position (the `decision` tensor).
KEPT_OUT, MASKED, RANDOM, UNCHANGED = 0, 1, 2, 3


@dataclass
class MaskedBatch:
    """inputs: the corrupted ids the encoder reads; labels: the original id at chosen
    positions and `ignore_id` elsewhere (so the loss sees only chosen positions);
    decision: KEPT_OUT / MASKED / RANDOM / UNCHANGED per position (for tests and views)."""

    inputs: torch.Tensor
    labels: torch.Tensor
    decision: torch.Tensor


def mask_tokens(ids: torch.Tensor, mask_id: int, candidates: torch.Tensor, special_ids,
                ignore_id: int = 0, generator: torch.Generator | None = None,
                prob: float = MASK_PROB) -> MaskedBatch:
    """Apply the 15% / 80-10-10 rule to a batch of ids (B, T).

    candidates: the ids a random replacement is drawn from (the real words: no specials,
    no [MASK]); as in BERT it may by chance draw the original token. special_ids
    (padding, <bos>, …) are never chosen. Draws come from `generator`, so a seed repeats them.
    """
    if candidates.numel() == 0:
        raise ValueError("no candidate tokens for random replacement")
    device = ids.device
    special = torch.zeros_like(ids, dtype=torch.bool)
    for s in special_ids:
        special |= ids == int(s)
    u_choose = torch.rand(ids.shape, generator=generator, device=device)
    u_how = torch.rand(ids.shape, generator=generator, device=device)
    chosen = (u_choose < prob) & ~special
    to_mask = chosen & (u_how < SPLIT[0])
    to_random = chosen & (u_how >= SPLIT[0]) & (u_how < SPLIT[0] + SPLIT[1])
    unchanged = chosen & ~to_mask & ~to_random
    picks = candidates.to(device)[torch.randint(len(candidates), ids.shape, generator=generator, device=device)]
    inputs = torch.where(to_mask, torch.full_like(ids, mask_id), ids)
    inputs = torch.where(to_random, picks, inputs)
    labels = torch.where(chosen, ids, torch.full_like(ids, ignore_id))
    decision = torch.full_like(ids, KEPT_OUT)
    decision[to_mask], decision[to_random], decision[unchanged] = MASKED, RANDOM, UNCHANGED
    return MaskedBatch(inputs, labels, decision)


def mask_id_of(tokenizer) -> int | None:
    """The id of the tokenizer's mask token ([MASK] in ours and BERT's), or None without one."""
    own = getattr(tokenizer, "mask_id", None)
    if isinstance(own, int):
        return own
    index = getattr(tokenizer, "index", None)
    return index.get("[MASK]") if isinstance(index, dict) else None


__all__ = ["MASK_PROB", "SPLIT", "MaskedBatch", "mask_tokens", "mask_id_of",
           "KEPT_OUT", "MASKED", "RANDOM", "UNCHANGED"]
