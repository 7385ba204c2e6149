"""Small built-in tasks, each a seeded generator of (source, target) text pairs.

Held-out evaluation is real: every generated task assigns each *source* to "train" or
"eval" by a stable hash, so evaluation inputs are never seen in training.
"""
from __future__ import annotations

import datetime as _dt
import random
import string
from collections.abc import Callable

from model.data.task import EVAL_FRACTION, Task, TaskError, split_of  # noqa: E402,F401 (the type of every task)

LETTERS = string.ascii_lowercase


def _random_word(rng: random.Random, min_len: int, max_len: int) -> str:
    return "".join(rng.choice(LETTERS) for _ in range(rng.randint(min_len, max_len)))


def _string_task(name: str, fn: Callable[[str], str], description: str, min_len: int, max_len: int,
                 examples: list[str]) -> Task:
    return Task(name, description, lambda rng: (lambda s: (s, fn(s)))(_random_word(rng, min_len, max_len)),
                [LETTERS], [LETTERS], "char", examples, max_len, max_len,
                {"min_len": min_len, "max_len": max_len})


def copy_task(min_len: int = 1, max_len: int = 24) -> Task:
    return _string_task("copy", lambda s: s, "Copy a string of lowercase letters.", min_len, max_len,
                        ["attention", "transformer", "hello"])


def reverse_task(min_len: int = 1, max_len: int = 24) -> Task:
    return _string_task("reverse", lambda s: s[::-1], "Reverse a string of lowercase letters.", min_len, max_len,
                        ["attention", "transformer", "stressed", "abcdefg"])


def sort_task(min_len: int = 1, max_len: int = 24) -> Task:
    return _string_task("sort", lambda s: "".join(sorted(s)), "Sort the letters of a string.", min_len, max_len,
                        ["transformer", "attention", "zyxwv"])


def addition_task(max_value: int = 999, balanced_digits: bool = True) -> Task:
    """Sums of two numbers from 0 to max_value. With balanced_digits each operand first draws
    its number of digits uniformly (1 to max_value's), then a value with that many digits: a
    uniform draw from 0–999 makes one-digit operands 1% of the data, and a model trained on it
    gets "2+2" wrong while it adds three-digit numbers perfectly."""
    width = len(str(max_value))

    def operand(rng: random.Random) -> int:
        if not balanced_digits:
            return rng.randint(0, max_value)
        digits = rng.randint(1, width)
        low = 0 if digits == 1 else 10 ** (digits - 1)
        return rng.randint(low, min(10 ** digits - 1, max_value))

    def draw(rng: random.Random) -> tuple[str, str]:
        a, b = operand(rng), operand(rng)
        return f"{a}+{b}", str(a + b)

    how = f", each with 1 to {width} digits equally often" if balanced_digits and width > 1 else ""
    return Task("addition", f"Add two numbers from 0 to {max_value}{how}.", draw, ["0123456789+"], ["0123456789"],
                "char", ["2+2", "123+45", "999+1", "58+67"], 2 * width + 1, width + 1,
                {"max_value": max_value, "balanced_digits": balanced_digits})


# -- dates ----------------------------------------------------------------------------------
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
DATE_FORMATS = (
    lambda d: f"{d.day} {MONTHS[d.month - 1]} {d.year}",  # 22 November 2026
    lambda d: f"{MONTHS[d.month - 1]} {d.day}, {d.year}",  # November 22, 2026
    lambda d: f"{d.day} {MONTHS[d.month - 1][:3]} {d.year}",  # 22 Nov 2026
    lambda d: f"{MONTHS[d.month - 1][:3]} {d.day}, {d.year}",  # Nov 22, 2026
    lambda d: f"{d.day:02d}.{d.month:02d}.{d.year}",  # 22.11.2026
    lambda d: f"{WEEKDAYS[d.weekday()]}, {d.day} {MONTHS[d.month - 1]} {d.year}",  # Sunday, 22 November 2026
)
DATE_MIN, DATE_MAX = _dt.date(1900, 1, 1), _dt.date(2099, 12, 31)


def dates_task() -> Task:
    span = (DATE_MAX - DATE_MIN).days

    def draw(rng: random.Random) -> tuple[str, str]:
        d = DATE_MIN + _dt.timedelta(days=rng.randint(0, span))
        return rng.choice(DATE_FORMATS)(d), d.isoformat()

    src_texts = MONTHS + WEEKDAYS + ["0123456789 ,."]
    return Task("dates", "Human-written dates (1900–2099) → ISO 8601.", draw, src_texts, ["0123456789-"], "char",
                ["22 November 2026", "Nov 22, 2026", "Sunday, 22 November 2026", "01.02.1903"], 32, 10)


# -- a synthetic language pair with word reordering ------------------------------------------
NOUNS = [
    "dog", "cat", "bird", "horse", "child", "teacher", "student", "farmer", "king", "queen", "doctor",
    "baker", "sailor", "painter", "singer", "writer", "soldier", "girl", "boy", "woman", "man",
    "friend", "mother", "father", "sister", "brother", "neighbour", "stranger", "tiger", "lion", "wolf",
    "fox", "bear", "rabbit", "mouse", "fish", "snake", "owl", "eagle", "duck", "goose", "cow", "goat",
    "sheep", "pig", "monkey", "frog", "robot", "giant", "wizard", "pirate", "poet", "judge", "nurse",
    "cook", "driver", "pilot", "dancer", "farmer2", "hunter", "guard", "merchant", "priest", "clown",
    "knight", "prince", "princess", "dragon", "ghost", "village", "river", "forest", "mountain",
    "castle", "garden", "market", "school", "house", "ship", "tree", "flower", "stone", "apple",
    "bread", "letter", "song", "story", "book", "box", "key", "door", "window", "lamp", "clock",
    "horse2", "cart", "coat", "hat", "ring", "sword", "cup",
]
ADJECTIVES = [
    "big", "small", "old", "young", "red", "blue", "green", "happy", "sad", "quiet", "loud", "tall",
    "short", "brave", "clever", "lazy", "kind", "angry", "hungry", "tired", "rich", "poor", "strong",
    "weak", "fast", "slow", "bright", "dark", "warm", "cold", "gentle", "wild", "proud", "shy", "calm",
    "busy", "famous", "strange", "friendly", "gray", "white", "black", "golden", "silver", "tiny",
    "huge", "noisy", "polite", "funny", "serious", "careful", "honest", "lonely", "lucky", "wise",
    "fierce", "sleepy", "clumsy",
]
VERBS = [
    "sees", "likes", "helps", "finds", "follows", "calls", "meets", "watches", "loves", "hates",
    "visits", "feeds", "pushes", "pulls", "carries", "paints", "draws", "chases", "catches", "teaches",
    "greets", "thanks", "hears", "knows", "remembers", "forgets", "answers", "asks", "brings", "takes",
    "holds", "builds", "breaks", "opens", "closes", "buys", "sells", "reads", "writes", "cleans",
    "washes", "fixes", "hides", "guards", "wakes",
]
DETERMINERS = ["the", "a", "this", "that"]
ADVERBS = ["today", "yesterday", "quickly", "slowly", "often", "never"]
NOUNS = [n for n in NOUNS if not n[-1].isdigit()]


def _pseudo_words(words: list[str], seed: int) -> dict[str, str]:
    """A made-up target word for each source word, deterministic and collision-free."""
    rng = random.Random(seed)
    consonants, vowels = "bdfgklmnprstvz", "aeiou"
    out, used = {}, set()
    for w in words:
        while True:
            syll = rng.randint(1, 3)
            cand = "".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(syll))
            if rng.random() < 0.3:
                cand += rng.choice("nrs")
            if cand not in used:
                used.add(cand)
                out[w] = cand
                break
    return out


def translation_task() -> Task:
    """An SVO language with adjectives before nouns → an SOV language with adjectives after nouns.

    'the big dog sees a small cat' → 'DOG BIG THE CAT SMALL A SEES' (in made-up words), so
    cross-attention must jump: the target verb comes last, each adjective after its noun.
    """
    lexicon = _pseudo_words(DETERMINERS + NOUNS + ADJECTIVES + VERBS + ADVERBS, seed=1706)

    def noun_phrase(rng: random.Random) -> tuple[list[str], list[str]]:
        det, noun = rng.choice(DETERMINERS), rng.choice(NOUNS)
        adjs = rng.sample(ADJECTIVES, rng.choice((0, 0, 1, 1, 2)))
        src = [det] + adjs + [noun]
        tgt = [lexicon[noun]] + [lexicon[a] for a in adjs] + [lexicon[det]]
        return src, tgt

    def draw(rng: random.Random) -> tuple[str, str]:
        s_src, s_tgt = noun_phrase(rng)
        o_src, o_tgt = noun_phrase(rng)
        verb = rng.choice(VERBS)
        adv = rng.choice(ADVERBS) if rng.random() < 0.3 else None
        src = s_src + [verb] + o_src + ([adv] if adv else [])
        tgt = s_tgt + ([lexicon[adv]] if adv else []) + o_tgt + [lexicon[verb]]
        return " ".join(src), " ".join(tgt)

    src_words = DETERMINERS + NOUNS + ADJECTIVES + VERBS + ADVERBS
    return Task("translation", "English-like SVO (adjective noun) → made-up SOV (noun adjective).", draw,
                [" ".join(src_words)], [" ".join(lexicon[w] for w in src_words)], "word",
                ["the big dog sees a small cat", "a clever fox follows the old farmer today",
                 "this tiny mouse likes that huge golden cat"], 12, 12)


def facts_task() -> Task:
    """The language-model corpus (model.data.corpus): sentences about a toy world."""
    from model.data.corpus import facts_task as build  # corpus builds on Task: imported late, no cycle

    return build()


TASKS: dict[str, Callable[..., Task]] = {
    "copy": copy_task, "reverse": reverse_task, "sort": sort_task, "addition": addition_task,
    "dates": dates_task, "translation": translation_task, "facts": facts_task,
}
# Tasks whose pairs are (text, text): corpora for the encoder-only / decoder-only variants.
CORPUS_TASKS = ("facts",)


def get_task(name: str, **params) -> Task:
    """A built-in task by name, e.g. get_task('reverse', max_len=12)."""
    if name not in TASKS:
        raise TaskError(f"unknown task {name!r}; built-in tasks: {', '.join(TASKS)} (or use a TSV file)")
    try:
        return TASKS[name](**params)
    except TypeError as exc:
        raise TaskError(f"bad parameters for task {name!r}: {exc}") from None
