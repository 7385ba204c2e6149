"""A small generated text corpus for the language-model variants: sentences about a toy world.

BERT-like and GPT-like models (the paper's encoder and decoder on their own) learn from
plain text, not from pairs. A lecture needs text whose blanks and continuations can be
*right or wrong*, so the corpus states facts of a fixed little world — every animal has one
sound, home, food and colour:

    "the cow says moo and eats grass ."
    "a young owl lives in the tree , is brown and says hoot ."

A masked-LM can then fill "the [MASK] says moo" (→ cow) and a causal LM can continue
"the duck" (→ "says quack …"), and `check_facts` tells whether what a model wrote is true.
The corpus is a `Task` whose pairs are (sentence, sentence), so the same train/eval split by
stable hash, tokenizers, checkpoints and Trainer serve it.
"""
from __future__ import annotations

import random
import re

from model.data.task import Task

MASK_TOKEN = "[MASK]"  # BERT's spelling; typed as-is in the GUI ("the [MASK] says moo")

# animal: (sound, home, food, colour). Sounds, homes and foods are unique where it matters
# (so a masked animal can be recovered from its facts); colours are shared on purpose.
WORLD: dict[str, tuple[str, str, str, str]] = {
    "cow": ("moo", "barn", "grass", "brown"),
    "dog": ("woof", "kennel", "bones", "black"),
    "cat": ("meow", "house", "milk", "grey"),
    "duck": ("quack", "pond", "bread", "white"),
    "sheep": ("baa", "field", "clover", "white"),
    "pig": ("oink", "sty", "apples", "pink"),
    "horse": ("neigh", "stable", "hay", "brown"),
    "owl": ("hoot", "tree", "mice", "brown"),
    "frog": ("croak", "lake", "flies", "green"),
    "bee": ("buzz", "hive", "nectar", "yellow"),
    "lion": ("roar", "den", "meat", "golden"),
    "mouse": ("squeak", "hole", "cheese", "grey"),
    "snake": ("hiss", "rock", "eggs", "green"),
    "goat": ("bleat", "hill", "weeds", "white"),
    "wolf": ("howl", "forest", "deer", "grey"),
    "crow": ("caw", "nest", "seeds", "black"),
}
ADJECTIVES = ("little", "big", "old", "young", "happy", "sleepy")  # free choice: not predictable
RELATIONS = ("says", "lives", "eats", "is")
FACT_TEMPLATES = {
    "says": "says {0}",
    "lives": "lives in the {1}",
    "eats": "eats {2}",
    "is": "is {3}",
}


def _join(clauses: list[str]) -> str:
    """'a', 'a and b', 'a , b and c' — commas are tokens of their own (word tokenizer)."""
    if len(clauses) == 1:
        return clauses[0]
    return " , ".join(clauses[:-1]) + " and " + clauses[-1]


def facts_sentence(rng: random.Random) -> str:
    """One sentence stating one to three facts about one animal."""
    animal = rng.choice(sorted(WORLD))
    facts = WORLD[animal]
    det = rng.choice(("the", "the", "a"))
    adj = [rng.choice(ADJECTIVES)] if rng.random() < 0.3 else []
    relations = rng.sample(RELATIONS, rng.choice((1, 2, 2, 3)))
    clauses = [FACT_TEMPLATES[r].format(*facts) for r in relations]
    return " ".join([det, *adj, animal, _join(clauses), "."])


def facts_vocabulary() -> list[str]:
    words = {"the", "a", "in", "and", ",", ".", MASK_TOKEN, *ADJECTIVES, *RELATIONS}
    for animal, facts in WORLD.items():
        words.add(animal)
        words.update(facts)
    return sorted(words)


def facts_task() -> Task:
    """The corpus as a Task of (sentence, sentence): a masked LM reads the source side, a
    causal LM learns the target side. [MASK] is in the vocabulary but never in the text."""
    def draw(rng: random.Random) -> tuple[str, str]:
        s = facts_sentence(rng)
        return s, s

    vocab = " ".join(facts_vocabulary())
    return Task("facts", "Sentences about a toy world: each animal has one sound, home, food and colour.",
                draw, [vocab], [vocab], "word",
                # [MASK] examples are for a masked LM, the others prompts for a causal LM (ModelBundle.examples)
                ["the [MASK] says moo", "a young owl lives in the [MASK] and eats [MASK] .",
                 "the [MASK] eats cheese and lives in the hole .", "the duck", "a sleepy lion", "the frog lives in the"],
                max_src_len=20, max_tgt_len=20)


_FACT_PATTERNS = (
    ("says", re.compile(r"\bsays (\w+)")),
    ("lives", re.compile(r"\blives in the (\w+)")),
    ("eats", re.compile(r"\beats (\w+)")),
    ("is", re.compile(r"\bis (\w+)")),
)


def check_facts(text: str) -> tuple[int, int]:
    """(true, false) counts of the facts stated in `text` about the animal it names first.

    Used to score what a causal LM writes: a continuation of "the cow" that says "moo"
    and "eats grass" states two true facts; "eats bones" would be a false one. Text that
    names no known animal states no checkable fact: (0, 0).
    """
    words = text.split()
    animal = next((w for w in words if w in WORLD), None)
    if animal is None:
        return 0, 0
    truth = dict(zip(RELATIONS, WORLD[animal]))
    true = false = 0
    for relation, pattern in _FACT_PATTERNS:
        for value in pattern.findall(text):
            if value == truth[relation]:
                true += 1
            else:
                false += 1
    return true, false


# Cues that ask for one fact: "the cow says" → moo. (Sounds, homes and foods are unique, so
# the reverse question "the [MASK] says moo" has one answer too; colours are shared, so not.)
CUES = {"says": "says", "lives": "lives in the", "eats": "eats", "is": "is"}


def fact_fill_ins() -> list[tuple[str, str]]:
    """(text with one [MASK], the one right word) for every fact, asked both ways round
    where the answer is unique: 16 animals × 4 facts + 16 × 3 reverse = 112 questions."""
    out = []
    for animal, facts in WORLD.items():
        for relation, value in zip(RELATIONS, facts):
            out.append((f"the {animal} {CUES[relation]} {MASK_TOKEN} .", value))
            if relation != "is":
                out.append((f"the {MASK_TOKEN} {CUES[relation]} {value} .", animal))
    return out


def fact_prompts() -> list[tuple[str, str]]:
    """(prompt, the right next word) for a causal LM: "the cow says" → "moo"; 64 prompts."""
    return [(f"the {animal} {CUES[relation]}", value)
            for animal, facts in WORLD.items() for relation, value in zip(RELATIONS, facts)]


def score_fill_ins(bundle) -> float:
    """Fraction of `fact_fill_ins` a masked-LM bundle answers with its top prediction."""
    questions = fact_fill_ins()
    hits = sum(bundle.run(text).mask_predictions[0].pieces[0] == answer for text, answer in questions)
    return hits / len(questions)


def score_continuations(bundle) -> tuple[float, float]:
    """A causal-LM bundle's (next-word accuracy on `fact_prompts`, share of true facts among
    all facts its greedy continuations of "the <animal>" state)."""
    prompts = fact_prompts()
    hits = sum(bundle.translate(p).split()[:1] == [answer] for p, answer in prompts)
    true = false = 0
    for animal in WORLD:
        t, f = check_facts(f"the {animal} " + bundle.translate(f"the {animal}"))
        true, false = true + t, false + f
    return hits / len(prompts), true / max(true + false, 1)


def sentence_distribution() -> dict[tuple[str, ...], float]:
    """Every sentence `facts_sentence` can draw, with its probability (8,960 of them).

    Mirrors the generator: animal 1/16, "the" 2/3 or "a" 1/3, an adjective with p 0.3
    (1/6 each), 1, 2 or 3 facts with p 1/4, 1/2, 1/4 in a uniformly random order."""
    from itertools import permutations

    out: dict[tuple[str, ...], float] = {}
    for animal, facts in WORLD.items():
        for det, p_det in (("the", 2 / 3), ("a", 1 / 3)):
            for adj, p_adj in [(None, 0.7)] + [(a, 0.3 / len(ADJECTIVES)) for a in ADJECTIVES]:
                for k, p_k in ((1, 0.25), (2, 0.5), (3, 0.25)):
                    orders = list(permutations(RELATIONS, k))
                    for order in orders:
                        clauses = [FACT_TEMPLATES[r].format(*facts) for r in order]
                        words = [det] + ([adj] if adj else []) + [animal] + _join(clauses).split() + ["."]
                        key = tuple(words)
                        out[key] = out.get(key, 0.0) + p_det * p_adj * p_k / len(orders) / len(WORLD)
    return out


def _next_word_guesses(dist: dict[tuple[str, ...], float]) -> dict[tuple[str, ...], str]:
    """For every opening of a sentence in `dist`, the most probable next word (or "<eos>")."""
    nxt: dict[tuple, dict[str, float]] = {}
    for words, p in dist.items():
        for i, w in enumerate(words + ("<eos>",)):
            options = nxt.setdefault(words[:i], {})
            options[w] = options.get(w, 0.0) + p
    return {prefix: max(options, key=options.get) for prefix, options in nxt.items()}


def best_possible_scores(texts: list[str]) -> tuple[float, float]:
    """The Bayes-optimal (masked-token accuracy, next-token accuracy) on `texts`, from the
    exact corpus distribution: the ceiling a perfect model reaches, since adjectives,
    determiners and the order of facts are free choices no model can guess.

    Masked: each token masked in turn, the answer the most probable word given all the
    others. Next-token: the most probable next word (or the end) given the words so far."""
    dist = sentence_distribution()
    fill: dict[tuple, dict[str, float]] = {}
    for words, p in dist.items():
        for i, w in enumerate(words):
            key = (i, words[:i] + words[i + 1:])
            fill.setdefault(key, {})
            fill[key][w] = fill[key].get(w, 0.0) + p
    guess = _next_word_guesses(dist)
    m_hits = m_total = n_hits = n_total = 0
    for text in texts:
        words = tuple(text.split())
        for i, w in enumerate(words):
            options = fill[(i, words[:i] + words[i + 1:])]
            m_hits += max(options, key=options.get) == w
            m_total += 1
        for i, w in enumerate(words + ("<eos>",)):
            n_hits += guess[words[:i]] == w
            n_total += 1
    return m_hits / max(m_total, 1), n_hits / max(n_total, 1)


def next_word_ceiling(n_sentences: int) -> tuple[float, float]:
    """The best possible next-word accuracy — (expected score, its standard deviation on
    `n_sentences` sentences) — of the Bayes-optimal guess from the words so far, from the exact
    corpus distribution.

    Why a spread: a score on a finite held-out set scatters around the expectation, so a model
    that reads only the past can land a point above its sample's Bayes score (the panel once said
    "ceiling ≈66%" beside a with-mask bar of 67%). A hard bound on the sample (the most frequent
    next word per opening, in hindsight) is no answer either: with 200 sentences most long
    openings occur once, and that bound reads 84%. Per-token accuracy is a ratio of per-sentence
    sums (hits X over tokens N), so its variance is Var(X − r·N) / (n·E[N]²), r = E[X]/E[N]."""
    dist = sentence_distribution()
    guess = _next_word_guesses(dist)
    per_sentence = [(p, sum(guess[words[:i]] == w for i, w in enumerate(words + ("<eos>",))), len(words) + 1)
                    for words, p in dist.items()]
    mean_x = sum(p * x for p, x, _ in per_sentence)
    mean_n = sum(p * n for p, _, n in per_sentence)
    ratio = mean_x / mean_n
    var = sum(p * (x - ratio * n) ** 2 for p, x, n in per_sentence)
    return ratio, (var / (max(n_sentences, 1) * mean_n ** 2)) ** 0.5


__all__ = ["MASK_TOKEN", "WORLD", "facts_task", "facts_sentence", "facts_vocabulary", "check_facts",
           "fact_fill_ins", "fact_prompts", "score_fill_ins", "score_continuations",
           "sentence_distribution", "best_possible_scores", "next_word_ceiling"]
