"""`Task`: a named source → target problem with its split and tokenizers — the type every
task is (model.data.tasks builds the toy ones, model.data.corpus the facts corpus), on its own so both
can build on it without importing each other."""
from __future__ import annotations

import random
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from model.data.tokenizers import CharTokenizer, Tokenizer, WordTokenizer

EVAL_FRACTION = 20  # one source in 20 is reserved for evaluation


class TaskError(ValueError):
    """An unknown task or bad task parameters."""


def split_of(source: str) -> str:
    """'eval' for a stable 1/EVAL_FRACTION of sources, 'train' for the rest."""
    return "eval" if zlib.crc32(source.encode("utf-8")) % EVAL_FRACTION == 0 else "train"


@dataclass
class Task:
    """A named task: how to draw a pair, which tokenizers to use, and example inputs."""

    name: str
    description: str
    draw: Callable[[random.Random], tuple[str, str]]
    src_texts: list[str]  # every symbol the source can use (builds the vocabulary)
    tgt_texts: list[str]
    tokenizer: str = "char"  # "char" | "word"
    examples: list[str] = field(default_factory=list)
    max_src_len: int = 32  # in tokens, without <bos>/<eos>
    max_tgt_len: int = 32
    params: dict = field(default_factory=dict)
    extra_symbols: list[str] = field(default_factory=list)  # whole vocabulary entries, e.g. [MASK]

    def sample(self, rng: random.Random, split: str = "train") -> tuple[str, str]:
        """One pair from the wanted split (rejection sampling on the stable hash)."""
        while True:
            src, tgt = self.draw(rng)
            if split_of(src) == split:
                return src, tgt

    def pairs(self, n: int, seed: int = 0, split: str = "train") -> list[tuple[str, str]]:
        rng = random.Random(f"{self.name}:{seed}:{split}")
        return [self.sample(rng, split) for _ in range(n)]

    def stream(self, seed: int = 0, split: str = "train") -> Iterator[tuple[str, str]]:
        rng = random.Random(f"{self.name}:{seed}:{split}")
        while True:
            yield self.sample(rng, split)

    def build_tokenizers(self) -> tuple[Tokenizer, Tokenizer]:
        cls = CharTokenizer if self.tokenizer == "char" else WordTokenizer
        src, tgt = cls.from_texts(self.src_texts), cls.from_texts(self.tgt_texts)
        if self.extra_symbols:  # kept whole (a character vocabulary would split them)
            src = cls(src.vocab + [s for s in self.extra_symbols if s not in src.index])
            tgt = cls(tgt.vocab + [s for s in self.extra_symbols if s not in tgt.index])
        return src, tgt

    def to_dict(self) -> dict:
        return {"name": self.name, "params": dict(self.params), "description": self.description,
                "examples": list(self.examples), "max_src_len": self.max_src_len, "max_tgt_len": self.max_tgt_len}


# -- string tasks -----------------------------------------------------------------------------
