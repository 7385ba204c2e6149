"""Sequences with a repeated random segment, the task on which induction heads form
(Olsson et al. 2022, "In-context Learning and Induction Heads").

Each row is random tokens with one random segment written twice in a row:

    [noise …][r_0 r_1 … r_{L-1}][r_0 r_1 … r_{L-1}][noise …]

The first copy cannot be predicted (its tokens are uniform); the second can, but only by
looking back: at r_j in the second copy, find where r_j occurred before and copy the token
after it (r_{j+1}). That look-back-and-copy is what an induction head does. The segment's
length and place differ from row to row, so no fixed positional offset solves the task.
Token 0 is never drawn: it is the model's pad id, whose keys the decoder's mask blocks.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch


class InductionDataError(ValueError):
    """Sizes that cannot make a sequence with a repeated segment."""


@dataclass
class RepeatBatch:
    """Token ids (B, T) and, per row, where the first copy starts and how long a copy is:
    the first copy is ids[b, start[b] : start[b] + length[b]], the second follows it at once."""

    ids: torch.Tensor  # (B, T) int64, values in 1 … vocab-1
    start: torch.Tensor  # (B,) int64
    length: torch.Tensor  # (B,) int64

    def second_start(self) -> torch.Tensor:
        return self.start + self.length


def check_sizes(seq_len: int, vocab: int, min_len: int, max_len: int) -> None:
    if vocab < 3:
        raise InductionDataError(f"the vocabulary needs at least 3 ids (0 is padding), got {vocab}")
    if not 2 <= min_len <= max_len:
        raise InductionDataError(f"segment lengths must satisfy 2 <= min_len <= max_len, got {min_len}…{max_len}")
    if 2 * max_len > seq_len:
        raise InductionDataError(f"two copies of a {max_len}-token segment do not fit in {seq_len} tokens")


def repeat_batch(batch_size: int, seq_len: int, vocab: int, min_len: int, max_len: int,
                 generator: torch.Generator) -> RepeatBatch:
    """`batch_size` rows of `seq_len` tokens, each with a segment of `min_len`…`max_len` tokens
    repeated once at a random place; every draw comes from `generator` (seeded: deterministic)."""
    check_sizes(seq_len, vocab, min_len, max_len)
    ids = torch.randint(1, vocab, (batch_size, seq_len), generator=generator)
    length = torch.randint(min_len, max_len + 1, (batch_size,), generator=generator)
    room = seq_len - 2 * length + 1  # start ∈ [0, T - 2L]
    start = (torch.rand(batch_size, generator=generator) * room).long().clamp(max=room - 1)
    pos = torch.arange(seq_len)
    second = (pos >= (start + length)[:, None]) & (pos < (start + 2 * length)[:, None])  # (B, T)
    source = (pos[None, :] - length[:, None]).clamp(min=0)  # where each second-copy token comes from
    ids = torch.where(second, ids.gather(1, source), ids)
    return RepeatBatch(ids, start, length)


__all__ = ["RepeatBatch", "repeat_batch", "check_sizes", "InductionDataError"]
