"""Tokenizers: specials first, unknown symbols reported (never dropped), exact round trips."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model.data.tokenizers import (
    BOS_ID,
    EOS_ID,
    PAD_ID,
    SPECIALS,
    UNK_ID,
    CharTokenizer,
    TokenizerError,
    WordTokenizer,
    tokenizer_from_dict,
)


def test_specials_have_fixed_ids():
    tok = CharTokenizer.from_texts(["abc"])
    assert tok.vocab[:4] == ["<pad>", "<bos>", "<eos>", "<unk>"]
    assert (PAD_ID, BOS_ID, EOS_ID, UNK_ID) == (0, 1, 2, 3)
    assert [tok.index[s] for s in SPECIALS] == [0, 1, 2, 3]


def test_char_unknowns_reported_with_positions():
    tok = CharTokenizer.from_texts(["abc"])
    enc = tok.encode("ab?c!")
    assert enc.ids == [tok.index["a"], tok.index["b"], UNK_ID, tok.index["c"], UNK_ID]
    assert enc.unknown == [(2, "?"), (4, "!")]
    assert enc.pieces == list("ab?c!")  # nothing dropped: one piece per input character
    assert enc.has_unknown


def test_word_unknowns_reported_with_positions():
    tok = WordTokenizer.from_texts(["the dog sees a cat"])
    enc = tok.encode("the zebra sees a unicorn")
    assert len(enc.ids) == 5
    assert enc.unknown == [(1, "zebra"), (4, "unicorn")]
    assert tok.decode(enc.ids) == "the <unk> sees a <unk>"


def test_typed_special_is_text_not_control():
    tok = WordTokenizer.from_texts(["a b"])
    enc = tok.encode("a <eos> b")
    assert enc.ids[1] == UNK_ID and enc.unknown == [(1, "<eos>")]


def test_decode_skips_pad_bos_and_stops_at_eos():
    tok = CharTokenizer.from_texts(["abc"])
    a, b, c = (tok.index[x] for x in "abc")
    assert tok.decode([BOS_ID, a, b, EOS_ID, c, PAD_ID]) == "ab"
    assert tok.decode([BOS_ID, PAD_ID, c]) == "c"
    assert tok.pieces([BOS_ID, a, EOS_ID]) == ["<bos>", "a", "<eos>"]


def test_round_trip_through_dict():
    for tok in (CharTokenizer.from_texts(["héllo wörld"]), WordTokenizer.from_texts(["one two three"])):
        again = tokenizer_from_dict(tok.to_dict())
        assert again == tok and type(again) is type(tok)


@pytest.mark.parametrize("bad, words", [
    ({"kind": "bpe", "vocab": list(SPECIALS)}, "unknown tokenizer kind"),
    ({"kind": "char", "vocab": ["a", "b"]}, "must start with"),
    ({"kind": "char", "vocab": list(SPECIALS) + ["a", "a"]}, "duplicate"),
    ({"kind": "char", "vocab": "abc"}, "list of strings"),
    ([1, 2], "JSON object"),
])
def test_bad_dicts_are_clear_errors(bad, words):
    with pytest.raises(TokenizerError, match=words):
        tokenizer_from_dict(bad)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60), st.text(max_size=60))
def test_char_any_string_encodes_and_known_round_trips(alphabet, text):
    tok = CharTokenizer.from_texts([alphabet])
    enc = tok.encode(text)  # never raises
    assert len(enc.ids) == len(text)
    assert [i for i, _ in enc.unknown] == [i for i, ch in enumerate(text) if ch not in set(alphabet)]
    if not enc.unknown:
        assert tok.decode(enc.ids) == text
    assert tok.decode(tok.encode(alphabet).ids) == alphabet


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=8).filter(lambda w: w.split() == [w]), max_size=12),
       st.text(max_size=60))
def test_word_any_string_encodes_and_known_round_trips(words, text):
    tok = WordTokenizer.from_texts([" ".join(words)])
    enc = tok.encode(text)  # never raises
    assert enc.pieces == text.split()
    known = set(words) - set(SPECIALS)
    assert [p for _, p in enc.unknown] == [w for w in text.split() if w not in known]
    sentence = " ".join(w for w in words if w not in SPECIALS)
    assert tok.decode(tok.encode(sentence).ids) == " ".join(sentence.split())


def test_bpe_training_stops_at_once_on_ctrl_c(monkeypatch):
    """The library's merges run in native code that never looks at Ctrl-C; training waits for
    them on a thread of its own, so an interrupt stops it within a moment, not when they end."""
    import _thread
    import threading
    import time

    pytest.importorskip("tokenizers")
    import tokenizers

    from model.data.bpe import BPETokenizer

    def slow_train(self, iterator, trainer=None, length=None):
        time.sleep(5)  # as long native merges: the interrupt must not wait for this

    monkeypatch.setattr(tokenizers.Tokenizer, "train_from_iterator", slow_train, raising=False)
    threading.Timer(0.3, _thread.interrupt_main).start()
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        BPETokenizer.train(["a b c"] * 10, vocab_size=50)
    assert time.monotonic() - start < 2.0
