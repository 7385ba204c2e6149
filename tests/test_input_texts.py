"""The input bar's texts without widgets: the token echo's count, cut points and "… +N more",
unknown symbols, the over-limit warning, the fields' names and a checkpoint's description."""
from __future__ import annotations

import html
import json
import re
from types import SimpleNamespace

import pytest

from model.interpret.input_texts import field_texts, model_description, printable, token_echo
from model.io.checkpoints import random_bundle
from model.nn.kinds import DECODER_ONLY

PALETTE = SimpleNamespace(error="#ff0000", token_a="#aaaaaa", token_b="#bbbbbb", token_unknown="#cc0000")


@pytest.fixture(scope="module")
def bundle():
    return random_bundle("reverse")


def plain(rich: str) -> str:
    """What the rich line reads as (tags dropped, entities decoded)."""
    return html.unescape(re.sub(r"<[^>]+>", "", rich))


def test_printable_shows_spaces_and_control_characters_as_escapes():
    assert printable("a b\x00\u202e") == "a␣b\\x00U+202E"


def test_the_echo_may_end_after_any_whole_token_and_says_how_many_are_left(bundle):
    text = "attention"
    pieces = bundle.src_tokenizer.encode(text).pieces
    echo = token_echo(bundle, text, PALETTE)
    line = plain(echo.html)
    prefix = f"{len(pieces)} tokens: "
    assert line == prefix + "".join(printable(p) for p in pieces) and echo.least == prefix + "…"
    assert len(echo.stops) == len(pieces) + 1
    for k, stop in enumerate(echo.stops):  # the k-th stop: k whole tokens shown
        assert line[:stop] == prefix + "".join(printable(p) for p in pieces[:k])
        assert echo.more(stop) == (f" … +{len(pieces) - k} more" if k else "…")
    assert " ".join(pieces) in echo.tooltip  # every token, whole


def test_unknown_symbols_are_counted_marked_and_named(bundle):
    echo = token_echo(bundle, "abZ!c", PALETTE)
    line = plain(echo.html)
    assert line == "5 tokens: abZ!c · 2 unknown"  # the tokens first: the unknown ones are marked
    assert line[:echo.stops[0]] == "5 tokens: "  # the line may end after the count
    assert echo.more(echo.stops[2]) == " … · 2 unknown"  # a cut line still says how many are unknown
    assert echo.html.count(PALETTE.token_unknown) == 2 and "! Z" in echo.tooltip


def test_a_text_over_the_models_limit_says_so_first(bundle):
    limit = bundle.max_input_len
    echo = token_echo(bundle, "a" * (limit + 6), PALETTE)
    assert plain(echo.html).startswith(f"{limit + 6} tokens: over the limit of {limit}: ")
    assert PALETTE.error in echo.html and f"this model reads at most {limit}" in echo.tooltip


def test_the_fields_are_named_for_the_kind_of_model_and_for_chat(bundle):
    assert field_texts(bundle)[0] == "Source:" and field_texts(bundle)[2] == "Target:"
    assert field_texts(bundle, chat=True)[0] == "Message:" and field_texts(bundle, chat=True)[2] == "Answer:"


def test_a_checkpoint_is_described_by_its_task_and_kind(tmp_path):
    config = {"model": {"kind": "decoder_only"}, "task": {"description": "Reverse a string."}}
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    expected = f"rev — {DECODER_ONLY.objective}: reverse a string ({DECODER_ONLY.title})"
    assert model_description("rev", tmp_path) == expected
    assert model_description("gone", tmp_path / "missing") == "gone"  # no config: the name alone


def test_whole_word_tokens_are_echoed_apart_and_cut_after_a_whole_word():
    words = random_bundle("translation")
    text = " ".join(words.src_tokenizer.vocab[4:9])  # five words the model knows
    pieces = words.src_tokenizer.encode(text).pieces
    echo = token_echo(words, text, PALETTE)
    line = plain(echo.html)
    prefix = f"{len(pieces)} tokens: "
    assert line == prefix + " ".join(pieces)  # as the text reads, never "thefrog"
    for k, stop in enumerate(echo.stops):
        assert line[:stop] == prefix + " ".join(pieces[:k])
