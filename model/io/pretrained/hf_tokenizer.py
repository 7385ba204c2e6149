"""A pretrained model's own tokenizer behind the interface of `model.data.tokenizers.Tokenizer`.

Real models split text into sub-word pieces (BERT's WordPiece "un", "##believ", "##able";
Marian's SentencePiece "▁Hel", "lo") and have their own special ids ([CLS]=101, [SEP]=102;
</s>=0, <pad>=58100), so the wrapper carries them instead of our <pad>=0 <bos>=1 <eos>=2 <unk>=3:
the bundle and the decoders read `bos_id`/`eos_id` from the tokenizer.

`encode` returns what the model reads: the source with the model's markers
([CLS] … [SEP] for BERT, … </s> for Marian; `prefix`/`suffix`), a target without them (the
bundle adds the start symbol and </s> itself, as for our own tokenizers).
"""
from __future__ import annotations

import json
from pathlib import Path

from model.data.tokenizers import Encoded
from model.io.pretrained.files import PretrainedError


class PretrainedTokenizer:
    """What the explorer needs from a tokenizer, over a model's own vocabulary."""

    kind = "pretrained"

    def __init__(self, vocab: list[str], *, pad_id: int, bos_id: int, eos_id: int, unk_id: int,
                 special_ids, prefix: tuple[int, ...] = (), suffix: tuple[int, ...] = (),
                 source: dict | None = None):
        self.vocab = vocab
        self.pad_id, self.bos_id, self.eos_id, self.unk_id = pad_id, bos_id, eos_id, unk_id
        self.special_ids = frozenset(special_ids) | {pad_id, bos_id, eos_id, unk_id}
        self.prefix, self.suffix = tuple(prefix), tuple(suffix)
        self.source = dict(source or {})
        self._piece_ids: dict[str, int] | None = None  # piece → id, built by the first `join`

    def __len__(self) -> int:
        return len(self.vocab)

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self.to_dict() == other.to_dict()

    # -- subclasses: text ↔ (id, original text) and ids → text ------------------------------
    def split(self, text: str) -> list[tuple[int, str]]:
        """(id, the stretch of `text` it stands for) per piece, without the model's markers."""
        raise NotImplementedError

    def detokenize(self, ids: list[int]) -> str:
        raise NotImplementedError

    # -- the shared interface ------------------------------------------------------------------
    def encode(self, text: str) -> Encoded:
        """Text → ids the model reads; every <unk> is reported with the text it replaced."""
        parts = self.split(text)
        ids = list(self.prefix) + [i for i, _ in parts] + list(self.suffix)
        unknown = [(len(self.prefix) + k, original) for k, (i, original) in enumerate(parts) if i == self.unk_id]
        return Encoded(ids, self.pieces(ids), unknown)

    def decode(self, ids) -> str:
        """Ids → text: stops at the end symbol, drops the other specials, keeps <unk> visible."""
        kept = []
        for i in ids:
            i = int(i)
            if i == self.eos_id:
                break
            if i in self.special_ids and i != self.unk_id:
                continue
            kept.append(i)
        return self.detokenize(kept)

    def join(self, pieces: list[str]) -> str:
        """Pieces (as `pieces` gives them) → the text they stand for: each piece's id, detokenized
        (the inverse the input bar and the views use to show a stretch of tokens as text)."""
        if self._piece_ids is None:
            self._piece_ids = {piece: i for i, piece in reversed(list(enumerate(self.vocab)))}
        unknown = [p for p in pieces if p not in self._piece_ids]
        if unknown:
            raise ValueError(f"{unknown[0]!r} is not a piece of this tokenizer's vocabulary")
        return self.detokenize([self._piece_ids[p] for p in pieces])

    def pieces(self, ids) -> list[str]:
        """Every id as its vocabulary string (sub-word pieces, specials included): axis labels."""
        unk = self.vocab[self.unk_id]
        return [self.vocab[int(i)] if 0 <= int(i) < len(self.vocab) else unk for i in ids]

    def describe(self) -> str:
        """A short line for messages ("the model knows …")."""
        where = Path(self.source["folder"]) if self.source.get("folder") else None
        if where is not None and where.name == "model":  # a folder inside a pip package
            where = where.parent
        return f"{len(self.vocab):,} {self.kind} pieces" + (f" of {where.name}" if where else "")

    def to_dict(self) -> dict:
        """Where the tokenizer came from (its folder and role) and its special ids; the files
        themselves stay in the folder (`model.io.pretrained.tokenizer_from_dict` reloads them)."""
        return {"kind": "pretrained", "format": self.kind, **self.source,
                "ids": {"pad": self.pad_id, "bos": self.bos_id, "eos": self.eos_id, "unk": self.unk_id},
                "prefix": list(self.prefix), "suffix": list(self.suffix)}


class HFTokenizer(PretrainedTokenizer):
    """A `tokenizers.Tokenizer` (tokenizer.json: BERT's WordPiece, BPE, Unigram)."""

    def __init__(self, tok, kind: str, vocab: list[str] | None = None, **ids):
        # The file may pad every input to 128 and cut longer ones (MiniLM's does): the
        # explorer wants exactly the input's tokens, and says so when an input is too long.
        tok.no_padding()
        tok.no_truncation()
        self._tok = tok
        size = tok.get_vocab_size(with_added_tokens=True)
        if vocab is None or len(vocab) != size:  # `vocab`: the pieces by id, where the caller has them
            vocab = [f"<id {i}>" for i in range(size)]
            for piece, i in tok.get_vocab(with_added_tokens=True).items():  # (one long call holding the GIL)
                if 0 <= i < size:
                    vocab[i] = piece
        specials = [i for i, t in tok.get_added_tokens_decoder().items() if t.special]
        self.kind = kind
        super().__init__(vocab, special_ids=specials, **ids)

    def split(self, text: str) -> list[tuple[int, str]]:
        enc = self._tok.encode(text, add_special_tokens=False)
        return [(i, text[start:end]) for i, (start, end) in zip(enc.ids, enc.offsets)]

    def detokenize(self, ids: list[int]) -> str:
        return self._tok.decode(ids, skip_special_tokens=False)


def _tokenizers_library(path: Path):
    try:
        import tokenizers
    except ImportError:
        raise PretrainedError(f"{path}: reading it needs the `tokenizers` package "
                              "(pip install 'transformer-explorer[pretrained]')") from None
    return tokenizers


def read_tokenizer_json(path: Path):
    """(tokenizers.Tokenizer, its model type: "wordpiece", "bpe", "unigram", …) from tokenizer.json."""
    tokenizers = _tokenizers_library(path)
    try:
        tok = tokenizers.Tokenizer.from_file(str(path))
    except Exception as exc:  # the Rust side raises a plain Exception for a bad file
        raise PretrainedError(f"{path}: not a tokenizer.json the `tokenizers` library can read ({exc})") from None
    kind = str(json.loads(tok.to_str()).get("model", {}).get("type", "sub-word")).lower()
    return tok, kind


def read_wordpiece_vocab(path: Path, lowercase: bool):
    """A BERT folder with only vocab.txt: the `tokenizers` library's BERT WordPiece pipeline
    (the one transformers' BertTokenizerFast builds from the same file)."""
    tokenizers = _tokenizers_library(path)
    try:
        impl = tokenizers.implementations.BertWordPieceTokenizer(str(path), lowercase=lowercase)
    except Exception as exc:
        raise PretrainedError(f"{path}: not a WordPiece vocabulary ({exc})") from None
    return impl._tokenizer, "wordpiece"


def special_tokens(folder: Path, defaults: dict[str, str]) -> dict[str, str]:
    """Role → token string ("cls_token" → "[CLS]") from tokenizer_config.json and
    special_tokens_map.json where present (values may be strings or {"content": …})."""
    from model.io.pretrained.files import read_json
    found = dict(defaults)
    for name in ("tokenizer_config.json", "special_tokens_map.json"):
        path = folder / name
        if path.is_file():
            for role, value in read_json(path).items():
                if isinstance(value, dict):
                    value = value.get("content")
                if role in defaults and isinstance(value, str):
                    found[role] = value
    return found
