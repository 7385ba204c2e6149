"""Where each optimisation step's micro-batches come from, on this process.

A step reads one micro-batch from each of its slots: `accumulate` slots on each of
`world_size` processes, rank r owning slots r·accumulate … (r+1)·accumulate − 1. So one process
accumulating over n slots reads exactly what n processes read together, and the loss curves
of the two agree.

- `SentenceBatches`: `batch_size` pairs drawn from a task's training stream (every rank draws
  the same pairs from the same seed), cut into one contiguous run of pairs per slot.
- `TokenBatches`: a TSV read in batches of about `batch_tokens` tokens per side (Section 5.1),
  each slot its own share of the lines (model.data.batching.SlotStream), resumable.
A task a checkpoint names is rebuilt by `task_from_info`.
"""
from __future__ import annotations

from pathlib import Path

from model.data.batching import SlotPosition, SlotStream
from model.data.task import Task
from model.data.tasks import get_task
from model.data.tokenizers import Tokenizer
from model.data.user_data import Batch, make_batch


def task_from_info(info: dict) -> Task:
    """Rebuild the task a bundle or checkpoint describes (`Task.to_dict()`), built-in or TSV."""
    from model.data.user_data import text_task, tsv_task

    params = dict(info.get("params") or {})
    if "text_path" in params:
        return text_task(params["text_path"], params.get("tokenizer", "word"))
    if "path" in params:
        return tsv_task(params["path"], params.get("tokenizer", "char"))
    return get_task(info.get("name", ""), **params)


class SentenceBatches:
    """This rank's micro-batches of `batch_size` sentences a step from a task's stream."""

    def __init__(self, task: Task, src_tok: Tokenizer, tgt_tok: Tokenizer, batch_size: int, slots: range,
                 n_slots: int, seed: int):
        self.src_tok, self.tgt_tok, self.batch_size = src_tok, tgt_tok, batch_size
        self.slots, self.n_slots = slots, n_slots
        self._stream = task.stream(seed=seed, split="train")

    def next_step(self) -> list[Batch]:
        pairs = [next(self._stream) for _ in range(self.batch_size)]
        if self.n_slots == 1:
            return [make_batch(pairs, self.src_tok, self.tgt_tok)]
        edges = [round(k * len(pairs) / self.n_slots) for k in range(self.n_slots + 1)]
        return [make_batch(pairs[edges[s]:edges[s + 1]], self.src_tok, self.tgt_tok) for s in self.slots]

    def positions(self) -> list[list[int]]:
        return []  # a generated stream is not resumed mid-way

    @property
    def dropped(self) -> int:
        return 0


class TokenBatches:
    """This rank's micro-batches of a TSV, `budget` tokens per side each."""

    def __init__(self, path: str | Path, src_tok: Tokenizer, tgt_tok: Tokenizer, budget: int, slots: range,
                 n_slots: int, max_len: int, buffer_pairs: int, seed: int,
                 positions: list[SlotPosition] | None = None):
        positions = positions or [SlotPosition() for _ in range(n_slots)]
        self.streams = [SlotStream(path, src_tok, tgt_tok, budget, slot, n_slots, max_len, buffer_pairs, seed,
                                   positions[slot]) for slot in slots]

    def next_step(self) -> list[Batch]:
        return [next(s) for s in self.streams]

    def positions(self) -> list[list[int]]:
        """Where each of this rank's slots stands (to resume there)."""
        return [s.position.as_list() for s in self.streams]

    @property
    def dropped(self) -> int:
        """Pairs skipped for being longer than max_len or the budget."""
        return sum(s.dropped for s in self.streams)


__all__ = ["SentenceBatches", "TokenBatches", "task_from_info"]
