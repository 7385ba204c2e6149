"""Byte-level BPE pieces as the text they stand for: "ĠParis" → " Paris", "Ċ" → "⏎".

GPT-2-style tokenizers (SmolLM2's, Llama 3's) store each piece as its UTF-8 bytes, every byte
spelled with one printable character of GPT-2's byte↔unicode table (space is "Ġ", newline
"Ċ"). Shown raw, every axis label would carry those stand-ins; decoded, a piece reads as the
text it is. Spaces stay spaces (the app's labels show them as ␣, as for every other
tokenizer), line breaks and tabs become ⏎ and ⇥, and a piece that holds only part of a
character's bytes is written as its bytes, <0xE2>, as llama.cpp writes byte tokens.
"""
from __future__ import annotations

from functools import lru_cache

SHOWN = {"\n": "⏎", "\t": "⇥", "\r": "␍"}


@lru_cache(maxsize=1)
def byte_decoder() -> dict[str, int]:
    """GPT-2's table (`bytes_to_unicode`) inverted: the character that spells a byte → the byte.
    Printable Latin-1 bytes spell themselves; the others take the code points from 256 on."""
    kept = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    chars, extra = list(kept), 0
    for b in range(256):
        if b not in kept:
            kept.append(b)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(kept, chars)}


NOT_BYTE_LEVEL = "\ufffe"  # what `spelled_bytes` turns a character outside GPT-2's table into


@lru_cache(maxsize=1)
def spelled_bytes() -> dict[int, str]:
    """A `str.translate` table: each character of GPT-2's table → the Latin-1 character of its
    byte, every other character up to U+00FF → NOT_BYTE_LEVEL (characters above stay above U+00FF).
    One C-level pass per piece, instead of a Python loop over its characters."""
    table = {ord(c): chr(b) for c, b in byte_decoder().items()}
    return {**{c: NOT_BYTE_LEVEL for c in range(256) if c not in table}, **table}


SHOWN_TABLE = str.maketrans(SHOWN)


def readable_piece(piece: str) -> str:
    """One byte-level piece as text; a piece that is not byte-level (a control token such as
    <|im_start|>, whose characters are outside the table) is returned as it is."""
    latin = piece.translate(spelled_bytes())
    if not latin or max(latin) > "\xff":
        return piece
    data = latin.encode("latin-1")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return _partial(data)
    return text if text.isprintable() else text.translate(SHOWN_TABLE)


def _partial(data: bytes) -> str:
    """Bytes that begin or end inside a character: the whole characters as text, the rest as <0x..>."""
    text = data.decode("utf-8", errors="backslashreplace")
    out, i = [], 0
    while i < len(text):
        if text.startswith("\\x", i) and i + 4 <= len(text):
            out.append(f"<0x{text[i + 2:i + 4].upper()}>")
            i += 4
        else:
            out.append(SHOWN.get(text[i], text[i]))
            i += 1
    return "".join(out)


def readable_vocab(vocab: list[str], keep: set[int] | frozenset[int] = frozenset()) -> list[str]:
    """Every piece readable (`readable_piece`), the ids in `keep` (control tokens) as they are.
    A readable form that an earlier id already took keeps its raw piece, so the strings stay
    unique and a list of them still names exactly one id each."""
    seen: set[str] = set()
    out = []
    for i, piece in enumerate(vocab):
        shown = piece if i in keep else readable_piece(piece)
        if shown in seen:
            shown = piece
        seen.add(shown)
        out.append(shown)
    return out


__all__ = ["byte_decoder", "readable_piece", "readable_vocab", "spelled_bytes"]
