"""The paper's batches (Section 5.1): "Sentence pairs were batched together by approximate sequence
length. Each training batch contained a set of sentence pairs containing approximately 25000
source tokens and 25000 target tokens" — read from a TSV too large to hold in memory.

The corpus is dealt into `n_slots` = processes × accumulation steps strided *slots*, as
torch's DistributedSampler deals indices: pair k belongs to slot k % n_slots. Each slot is read
in buffers of `buffer_pairs` pairs, sorted by length, cut into micro-batches whose *padded*
source and target sizes both stay within `budget` tokens, and shuffled. An optimiser step takes
one micro-batch from every slot, so one process accumulating over 2 slots sees exactly the data
of 2 processes with one slot each. A slot's position (epoch, byte offset and line of its buffer,
micro-batches used) is four integers: resuming reads one buffer again, not the file.
"""
from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from model.data.bpe import encode_ids
from model.data.tokenizers import BOS_ID, EOS_ID, Tokenizer
from model.data.user_data import MAX_TSV_LINE_CHARS, Batch, DataError, _pad


@dataclass
class SlotPosition:
    """Where a slot's stream stands: its current buffer starts at byte `offset` (line `line`) of
    pass `epoch` over the data, and `used` of that buffer's micro-batches were consumed."""

    epoch: int = 0
    offset: int = 0
    line: int = 0
    used: int = 0

    def as_list(self) -> list[int]:
        return [self.epoch, self.offset, self.line, self.used]


def tsv_lines(path: str | Path, offset: int = 0, line: int = 0,
              max_line_chars: int | None = MAX_TSV_LINE_CHARS) -> Iterator[tuple[int, int, tuple[str, str] | None]]:
    """(byte offset after the line, line index, (source, target) or None for a blank line) from
    `offset` on, one line at a time: memory stays flat whatever the file's size. A corpus such as
    WMT has a few very long lines: `max_line_chars=None` reads them (batching then drops pairs
    longer than the model's max_len and counts them)."""
    path = Path(path)
    try:
        f = open(path, "rb")  # noqa: SIM115 - the `with f` below closes it; opened apart so only open()'s OSError is a DataError
    except OSError as exc:
        raise DataError(f"{path}: cannot read the file ({exc.strerror or exc})") from None
    with f:
        f.seek(offset)
        for raw in f:
            offset += len(raw)
            n, line = line, line + 1
            try:
                text = raw.decode("utf-8").lstrip("\ufeff").rstrip("\r\n")
            except UnicodeDecodeError:
                raise DataError(f"{path}, line {n + 1}: not valid UTF-8") from None
            if not text.strip():
                yield offset, n, None
                continue
            if max_line_chars is not None and len(text) > max_line_chars:
                raise DataError(f"{path}, line {n + 1}: {len(text)} characters, longer than the limit of "
                                f"{max_line_chars}")
            parts = text.split("\t")
            if len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
                raise DataError(f"{path}, line {n + 1}: expected 'source<TAB>target' (one tab, both non-empty)")
            yield offset, n, (parts[0].strip(), parts[1].strip())


def token_batches(rows: list[tuple[list[int], list[int]]], budget: int) -> list[list[int]]:
    """Indices of `rows` (source ids, target ids) grouped by length so that each group's padded
    source (rows × longest source) and padded target (rows × (longest target + 1), for <bos>/<eos>)
    stay within `budget`. A row too long for the budget on its own is left out."""
    order = sorted(range(len(rows)), key=lambda i: (len(rows[i][0]), len(rows[i][1])))
    groups, current, width_s, width_t = [], [], 0, 0
    for i in order:
        s, t = len(rows[i][0]), len(rows[i][1]) + 1
        if s > budget or t > budget:
            continue
        ws, wt = max(width_s, s), max(width_t, t)
        if current and (ws * (len(current) + 1) > budget or wt * (len(current) + 1) > budget):
            groups.append(current)
            current, ws, wt = [], s, t
        current.append(i)
        width_s, width_t = ws, wt
    if current:
        groups.append(current)
    return groups


def make_id_batch(rows: list[tuple[list[int], list[int]]]) -> Batch:
    """Already-encoded pairs → a padded Batch (the source without <bos>/<eos>, as model.data.user_data)."""
    return Batch(_pad([s for s, _ in rows]), _pad([[BOS_ID] + t for _, t in rows]), _pad([t + [EOS_ID] for _, t in rows]))


class SlotStream:
    """The micro-batches of one slot, forever (pass after pass over the TSV), resumable."""

    def __init__(self, path: str | Path, src_tok: Tokenizer, tgt_tok: Tokenizer, budget: int, slot: int,
                 n_slots: int, max_len: int, buffer_pairs: int = 20000, seed: int = 0,
                 position: SlotPosition | None = None):
        if budget < 2:
            raise DataError(f"the token budget per micro-batch must be at least 2, got {budget}")
        self.path, self.src_tok, self.tgt_tok = path, src_tok, tgt_tok
        self.budget, self.slot, self.n_slots, self.max_len = budget, slot, n_slots, max_len
        self.buffer_pairs, self.seed = buffer_pairs, seed
        self.position = position or SlotPosition()
        self.dropped = 0  # pairs longer than max_len or the budget
        self.produced = 0  # micro-batches handed out
        self._batches = self._generate()

    def __iter__(self) -> SlotStream:
        return self

    def __next__(self) -> Batch:
        return next(self._batches)

    def _generate(self) -> Iterator[Batch]:
        pos = self.position
        epoch, start, line, skip = pos.epoch, pos.offset, pos.line, pos.used
        while True:
            buffer, produced_before = [], self.produced
            for offset, n, pair in self.lines(start, line):
                if pair is not None and n % self.n_slots == self.slot:
                    buffer.append(pair)
                if len(buffer) >= self.buffer_pairs:
                    yield from self._emit(buffer, epoch, start, line, skip)
                    buffer, skip, start, line = [], 0, offset, n + 1
            if buffer:
                yield from self._emit(buffer, epoch, start, line, skip)
            if self.produced == produced_before and epoch > pos.epoch:  # a whole pass gave nothing
                raise DataError(f"{self.path}: no source<TAB>target pair of slot {self.slot} fits in {self.max_len} "
                                f"tokens and the budget of {self.budget}")
            epoch, start, line, skip = epoch + 1, 0, 0, 0

    def lines(self, offset: int, line: int):
        return tsv_lines(self.path, offset, line, max_line_chars=None)

    def _emit(self, pairs, epoch: int, start: int, line: int, skip: int) -> Iterator[Batch]:
        src_ids = encode_ids(self.src_tok, [s for s, _ in pairs])
        tgt_ids = encode_ids(self.tgt_tok, [t for _, t in pairs])
        rows = [(s, t) for s, t in zip(src_ids, tgt_ids) if len(s) <= self.max_len and len(t) + 1 <= self.max_len]
        self.dropped += len(pairs) - len(rows)
        groups = token_batches(rows, self.budget)
        random.Random(f"{self.seed}:{self.slot}:{epoch}:{start}").shuffle(groups)
        for k in range(skip, len(groups)):
            self.position = SlotPosition(epoch, start, line, k + 1)
            self.produced += 1
            yield make_id_batch([rows[i] for i in groups[k]])


__all__ = ["SlotPosition", "SlotStream", "tsv_lines", "token_batches", "make_id_batch"]
