"""Training streams ordered for speed: short sources first (a curriculum) and batches of
similar lengths (buckets), as a `Task` whose `stream()` the Trainer reads unchanged.

Why buckets: a batch is padded to its longest pair, so random lengths 1–16 waste almost half
of every step on padding (the mean is 8.5, the longest near 16). Drawing several batches at
once, sorting them by length and handing them out in shuffled order keeps each batch nearly
free of padding while every pair still comes from the same distribution. Why a curriculum
(Bengio et al. 2009): a reversal's alignment is learnt in a few steps on short strings and
then carries over to long ones. Held-out pairs (`pairs`) and the description a checkpoint
keeps (`to_dict`) are the plain task's.
"""
from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, fields

from model.data.task import Task

MAX_REJECTIONS = 200  # draws before a curriculum too strict for the task settles for the shortest


@dataclass
class ScheduledTask(Task):
    """A task whose training stream follows a length curriculum and/or length buckets.

    batch_size must be the Trainer's (it takes that many consecutive pairs per step);
    start_len: the longest source at first (None: no curriculum), growing linearly to the
    task's longest after ramp_pairs drawn pairs; bucket_batches: batches drawn and sorted
    together (0 or 1: none)."""

    batch_size: int = 64
    start_len: int | None = None
    ramp_pairs: int = 1
    bucket_batches: int = 0

    @classmethod
    def wrap(cls, task: Task, batch_size: int, start_len: int | None = None, ramp_pairs: int = 1,
             bucket_batches: int = 0) -> ScheduledTask:
        return cls(**{f.name: getattr(task, f.name) for f in fields(Task)}, batch_size=max(1, batch_size),
                   start_len=start_len, ramp_pairs=max(1, ramp_pairs), bucket_batches=bucket_batches)

    def source_length(self, source: str) -> int:
        """In tokens: characters or words, as the task's tokenizer splits it."""
        return len(source) if self.tokenizer == "char" else len(source.split())

    def length_limit(self, drawn: int) -> int:
        """The longest source allowed for the `drawn`-th training pair."""
        if self.start_len is None:
            return self.max_src_len
        grown = (self.max_src_len - self.start_len) * min(1.0, drawn / self.ramp_pairs)
        return int(self.start_len + grown)

    def curriculum(self, rng: random.Random, split: str) -> Iterator[tuple[str, str]]:
        """Pairs of the task, rejecting sources longer than the limit (the allowed lengths keep
        their odds); a limit no source meets within MAX_REJECTIONS draws gets the shortest drawn."""
        drawn = 0
        while True:
            limit = self.length_limit(drawn)
            pair = shortest = self.sample(rng, split)
            for _ in range(MAX_REJECTIONS):
                if self.source_length(pair[0]) <= limit:
                    break
                pair = self.sample(rng, split)
                shortest = min(shortest, pair, key=lambda p: self.source_length(p[0]))
            else:
                pair = shortest
            drawn += 1
            yield pair

    def stream(self, seed: int = 0, split: str = "train") -> Iterator[tuple[str, str]]:
        rng = random.Random(f"{self.name}:{seed}:{split}")
        pairs = self.curriculum(rng, split)
        if self.bucket_batches <= 1:
            yield from pairs
            return
        bs = self.batch_size
        while True:
            pool = [next(pairs) for _ in range(self.bucket_batches * bs)]
            pool.sort(key=lambda p: (self.source_length(p[0]), len(p[1])))
            batches = [pool[i:i + bs] for i in range(0, len(pool), bs)]
            rng.shuffle(batches)  # lengths in random order, not short to long
            for batch in batches:
                yield from batch


__all__ = ["ScheduledTask"]
