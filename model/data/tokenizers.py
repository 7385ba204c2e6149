"""Character- and word-level tokenizers with <pad> <bos> <eos> <unk>.

Encoding never drops anything silently: unknown characters/words become <unk> *and* are
reported with their positions, so the GUI can highlight them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

PAD, BOS, EOS, UNK = "<pad>", "<bos>", "<eos>", "<unk>"
SPECIALS = (PAD, BOS, EOS, UNK)
PAD_ID, BOS_ID, EOS_ID, UNK_ID = 0, 1, 2, 3
MASK = "[MASK]"  # a masked LM's blank: one token even in a character vocabulary


class TokenizerError(ValueError):
    """A tokenizer description (e.g. from a checkpoint's config.json) that cannot be used."""


@dataclass
class Encoded:
    """The result of encoding one text.

    ids: token ids without <bos>/<eos>; pieces: the token strings (for axis labels);
    unknown: (index into `pieces`, the unknown character or word) for every <unk>.
    """

    ids: list[int]
    pieces: list[str]
    unknown: list[tuple[int, str]] = field(default_factory=list)

    @property
    def has_unknown(self) -> bool:
        return bool(self.unknown)


class Tokenizer:
    """A fixed vocabulary whose first four entries are the specials."""

    kind = "base"

    def __init__(self, vocab: list[str]):
        vocab = list(vocab)
        if tuple(vocab[:4]) != SPECIALS:
            raise TokenizerError(f"vocabulary must start with {SPECIALS}, got {vocab[:4]}")
        if len(set(vocab)) != len(vocab):
            dup = sorted({v for v in vocab if vocab.count(v) > 1})
            raise TokenizerError(f"vocabulary has duplicate entries: {dup[:5]}")
        self.vocab = vocab
        self.index = {tok: i for i, tok in enumerate(vocab)}

    def __len__(self) -> int:
        return len(self.vocab)

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self.vocab == other.vocab

    pad_id, bos_id, eos_id, unk_id = PAD_ID, BOS_ID, EOS_ID, UNK_ID

    def split(self, text: str) -> list[str]:
        raise NotImplementedError

    def join(self, pieces: list[str]) -> str:
        raise NotImplementedError

    def encode(self, text: str) -> Encoded:
        pieces = self.split(text)
        ids, unknown = [], []
        for i, piece in enumerate(pieces):
            idx = self.index.get(piece)
            if idx is None or idx < len(SPECIALS):  # a literal "<eos>" typed by a user is text, not a control token
                unknown.append((i, piece))
                idx = UNK_ID
            ids.append(idx)
        return Encoded(ids, pieces, unknown)

    def decode(self, ids) -> str:
        """Ids → text: skips <pad>/<bos>, stops at <eos>, shows <unk> as itself."""
        out = []
        for i in ids:
            i = int(i)
            if i == EOS_ID:
                break
            if i in (PAD_ID, BOS_ID):
                continue
            out.append(self.vocab[i] if 0 <= i < len(self.vocab) else UNK)
        return self.join(out)

    def pieces(self, ids) -> list[str]:
        """Every id as its vocabulary string (specials included): labels for attention axes."""
        return [self.vocab[int(i)] if 0 <= int(i) < len(self.vocab) else UNK for i in ids]

    def to_dict(self) -> dict:
        return {"kind": self.kind, "vocab": self.vocab}


class CharTokenizer(Tokenizer):
    """One token per Unicode character (code point)."""

    kind = "char"

    @classmethod
    def from_texts(cls, texts) -> CharTokenizer:
        chars = sorted({c for t in texts for c in t})
        return cls(list(SPECIALS) + chars)

    def split(self, text: str) -> list[str]:
        """One piece per character; a vocabulary with [MASK] (a masked LM's) reads "[MASK]" as one."""
        if MASK not in self.index:
            return list(text)
        return [p for part in re.split(r"(\[MASK\])", text) for p in ([part] if part == MASK else list(part))]

    def join(self, pieces: list[str]) -> str:
        return "".join(pieces)


class WordTokenizer(Tokenizer):
    """One token per whitespace-separated word."""

    kind = "word"

    @classmethod
    def from_texts(cls, texts) -> WordTokenizer:
        words = sorted({w for t in texts for w in t.split()} - set(SPECIALS))  # a literal "<eos>" word is text
        return cls(list(SPECIALS) + words)

    def split(self, text: str) -> list[str]:
        return text.split()

    def join(self, pieces: list[str]) -> str:
        return " ".join(pieces)


TOKENIZERS = {"char": CharTokenizer, "word": WordTokenizer}


def tokenizer_from_dict(data: dict) -> Tokenizer:
    """Rebuild a tokenizer saved with `to_dict` (checkpoints); clear errors on bad input."""
    if not isinstance(data, dict):
        raise TokenizerError(f"tokenizer must be a JSON object, got {type(data).__name__}")
    kind = data.get("kind")
    if kind not in TOKENIZERS:
        raise TokenizerError(f"unknown tokenizer kind {kind!r}; expected one of {sorted(TOKENIZERS)}")
    vocab = data.get("vocab")
    if not isinstance(vocab, list) or not all(isinstance(v, str) for v in vocab):
        raise TokenizerError("tokenizer vocab must be a list of strings")
    return TOKENIZERS[kind](vocab)
