"""A GGUF file's tokenizer is built once: loading the same file again reuses it (the BPE build is
one long call that holds the interpreter), and a changed file is built anew."""
import os

import pytest

gguf = pytest.importorskip("gguf")
tokenizers = pytest.importorskip("tokenizers")

from model.io.pretrained.gguf_file import GGUFFile  # noqa: E402
from model.io.pretrained.gguf_tokenizer import build_gguf_tokenizer, gguf_tokenizer  # noqa: E402

TOKENS = ["<|endoftext|>", "t", "h", "e", "Ġ", "th", "the", "Ġthe"]
CONTROL, NORMAL = 3, 1


def write_tiny(path, merges):
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_tokenizer_model("gpt2")
    writer.add_token_list(TOKENS)
    writer.add_token_merges(merges)
    writer.add_token_types([CONTROL] + [NORMAL] * (len(TOKENS) - 1))
    writer.add_bos_token_id(0)
    writer.add_eos_token_id(0)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


@pytest.fixture
def bpe_builds(monkeypatch):
    """How many times the `tokenizers` BPE model is built."""
    builds, real = [], tokenizers.models.BPE
    monkeypatch.setattr(tokenizers.models, "BPE", lambda *a, **k: builds.append(1) or real(*a, **k))
    return builds


def test_the_same_file_is_built_once_and_encodes_as_a_fresh_build(tmp_path, bpe_builds):
    path = write_tiny(tmp_path / "tiny.gguf", ["t h", "th e", "Ġ the"])
    first, notes = gguf_tokenizer(GGUFFile(path))
    again, notes_again = gguf_tokenizer(GGUFFile(path))
    assert len(bpe_builds) == 1 and again is first and notes_again == notes
    fresh, _notes = build_gguf_tokenizer(GGUFFile(path))
    assert [i for i, _ in again.split("the the")] == [i for i, _ in fresh.split("the the")] == [6, 7]


def test_a_changed_file_is_built_anew(tmp_path, bpe_builds):
    path = write_tiny(tmp_path / "tiny.gguf", ["t h", "th e", "Ġ the"])
    first, _notes = gguf_tokenizer(GGUFFile(path))
    stat = os.stat(path)
    write_tiny(path, ["t h", "th e"])  # no "Ġ the": " the" stays two pieces
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    changed, _notes = gguf_tokenizer(GGUFFile(path))
    assert len(bpe_builds) == 2 and changed is not first
    assert [i for i, _ in changed.split("the the")] == [6, 4, 6]
