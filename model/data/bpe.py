"""A shared byte-pair vocabulary learned from the user's corpus (Section 5.1: "byte-pair encoding
… a shared source-target vocabulary of about 37000 tokens"), trained with the `tokenizers` library.

The vocabulary starts with our four specials (<pad> <bos> <eos> <unk> = 0..3), so the Trainer,
the decoders and the checkpoint treat it like the char/word tokenizers. Words are split
SentencePiece-style: a piece that starts a word carries "▁" ("▁Hel", "lo"), which is what the
app's axes show. The whole tokenizer (vocabulary and merges) is stored as the library's own JSON
inside the checkpoint's config.json — text, never pickle.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from model.data.tokenizers import SPECIALS, UNK, UNK_ID, Encoded, Tokenizer, TokenizerError

WORD_START = "▁"  # U+2581, SentencePiece's and Marian's word-start mark


def _library():
    try:
        import tokenizers
    except ImportError:
        raise TokenizerError("a BPE vocabulary needs the `tokenizers` package (pip install tokenizers)") from None
    return tokenizers


class BPETokenizer(Tokenizer):
    """Sub-word pieces from a trained `tokenizers.Tokenizer` (a BPE model with a Metaspace
    pre-tokenizer); `encode` reports every <unk> with the text it replaced."""

    kind = "bpe"

    def __init__(self, tok):
        self._tok = tok
        size = tok.get_vocab_size(with_added_tokens=True)
        vocab = [""] * size
        for piece, i in tok.get_vocab(with_added_tokens=True).items():
            vocab[i] = piece
        super().__init__(vocab)  # checks the specials come first

    @classmethod
    def train(cls, texts: Iterable[str], vocab_size: int = 37000, min_frequency: int = 2,
              progress: bool = False) -> BPETokenizer:
        """Learn merges from `texts` (an iterator is fine: nothing is held but the counts);
        `progress`: the library's progress bars on stderr (minutes on WMT)."""
        lib = _library()
        if vocab_size <= len(SPECIALS):
            raise TokenizerError(f"--vocab-size must exceed the {len(SPECIALS)} special tokens, got {vocab_size}")
        tok = lib.Tokenizer(lib.models.BPE(unk_token=UNK))
        tok.normalizer = lib.normalizers.NFC()
        tok.pre_tokenizer = lib.pre_tokenizers.Metaspace(replacement=WORD_START, prepend_scheme="always")
        tok.decoder = lib.decoders.Metaspace(replacement=WORD_START, prepend_scheme="always")
        trainer = lib.trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                          special_tokens=list(SPECIALS), show_progress=progress)
        _interruptibly(lambda: tok.train_from_iterator(texts, trainer=trainer))
        return cls(tok)

    @classmethod
    def from_json(cls, text: str) -> BPETokenizer:
        try:
            tok = _library().Tokenizer.from_str(text)
        except Exception as exc:  # the Rust side raises a plain Exception
            raise TokenizerError(f"not a tokenizer the `tokenizers` library can read ({exc})") from None
        return cls(tok)

    def to_json(self) -> str:
        return self._tok.to_str()

    def to_dict(self) -> dict:
        return {"kind": self.kind, "tokenizer_json": json.loads(self.to_json())}

    @classmethod
    def from_dict(cls, data: dict) -> BPETokenizer:
        inner = data.get("tokenizer_json")
        if not isinstance(inner, dict):
            raise TokenizerError("a BPE tokenizer needs its 'tokenizer_json' object")
        return cls.from_json(json.dumps(inner))

    # -- the Tokenizer interface ---------------------------------------------------------------
    def encode(self, text: str) -> Encoded:
        enc = self._tok.encode(text, add_special_tokens=False)
        ids = list(enc.ids)
        unknown = [(k, text[s:e]) for k, (i, (s, e)) in enumerate(zip(ids, enc.offsets)) if i == UNK_ID]
        return Encoded(ids, self.pieces(ids), unknown)

    def encode_ids(self, texts: list[str]) -> list[list[int]]:
        """Many texts at once (the library encodes them in parallel): what batching needs."""
        return [list(e.ids) for e in self._tok.encode_batch(texts, add_special_tokens=False)]

    def split(self, text: str) -> list[str]:
        return self.encode(text).pieces

    def join(self, pieces: list[str]) -> str:
        return "".join(pieces).replace(WORD_START, " ").strip()

    def describe(self) -> str:
        return f"{len(self):,} BPE pieces"


def corpus_texts(pairs: Iterator[tuple[str, str]]) -> Iterator[str]:
    """Both sides of every pair, for a shared vocabulary."""
    for src, tgt in pairs:
        yield src
        yield tgt


def encode_ids(tok: Tokenizer, texts: list[str]) -> list[list[int]]:
    """Ids for many texts with any of our tokenizers (BPE in one parallel call)."""
    if isinstance(tok, BPETokenizer):
        return tok.encode_ids(texts)
    return [tok.encode(t).ids for t in texts]


__all__ = ["BPETokenizer", "WORD_START", "corpus_texts", "encode_ids"]


def _interruptibly(work) -> None:
    """Run `work` (the library's merges: minutes of native code on WMT, deaf to Ctrl-C) on a
    daemon thread while this one waits in short steps, so Ctrl-C stops the command at once (the
    thread ends with the process); an error of `work` is raised here."""
    import threading

    failure: list[BaseException] = []

    def run():
        try:
            work()
        except BaseException as exc:  # handed to the waiting thread
            failure.append(exc)

    thread = threading.Thread(target=run, name="bpe-training", daemon=True)
    thread.start()
    while thread.is_alive():
        thread.join(0.1)
    if failure:
        raise failure[0]
