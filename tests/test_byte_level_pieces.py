"""Byte-level BPE pieces read as text: checked against the `tokenizers` library's own ByteLevel
pre-tokenizer (text → pieces) and decoder (pieces → text)."""
import re

import pytest

tokenizers = pytest.importorskip("tokenizers")

from model.io.pretrained.byte_level import SHOWN, readable_piece, readable_vocab  # noqa: E402

SPELL = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
DECODE = tokenizers.decoders.ByteLevel()
TEXTS = [" Paris", "hello", "\n\n", "\tx", "naïve", "日本語", "🙂 ok", "a\r\nb", "ſ", " "]


def spelled(text: str) -> str:
    (piece, _), = SPELL.pre_tokenize_str(text)
    return piece


@pytest.mark.parametrize("text", TEXTS)
def test_a_piece_reads_as_the_text_the_library_decodes(text):
    piece = spelled(text)
    decoded = DECODE.decode([piece])
    assert decoded == text
    assert readable_piece(piece) == "".join(SHOWN.get(c, c) for c in decoded)


def test_every_single_byte_piece_matches_the_decoder():
    for piece in tokenizers.pre_tokenizers.ByteLevel.alphabet():  # the 256 stand-in characters
        decoded = DECODE.decode([piece])
        if decoded == "\ufffd":  # a byte from 0x80 on: part of a character, shown as its byte
            assert re.fullmatch(r"<0x[89A-F][0-9A-F]>", readable_piece(piece))
        else:
            assert readable_piece(piece) == SHOWN.get(decoded, decoded)


def test_a_piece_cut_inside_a_character_shows_its_bytes():
    whole = spelled("é")  # two bytes, C3 A9
    assert readable_piece(whole[0]) == "<0xC3>"
    assert readable_piece(whole[1]) == "<0xA9>"
    assert readable_piece(spelled("a") + whole[0]) == "a<0xC3>"


@pytest.mark.parametrize("piece", ["<|im_start|>", "a b", "日本", ""])
def test_a_piece_outside_the_table_is_kept_as_it_is(piece):
    assert readable_piece(piece) == piece  # a space, a CJK character: not GPT-2 byte stand-ins


def test_the_readable_vocabulary_stays_one_string_per_id():
    vocab = [" x", spelled(" x"), spelled("\n"), "<|im_start|>"]
    shown = readable_vocab(vocab, keep={0, 3})
    assert shown == [" x", spelled(" x"), "⏎", "<|im_start|>"]  # id 1's text is id 0's: it keeps its piece
