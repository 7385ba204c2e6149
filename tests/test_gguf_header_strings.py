"""A GGUF header's string arrays (a vocabulary, its merges) read as the `gguf` package's own
reader reads them, and a file cut inside one refused with a sentence."""
import pytest

gguf = pytest.importorskip("gguf")

from model.io.pretrained.files import PretrainedError  # noqa: E402
from model.io.pretrained.gguf_file import GGUFFile  # noqa: E402

TOKENS = ["<|endoftext|>", "Ġthe", "", "é", "日本", "a b", "Ċ"] * 3
MERGES = ["Ġ t", "h e", "Ġt he"]


@pytest.fixture(scope="module")
def tiny_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("gguf") / "strings.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_token_list(TOKENS)
    writer.add_token_merges(MERGES)
    writer.add_string("general.name", "tiny")
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def test_string_arrays_read_as_the_gguf_reader_reads_them(tiny_file):
    reference = gguf.GGUFReader(str(tiny_file))
    ours = GGUFFile(tiny_file)
    for key in ("tokenizer.ggml.tokens", "tokenizer.ggml.merges"):
        field = reference.fields[key]
        expected = [bytes(field.parts[i]).decode("utf-8") for i in field.data]
        assert ours.meta(key) == expected
    assert ours.meta("tokenizer.ggml.tokens") == TOKENS and ours.meta("general.name") == "tiny"


def test_a_file_cut_inside_its_vocabulary_is_refused(tiny_file, tmp_path):
    data = tiny_file.read_bytes()
    cut = data.index("日本".encode()) + 2  # inside a string of the token list
    short = tmp_path / "short.gguf"
    short.write_bytes(data[:cut])
    with pytest.raises(PretrainedError, match="not a GGUF file"):
        GGUFFile(short)
