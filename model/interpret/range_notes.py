"""Plain-words notes for an input outside what the model was trained on.

A model answers any input it can tokenize, and past its training range the answer is often
wrong with nothing to say so: reverse trained on 1–24 letters reverses 32 letters badly, an
addition model trained on 0–999 has never seen a four-digit number. `range_notes` reads the
task a bundle names (its checkpoint's "task": name, params, max_src_len) and says, in words a
header can show, where an input leaves that range: its length, symbols outside the alphabet,
numbers or years outside the trained span. Empty when the input is inside (or the bundle names
no task: a pretrained model).
"""
from __future__ import annotations

import re

from model.data.tokenizers import WordTokenizer

STRING_TASKS = ("copy", "reverse", "sort")
DATE_YEARS = (1900, 2099)  # model.data.tasks.DATE_MIN / DATE_MAX


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _unknown_note(unknown: list[tuple[int, str]], alphabet: str, word_level: bool = False) -> list[str]:
    """How many, then which (a cut line keeps the count), then what the model knows."""
    symbols = sorted({piece for _, piece in unknown})
    if not symbols:
        return []
    shown = ", ".join(repr(s) for s in symbols[:6]) + (" …" if len(symbols) > 6 else "")
    what = _plural(len(symbols), "word" if word_level else "symbol")
    return [f"{what} this model was not trained on, read as unknown: {shown} (it knows {alphabet})"]


def _string_notes(source: str, params: dict) -> list[str]:
    low, high = params.get("min_len", 1), params.get("max_len")
    n = len(source.strip())
    if high is not None and not low <= n <= high:
        return [f"{_plural(n, 'letter')}: this model was trained on {low}–{high}"]
    return []


def _addition_notes(source: str, params: dict) -> list[str]:
    top = int(params.get("max_value", 999))
    text = source.strip()
    if not re.fullmatch(r"\d+\+\d+", text):
        return [f"not a sum of two numbers like 123+45: this model was trained on sums of numbers from 0 to {top}"]
    notes = []
    for number in text.split("+"):
        if int(number) > top or (len(number) > 1 and number.startswith("0")):
            notes.append(f"{number} ({_plural(len(number), 'digit')}): this model was trained on numbers "
                         f"from 0 to {top}, written without leading zeros")
    return notes


def _dates_notes(source: str) -> list[str]:
    first, last = DATE_YEARS
    return [f"year {y}: this model was trained on dates from {first} to {last}"
            for y in (int(m) for m in re.findall(r"(?<!\d)\d{4}(?!\d)", source)) if not first <= y <= last]


def _length_note(n_tokens: int, max_len: int | None, word_level: bool) -> list[str]:
    if max_len is None or n_tokens <= max_len:
        return []
    unit = "word" if word_level else "symbol"
    return [f"{_plural(n_tokens, unit)}: this model was trained on inputs of at most {max_len}"]


def range_notes(task: dict | None, source: str, n_tokens: int, unknown: list[tuple[int, str]] | None = None,
                alphabet: str = "", word_level: bool = False) -> list[str]:
    """Notes for `source` (tokenized to `n_tokens` tokens, `unknown` the (position, piece) of
    symbols outside the vocabulary) against `task`, a bundle's task description."""
    if not task or task.get("pretrained"):
        return []
    name, params = task.get("name", ""), dict(task.get("params") or {})
    notes = _unknown_note(unknown or [], alphabet, word_level) if alphabet else []
    if name in STRING_TASKS:
        return notes + _string_notes(source, params)
    if name == "addition":
        return notes + _addition_notes(source, params)
    if name == "dates":
        notes += _dates_notes(source)
    return notes + _length_note(n_tokens, task.get("max_src_len"), word_level)


def bundle_notes(bundle, source: str, encoded) -> list[str]:
    """`range_notes` for a bundle and its encoding of `source` (ids, Encoded)."""
    _, enc = encoded
    markers = getattr(bundle.src_tokenizer, "special_ids", frozenset()) - {bundle.src_tokenizer.unk_id}
    n_tokens = sum(1 for i in enc.ids if i not in markers)
    word_level = isinstance(bundle.src_tokenizer, WordTokenizer)
    return range_notes(bundle.task, source, n_tokens, list(enc.unknown), bundle.describe_alphabet(), word_level)


__all__ = ["range_notes", "bundle_notes"]
