"""A GGUF file's own tokenizer: byte-level BPE rebuilt from the tokens and merges in its metadata.

GGUF has no tokenizer.json: it stores the vocabulary (`tokenizer.ggml.tokens`), the merges,
each token's type (3 = control, such as <|im_start|>) and the name of the pre-tokenizer
(`tokenizer.ggml.pre`), i.e. how llama.cpp cuts text into words before the merges run. This
module builds the same pipeline with the `tokenizers` library: the pre-tokenizer's split, the
GPT-2 byte alphabet, the BPE merges, the control tokens kept whole.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from model.io.pretrained.byte_level import readable_vocab
from model.io.pretrained.files import PretrainedError
from model.io.pretrained.gguf_file import GGUFFile
from model.io.pretrained.hf_tokenizer import HFTokenizer

CONTROL, USER_DEFINED = 3, 4  # llama.cpp's token types

# tokenizer.ggml.pre → the split llama.cpp makes before the byte-level merges.
LLAMA3_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
                r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
               r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
GPT2_PRE = ("default", "gpt-2", "gpt2", "phi-2", "olmo", "jais", "poro-chat", "viking")
DIGITS_PRE = ("smollm", "starcoder", "refact")  # every digit alone, then GPT-2's split
SPLIT_PRE = {"llama3": LLAMA3_SPLIT, "llama-v3": LLAMA3_SPLIT, "llama-bpe": LLAMA3_SPLIT,
             "smaug-bpe": LLAMA3_SPLIT, "falcon3": LLAMA3_SPLIT, "dbrx": LLAMA3_SPLIT, "qwen2": QWEN2_SPLIT}
KNOWN_PRE = GPT2_PRE + DIGITS_PRE + tuple(SPLIT_PRE)


def _pre_tokenizer(tokenizers, pre: str):
    byte_level = tokenizers.pre_tokenizers.ByteLevel
    if pre in DIGITS_PRE:
        return tokenizers.pre_tokenizers.Sequence([
            tokenizers.pre_tokenizers.Digits(individual_digits=True),
            byte_level(add_prefix_space=False, use_regex=True)])
    if pre in SPLIT_PRE:
        return tokenizers.pre_tokenizers.Sequence([
            tokenizers.pre_tokenizers.Split(tokenizers.Regex(SPLIT_PRE[pre]), behavior="isolated"),
            byte_level(add_prefix_space=False, use_regex=False)])
    return byte_level(add_prefix_space=False, use_regex=True)


class GGUFTokenizer(HFTokenizer):
    """A GGUF model's byte-level BPE. `drop_leading`: an id that the model's input already starts
    with (the bundle puts its start symbol before every prompt), so a prompt typed with it —
    a chat template's first <|im_start|> — is not given it twice.

    `vocab` (what `pieces` and every label show) holds each piece as the text it stands for
    (" Paris", "⏎"; `model.io.pretrained.byte_level`); `byte_pieces` the file's own byte-level forms."""

    def __init__(self, tok, *, drop_leading: int | None = None, digest: str = "", vocab=None, **ids):
        super().__init__(tok, "byte-level BPE", vocab=vocab, **ids)
        self.drop_leading = drop_leading
        self.digest = digest  # of the file's tokens, types, merges and split: what decides the ids
        self.byte_pieces = self.vocab
        self.vocab = readable_vocab(self.byte_pieces, keep=self.special_ids)

    def split(self, text: str) -> list[tuple[int, str]]:
        parts = super().split(text)
        if parts and self.drop_leading is not None and parts[0][0] == self.drop_leading:
            parts = parts[1:]
        return parts

    def __eq__(self, other) -> bool:
        """The same tokenizer: the same pieces, merges and split, whichever file they were read from
        (two quantisations of one model share it, so their ids can be compared cell by cell)."""
        if type(self) is not type(other) or not self.digest or self.digest != other.digest:
            return super().__eq__(other)
        return {**self.to_dict(), "gguf": ""} == {**other.to_dict(), "gguf": ""}

    __hash__ = None

    def describe(self) -> str:
        where = Path(self.source["gguf"]).name if self.source.get("gguf") else ""
        return f"{len(self.vocab):,} byte-level BPE pieces" + (f" of {where}" if where else "")


def special_ids(file: GGUFFile) -> dict[str, int]:
    """pad / bos / eos / unk ids for the explorer.

    The explorer masks every key holding pad_id and never generates it, so pad must not be a
    token that real text holds: GGUF files often name the end-of-turn token as padding
    (SmolLM2: <|im_end|>), and then the unknown token (<|endoftext|>) serves instead.
    """
    size = len(file.require("tokenizer.ggml.tokens"))

    def known(key: str) -> int | None:
        value = file.meta(key)
        return int(value) if value is not None and 0 <= int(value) < size else None

    bos, eos = known("tokenizer.ggml.bos_token_id"), known("tokenizer.ggml.eos_token_id")
    if eos is None:
        raise PretrainedError(f"{file.path}: the tokenizer names no end-of-sequence token (tokenizer.ggml.eos_token_id)")
    bos = eos if bos is None else bos
    unk = known("tokenizer.ggml.unknown_token_id")
    pad = known("tokenizer.ggml.padding_token_id")
    if pad is None or pad in (bos, eos):
        pad = unk if unk is not None and unk not in (bos, eos) else 0
    return {"pad_id": pad, "bos_id": bos, "eos_id": eos, "unk_id": unk if unk is not None else pad}


def vocabulary_digest(tokens: list[str], merges: list[str], types: list[str], pre: str, chunk: int = 4096) -> str:
    """SHA-256 of what decides a GGUF tokenizer's ids, fed a chunk of pieces at a time: each piece
    as a JSON string literal (no separator can be mistaken for text), each chunk encoded in one
    C-level call, and no single call long enough to hold the interpreter while a window waits to paint."""
    digest = hashlib.sha256()
    for label, pieces in (("tokens", tokens), ("merges", merges), ("types", types), ("pre", [pre])):
        digest.update(f"{label}:{len(pieces)};".encode())
        for start in range(0, len(pieces), chunk):
            digest.update(json.dumps(pieces[start:start + chunk])[1:-1].encode("ascii") + b", ")
    return digest.hexdigest()


BUILT_KEPT = 2  # files whose built tokenizer is kept for the next load of the same file
_built: dict[tuple[str, int, int], tuple[GGUFTokenizer, list[str]]] = {}


def gguf_tokenizer(file: GGUFFile) -> tuple[GGUFTokenizer, list[str]]:
    """The file's tokenizer, and notes on what it could not reproduce exactly. Built once per
    file (its path, size and modification time): the BPE build is one long call that holds the
    interpreter, so loading the same model again reuses the tokenizer (it keeps no state)."""
    stat = file.path.stat()
    key = (str(file.path.resolve()), stat.st_size, stat.st_mtime_ns)
    if key not in _built:
        while len(_built) >= BUILT_KEPT:
            del _built[next(iter(_built))]
        _built[key] = build_gguf_tokenizer(file)
    tokenizer, notes = _built[key]
    return tokenizer, list(notes)


def build_gguf_tokenizer(file: GGUFFile) -> tuple[GGUFTokenizer, list[str]]:
    """`gguf_tokenizer`, built anew from the file's metadata."""
    model = file.meta("tokenizer.ggml.model")
    if model != "gpt2":
        raise PretrainedError(f"{file.path}: tokenizer model {model!r} is not supported; this explorer reads "
                              "byte-level BPE ('gpt2') tokenizers from GGUF files")
    try:
        import tokenizers
    except ImportError:
        raise PretrainedError(f"{file.path}: reading its tokenizer needs the `tokenizers` package "
                              "(pip install 'transformer-explorer[llm]')") from None
    tokens = [str(t) for t in file.require("tokenizer.ggml.tokens")]
    merge_lines = [str(m) for m in file.require("tokenizer.ggml.merges")]
    merges = [tuple(m.split(" ", 1)) for m in merge_lines]
    types = list(file.meta("tokenizer.ggml.token_type") or [])
    notes = []
    pre = str(file.meta("tokenizer.ggml.pre", "default"))
    if pre not in KNOWN_PRE:
        notes.append(f"pre-tokenizer {pre!r} is not one this explorer knows; text is split as GPT-2 splits it")
    try:
        tok = tokenizers.Tokenizer(tokenizers.models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=merges))
    except Exception as exc:  # the Rust side raises a plain Exception for inconsistent merges
        raise PretrainedError(f"{file.path}: its vocabulary and merges do not form a BPE tokenizer ({exc})") from None
    tok.pre_tokenizer = _pre_tokenizer(tokenizers, pre)
    tok.decoder = tokenizers.decoders.ByteLevel()
    kept = tokenizers.AddedToken
    tok.add_special_tokens([kept(t, special=True, normalized=False) for t, k in zip(tokens, types) if k == CONTROL])
    tok.add_tokens([kept(t, special=False, normalized=False) for t, k in zip(tokens, types) if k == USER_DEFINED])
    ids = special_ids(file)
    add_bos = bool(file.meta("tokenizer.ggml.add_bos_token", False))
    digest = vocabulary_digest(tokens, merge_lines, [str(t) for t in types], pre)
    unique = len(set(tokens)) == len(tokens)  # then the file's list is the vocabulary, id by id
    wrapped = GGUFTokenizer(tok, drop_leading=ids["bos_id"], source={"gguf": str(file.path)}, digest=digest,
                            vocab=tokens if unique else None, **ids)
    if not add_bos:
        notes.append(f"every input starts with {tokens[ids['bos_id']]!r} (the explorer's start symbol), "
                     "which llama.cpp would not add to plain text")
    return wrapped, notes


__all__ = ["GGUFTokenizer", "build_gguf_tokenizer", "gguf_tokenizer", "special_ids", "vocabulary_digest"]
