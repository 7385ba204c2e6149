"""A user's data — parallel text (UTF-8 TSV) or plain text for the language-model variants —
and batching of text pairs into padded id tensors."""
from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import torch

from model.data.tasks import Task, split_of
from model.data.tokenizers import BOS_ID, EOS_ID, MASK, PAD_ID, Tokenizer

MAX_TSV_LINE_CHARS = 1000


class DataError(ValueError):
    """A parallel-data file that cannot be used, with the file and line in the message."""


class PairsTask(Task):
    """A task over a fixed list of pairs (from a TSV file): train/eval split by the same stable hash."""

    def __init__(self, name: str, pairs: list[tuple[str, str]], tokenizer: str = "char", params: dict | None = None,
                 extra_symbols: list[str] | None = None):
        train = [p for p in pairs if split_of(p[0]) == "train"]
        evals = [p for p in pairs if split_of(p[0]) == "eval"]
        if not evals:  # tiny files: hold out the last pair so evaluation still means something
            evals, train = train[-1:], train[:-1] or train[-1:]
        self.split_pairs = {"train": train, "eval": evals}
        split = (lambda s: s.split()) if tokenizer == "word" else list
        super().__init__(
            name=name, description=f"Parallel data: {len(pairs)} pairs", draw=lambda rng: rng.choice(train),
            src_texts=[s for s, _ in pairs], tgt_texts=[t for _, t in pairs], tokenizer=tokenizer,
            extra_symbols=list(extra_symbols or []),
            examples=[s for s, _ in evals[:3]],
            max_src_len=max(len(split(s)) for s, _ in pairs), max_tgt_len=max(len(split(t)) for _, t in pairs),
            params=dict(params or {}),
        )

    def sample(self, rng: random.Random, split: str = "train") -> tuple[str, str]:
        return rng.choice(self.split_pairs[split])


def _numbered_lines(path: Path, max_line_chars: int) -> list[tuple[int, str]]:
    """(line number, line) for every non-blank line of a UTF-8 file; an unreadable file, bad
    UTF-8 or an overlong line is a DataError naming the file and line."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DataError(f"{path}: cannot read the file ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise DataError(f"{path}, line {line}: not valid UTF-8") from None
    out = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if len(line) > max_line_chars:
            raise DataError(f"{path}, line {n}: {len(line)} characters, longer than the limit of {max_line_chars}")
        out.append((n, line))
    return out


def read_tsv(path: str | Path, max_line_chars: int = MAX_TSV_LINE_CHARS) -> list[tuple[str, str]]:
    """Read `source<TAB>target` lines; blank lines are skipped, anything else malformed is an error."""
    path = Path(path)
    pairs = []
    for n, line in _numbered_lines(path, max_line_chars):
        parts = line.split("\t")
        if len(parts) != 2:
            raise DataError(f"{path}, line {n}: expected 'source<TAB>target' (one tab), found {len(parts) - 1} tabs")
        src, tgt = parts[0].strip(), parts[1].strip()
        if not src or not tgt:
            raise DataError(f"{path}, line {n}: empty {'source' if not src else 'target'}")
        pairs.append((src, tgt))
    if not pairs:
        raise DataError(f"{path}: the file has no source<TAB>target pairs")
    return pairs


def tsv_task(path: str | Path, tokenizer: str = "char") -> PairsTask:
    """A trainable task from a TSV file of parallel text."""
    if tokenizer not in ("char", "word"):
        raise DataError(f"tokenizer must be 'char' or 'word', got {tokenizer!r}")
    return PairsTask(Path(path).stem, read_tsv(path), tokenizer, {"path": str(path), "tokenizer": tokenizer})


def read_text(path: str | Path, max_line_chars: int = MAX_TSV_LINE_CHARS) -> list[str]:
    """Non-blank lines of a UTF-8 text file, one training sentence each."""
    path = Path(path)
    lines = []
    for n, line in _numbered_lines(path, max_line_chars):
        if MASK in line:
            raise DataError(f"{path}, line {n}: contains {MASK}, which is the masked LM's blank, not text")
        lines.append(line.strip())
    if len(lines) < 2:
        raise DataError(f"{path}: a text corpus needs at least 2 non-blank lines, found {len(lines)}")
    return lines


def text_task(path: str | Path, tokenizer: str = "word") -> PairsTask:
    """A corpus for the variants from a plain text file, one sentence per line: pairs are
    (line, line) like the built-in 'facts', and the vocabulary has [MASK] for a masked LM."""
    if tokenizer not in ("char", "word"):
        raise DataError(f"tokenizer must be 'char' or 'word', got {tokenizer!r}")
    lines = read_text(path)
    task = PairsTask(Path(path).stem, [(s, s) for s in lines], tokenizer,
                     {"text_path": str(path), "tokenizer": tokenizer}, extra_symbols=[MASK])
    task.description = f"Text: {len(lines)} lines"
    return task


@dataclass
class Batch:
    """Padded ids: src (B, S); tgt_in = <bos> y (B, T); tgt_out = y <eos> (B, T)."""

    src: torch.Tensor
    tgt_in: torch.Tensor
    tgt_out: torch.Tensor

    @property
    def n_tokens(self) -> int:
        return int((self.tgt_out != PAD_ID).sum())

    def to(self, device) -> Batch:
        return Batch(self.src.to(device, non_blocking=True), self.tgt_in.to(device, non_blocking=True),
                     self.tgt_out.to(device, non_blocking=True))


def _pad(rows: list[list[int]]) -> torch.Tensor:
    width = max(len(r) for r in rows)
    return torch.tensor([r + [PAD_ID] * (width - len(r)) for r in rows], dtype=torch.long)


def make_batch(pairs: list[tuple[str, str]], src_tok: Tokenizer, tgt_tok: Tokenizer) -> Batch:
    """Encode text pairs; the source gets no <bos>/<eos> (as the paper's encoder input), the target both."""
    src_rows, tin, tout = [], [], []
    for s, t in pairs:
        src_rows.append(src_tok.encode(s).ids)
        y = tgt_tok.encode(t).ids
        tin.append([BOS_ID] + y)
        tout.append(y + [EOS_ID])
    return Batch(_pad(src_rows), _pad(tin), _pad(tout))
