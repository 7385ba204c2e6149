"""Built-in tasks: targets are really right, seeds reproduce, held-out inputs are held out;
TSV data: every malformed file is a clear error naming the line."""
import datetime as dt

import pytest

from model.data.tasks import DATE_FORMATS, DATE_MAX, DATE_MIN, TASKS, TaskError, get_task, split_of
from model.data.tokenizers import BOS_ID, EOS_ID, PAD_ID
from model.data.user_data import DataError, make_batch, read_tsv, tsv_task

# strptime formats matching model.data.tasks.DATE_FORMATS, in the same order (C locale names).
STRPTIME = ("%d %B %Y", "%B %d, %Y", "%d %b %Y", "%b %d, %Y", "%d.%m.%Y", "%A, %d %B %Y")


def test_reverse_and_copy_and_sort_targets():
    for src, tgt in get_task("reverse").pairs(300, seed=3):
        assert tgt == src[::-1] and 1 <= len(src) <= 24 and src.isalpha() and src.islower()
    for src, tgt in get_task("copy").pairs(100):
        assert tgt == src
    for src, tgt in get_task("sort").pairs(100):
        assert list(tgt) == sorted(src)


def test_addition_target_is_the_sum():
    pairs = get_task("addition").pairs(500, seed=5)
    for src, tgt in pairs:
        a, b = src.split("+")
        assert 0 <= int(a) <= 999 and 0 <= int(b) <= 999
        assert int(tgt) == int(a) + int(b) and tgt == str(int(tgt))  # no leading zeros
    assert get_task("addition").pairs(1, seed=0)[0][1] != "" and any(int(t) >= 1000 for _, t in pairs)


def test_every_date_format_round_trips_through_datetime():
    days = (DATE_MAX - DATE_MIN).days
    for k in range(0, days, 997):
        d = DATE_MIN + dt.timedelta(days=k)
        for fmt, fn in zip(STRPTIME, DATE_FORMATS):
            assert dt.datetime.strptime(fn(d), fmt).date() == d
    assert len(STRPTIME) == len(DATE_FORMATS) == 6


def test_dates_task_targets_are_iso_of_the_source():
    seen_formats = set()
    for src, tgt in get_task("dates").pairs(600, seed=2):
        parsed = set()
        for i, fmt in enumerate(STRPTIME):
            try:
                parsed.add(dt.datetime.strptime(src, fmt).date())
                seen_formats.add(i)
            except ValueError:
                pass
        assert parsed == {dt.date.fromisoformat(tgt)}, src
        assert DATE_MIN <= dt.date.fromisoformat(tgt) <= DATE_MAX
    assert seen_formats == set(range(6))


def test_translation_moves_verb_last_and_adjectives_after_nouns():
    from model.data.tasks import ADJECTIVES, ADVERBS, DETERMINERS, NOUNS, VERBS, _pseudo_words

    lexicon = _pseudo_words(DETERMINERS + NOUNS + ADJECTIVES + VERBS + ADVERBS, seed=1706)
    back = {v: k for k, v in lexicon.items()}
    assert len(back) == len(lexicon)  # made-up words are distinct
    for src, tgt in get_task("translation").pairs(300, seed=4):
        s, t = src.split(), [back[w] for w in tgt.split()]
        verbs = [w for w in s if w in VERBS]
        assert len(verbs) == 1 and t[-1] == verbs[0]  # SOV: the verb ends the sentence
        assert sorted(s) == sorted(t)  # a word-for-word translation, reordered
        for i, w in enumerate(t):  # adjectives follow their noun (noun adj* det)
            if w in ADJECTIVES:
                assert t[i - 1] in NOUNS or t[i - 1] in ADJECTIVES
        assert s[0] in DETERMINERS and t[0] in NOUNS


def test_seeds_reproduce_and_differ():
    for name in TASKS:
        task = get_task(name)
        assert task.pairs(50, seed=7) == get_task(name).pairs(50, seed=7)
        assert task.pairs(50, seed=7) != task.pairs(50, seed=8)


def test_train_and_eval_splits_are_disjoint():
    for name in TASKS:
        task = get_task(name)
        train = {s for s, _ in task.pairs(2000, seed=0, split="train")}
        evals = {s for s, _ in task.pairs(300, seed=0, split="eval")}
        assert not train & evals, name
        assert all(split_of(s) == "eval" for s in evals) and all(split_of(s) == "train" for s in train)


def test_unknown_task_and_bad_params():
    with pytest.raises(TaskError, match="unknown task 'nope'"):
        get_task("nope")
    with pytest.raises(TaskError, match="bad parameters"):
        get_task("reverse", colour="red")
    assert all(len(s) <= 6 for s, _ in get_task("reverse", max_len=6).pairs(100))


def test_tokenizers_cover_every_symbol():
    for name in TASKS:
        task = get_task(name)
        src_tok, tgt_tok = task.build_tokenizers()
        for s, t in task.pairs(300, seed=1):
            assert not src_tok.encode(s).unknown and not tgt_tok.encode(t).unknown
            assert len(src_tok.encode(s).ids) <= task.max_src_len and len(tgt_tok.encode(t).ids) <= task.max_tgt_len


def test_make_batch_shifts_target():
    task = get_task("reverse")
    src_tok, tgt_tok = task.build_tokenizers()
    b = make_batch([("abc", "cba"), ("a", "a")], src_tok, tgt_tok)
    assert b.src.tolist()[1] == [src_tok.index["a"], PAD_ID, PAD_ID]
    assert b.tgt_in.tolist()[0] == [BOS_ID] + [tgt_tok.index[c] for c in "cba"]
    assert b.tgt_out.tolist()[0] == [tgt_tok.index[c] for c in "cba"] + [EOS_ID]
    assert b.tgt_out.tolist()[1] == [tgt_tok.index["a"], EOS_ID, PAD_ID, PAD_ID]
    assert b.n_tokens == 6


# -- TSV --------------------------------------------------------------------------------------
def write(tmp_path, content, name="pairs.tsv"):
    p = tmp_path / name
    p.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return p


def test_tsv_reads_pairs_and_skips_blank_lines(tmp_path):
    p = write(tmp_path, "\ufeffhello\tbonjour\n\n  cat \t chat\n")
    assert read_tsv(p) == [("hello", "bonjour"), ("cat", "chat")]


@pytest.mark.parametrize("content, words", [
    ("a\tb\nno tab here\n", r"line 2: expected 'source<TAB>target' \(one tab\), found 0 tabs"),
    ("a\tb\nc\td\te\n", "line 2: .*found 2 tabs"),
    ("a\tb\n\t x\n", "line 2: empty source"),
    ("a\tb\nx\t \n", "line 2: empty target"),
    ("", "has no source<TAB>target pairs"),
    ("\n \n", "has no source<TAB>target pairs"),
    ("a\tb\n" + "x" * 2000 + "\ty\n", "line 2: 2002 characters, longer than the limit of 1000"),
])
def test_tsv_malformed_files_name_the_line(tmp_path, content, words):
    p = write(tmp_path, content)
    with pytest.raises(DataError, match=words) as err:
        read_tsv(p)
    assert str(p) in str(err.value)


def test_tsv_not_utf8_names_the_line(tmp_path):
    p = write(tmp_path, b"a\tb\nc\td\ncaf\xe9\tcoffee\n")
    with pytest.raises(DataError, match=r"line 3: not valid UTF-8"):
        read_tsv(p)


def test_tsv_missing_file(tmp_path):
    with pytest.raises(DataError, match="cannot read the file"):
        read_tsv(tmp_path / "nope.tsv")


def test_tsv_task_splits_and_tokenizes(tmp_path):
    lines = "".join(f"w{i} x{i}\tv{i} y{i}\n" for i in range(200))
    task = tsv_task(write(tmp_path, lines), tokenizer="word")
    train = set(task.split_pairs["train"])
    evals = set(task.split_pairs["eval"])
    assert evals and not train & evals and len(train | evals) == 200
    src_tok, _ = task.build_tokenizers()
    assert "w7" in src_tok.vocab and task.max_src_len == 2
    with pytest.raises(DataError, match="tokenizer must be"):
        tsv_task(write(tmp_path, lines), tokenizer="bpe")


def test_addition_operands_have_one_two_and_three_digits_equally_often():
    """Uniform draws from 0–999 make a one-digit operand 1% of the data (and "2+2" a sum the
    model never learns); digit-balanced draws make it a third."""
    from collections import Counter

    def digit_shares(task) -> Counter:
        counts = Counter(len(op) for src, _ in task.pairs(3000, seed=5) for op in src.split("+"))
        return Counter({d: n / 6000 for d, n in counts.items()})

    balanced = get_task("addition")
    assert balanced.params == {"max_value": 999, "balanced_digits": True}
    shares = digit_shares(balanced)
    assert set(shares) == {1, 2, 3} and all(abs(s - 1 / 3) < 0.03 for s in shares.values())
    assert all(int(a) + int(b) == int(t) for (a, b), t in
               ((s.split("+"), t) for s, t in balanced.pairs(500, seed=6)))
    assert digit_shares(get_task("addition", balanced_digits=False))[1] < 0.03
    small = get_task("addition", max_value=50)  # a range that is not all of two digits
    assert all(int(op) <= 50 for s, _ in small.pairs(300) for op in s.split("+"))
