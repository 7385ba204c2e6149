"""The GGUF tokenizer's identity digest: fed in chunks, it is the same whatever the chunk size and
changes with anything that changes the ids."""
from model.io.pretrained.gguf_tokenizer import vocabulary_digest

TOKENS = [f"piece{i}" for i in range(50)] + ["Ġthe", "<|im_start|>", "é", ""]
MERGES = ["Ġ t", "h e", "Ġt he"]
TYPES = ["1"] * 53 + ["3"]


def test_the_digest_does_not_depend_on_the_chunk_size():
    whole = vocabulary_digest(TOKENS, MERGES, TYPES, "smollm", chunk=10_000)
    for chunk in (1, 3, 7, 54):
        assert vocabulary_digest(TOKENS, MERGES, TYPES, "smollm", chunk=chunk) == whole


def test_the_digest_changes_with_what_decides_the_ids():
    base = vocabulary_digest(TOKENS, MERGES, TYPES, "smollm")
    assert vocabulary_digest(list(TOKENS), list(MERGES), list(TYPES), "smollm") == base
    moved = ["piece0piece1"] + TOKENS[2:] + [""]  # the same characters, a boundary moved
    changed = [
        vocabulary_digest(moved, MERGES, TYPES, "smollm"),
        vocabulary_digest(TOKENS, MERGES[:2], TYPES, "smollm"),
        vocabulary_digest(TOKENS, MERGES, TYPES[:-1] + ["1"], "smollm"),
        vocabulary_digest(TOKENS, MERGES, TYPES, "llama3"),
        vocabulary_digest(TOKENS, [], MERGES + TYPES, "smollm"),  # the same pieces, another field
        vocabulary_digest(TOKENS, ['Ġ t", "h e'] + MERGES[2:], TYPES, "smollm"),  # two pieces' text in one
    ]
    assert base not in changed and len(set(changed)) == len(changed)
