"""The parts of a Llama-style decoder, without SmolLM2's file: rotary positions, grouped-query
attention, the cached step-by-step decoder on a tiny model, and what the GGUF loader refuses.
(tests/test_smollm2.py checks the whole model against transformers.)"""
import importlib.util
from pathlib import Path

import pytest
import torch

import support
from model.io.pretrained.files import PretrainedError
from model.nn.attention import MultiHeadAttention
from model.nn.hooks import record
from model.nn.positional import apply_rope, rope_angles

needs_gguf = pytest.mark.skipif(importlib.util.find_spec("gguf") is None, reason="the `gguf` package is not installed")


# -- what the loader refuses ----------------------------------------------------------------------
def _tiny_gguf(path: Path, architecture: str) -> Path:
    import gguf
    writer = gguf.GGUFWriter(str(path), architecture)
    writer.add_block_count(1)
    writer.add_embedding_length(8)
    writer.add_tensor("token_embd.weight", torch.zeros(4, 8).numpy())
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


@needs_gguf
def test_another_architecture_is_refused_naming_the_supported_one(tmp_path):
    from model.io.checkpoints import load_checkpoint
    from model.io.pretrained import load_pretrained
    file = _tiny_gguf(tmp_path / "tiny.gguf", "gpt2")
    for load in (load_pretrained, load_checkpoint):  # --checkpoint path/to/model.gguf routes here too
        with pytest.raises(PretrainedError, match=r"'gpt2' is not supported.*'llama'"):
            load(file)


@needs_gguf
def test_a_file_that_is_not_gguf_is_refused(tmp_path):
    from model.io.pretrained import load_pretrained
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"not a gguf file at all")
    with pytest.raises(PretrainedError, match="not a GGUF file"):
        load_pretrained(bad)


# -- the parts: rotary positions, grouped-query attention -----------------------------------------
def test_rope_scores_depend_only_on_the_distance():
    torch.manual_seed(0)
    q, k = torch.randn(1, 64), torch.randn(1, 64)

    def score(m: int, n: int) -> float:
        return float(apply_rope(q, torch.tensor([m]), 1e5) @ apply_rope(k, torch.tensor([n]), 1e5).T)

    assert score(7, 3) == pytest.approx(score(107, 103), abs=1e-4)
    assert score(7, 3) == pytest.approx(score(4, 0), abs=1e-4)
    assert score(7, 3) != pytest.approx(score(3, 7), abs=1e-3)
    rotated = apply_rope(q, torch.tensor([5]), 1e5)
    torch.testing.assert_close(rotated.norm(), q.norm())  # a rotation keeps the length


def test_rope_turns_each_pair_by_its_angle():
    x = torch.zeros(1, 8)
    x[0, 2] = 1.0  # the unit vector of pair 1's first axis
    angles = rope_angles(torch.tensor([3]), 8, 10000.0)
    theta = 3 * 10000.0 ** (-2 / 8)
    assert float(angles[0, 1]) == pytest.approx(theta)
    out = apply_rope(x, torch.tensor([3]), 10000.0)
    torch.testing.assert_close(out[0, 2:4], torch.tensor([torch.cos(torch.tensor(theta)), torch.sin(torch.tensor(theta))]))


def test_grouped_query_attention_equals_full_attention_with_repeated_keys_and_values():
    torch.manual_seed(0)
    d_model, heads, kv, d_k = 32, 8, 2, 4
    gqa = MultiHeadAttention(d_model, heads, kv_heads=kv, bias=False).eval()
    mha = MultiHeadAttention(d_model, heads, bias=False).eval()
    with torch.no_grad():
        for name in ("w_q", "w_o"):
            getattr(mha, name).weight.copy_(getattr(gqa, name).weight)
        for name in ("w_k", "w_v"):  # each key/value head's rows, once per query head of its group
            rows = getattr(gqa, name).weight.view(kv, d_k, d_model)
            getattr(mha, name).weight.copy_(rows.repeat_interleave(heads // kv, dim=0).reshape(d_model, d_model))
    x = torch.randn(2, 5, d_model)
    mask = torch.ones(5, 5, dtype=torch.bool).tril()[None, None]
    cos_sin = (torch.cos(rope_angles(torch.arange(5), d_k)), torch.sin(rope_angles(torch.arange(5), d_k)))
    with torch.no_grad():
        expected = mha(x, x, x, mask, cos_sin)
        torch.testing.assert_close(gqa(x, x, x, mask, cos_sin), expected)  # the fused kernel
        with record(gqa):  # Eq. 1 spelled out, K and V expanded as a step
            torch.testing.assert_close(gqa(x, x, x, mask, cos_sin), expected)


def test_step_by_step_decoding_with_the_cache_shows_the_full_prefix_pass(tiny_llama):
    """The viewer's steps: cached (one new row per step) against the whole prefix each step
    (forced by an active, empty set of hooks): the same tokens, distributions and attention."""
    from model.inference.decoding import decode_steps
    from model.nn.hooks import hooks
    cached = list(decode_steps(tiny_llama, None, 1, 2, 8, prompt=[5, 6, 7]))
    with hooks(tiny_llama, {}):
        full = list(decode_steps(tiny_llama, None, 1, 2, 8, prompt=[5, 6, 7]))
    assert [s.chosen for s in cached] == [s.chosen for s in full] and len(cached) == len(full)
    for a, b in zip(cached, full):
        torch.testing.assert_close(a.self_attention, b.self_attention)
        torch.testing.assert_close(a.model_probs, b.model_probs)
        assert a.prefix == b.prefix


@pytest.fixture(scope="module")
def tiny_llama():
    return support.tiny_llama()


def test_a_tiny_llama_counts_its_parameters_as_estimated(tiny_llama):
    config = tiny_llama.config
    norms = (2 * config.n_decoder_layers + 1) * config.d_model  # RMSNorm gains: not in the estimate
    assert tiny_llama.num_parameters() == config.parameter_estimate() + norms
