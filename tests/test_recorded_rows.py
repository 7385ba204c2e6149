"""A language model's greedy frame with the prompt run through the network once
(`model.inference.recorded_rows`): a recorded pass over the prompt fills the key/value cache,
the continuation is generated from it, and its rows are recorded in one more cached pass. What
the panels get must be what recording every step without the cache gives."""
import pytest
import torch

import support
from frame_checks import assert_same_forward, assert_same_run, assert_same_trace
from model import bundled_checkpoints, compute_frame, load_checkpoint
from model.inference.generation import generate
from model.inference.kv_cache import KVCache
from model.inference.recorded_rows import RowRecording, record_greedy_continuation
from model.interpret.decode_run import recorded_greedy_run
from model.nn.hooks import hooks, record


@pytest.fixture(scope="module")
def gpt():
    return load_checkpoint(bundled_checkpoints()["gpt-facts"])


@pytest.fixture(scope="module")
def tiny_llama():
    """RoPE, grouped-query attention (2 key/value heads for 4 query heads), RMSNorm, SwiGLU."""
    return support.tiny_llama()


def uncached_continuation(bundle, text: str, max_new: int) -> list[int]:
    tok = bundle.tgt_tokenizer
    ids = [tok.bos_id] + bundle.encode_source(text)[1].ids
    new = generate(bundle.model, ids, max_new, eos_id=tok.eos_id, never=(tok.bos_id, bundle.config.pad_id),
                   use_cache=False)
    return new[:-1] if new and new[-1] == tok.eos_id else new


@pytest.mark.parametrize("text", ["the cow", "paris is the capital of"])
def test_the_frame_equals_recording_every_step_without_the_cache(gpt, text):
    """The bundled GPT-like model (sinusoidal positions, full multi-head attention), its own
    continuation ending with <eos> before the default length: the run and forward computed with
    the prompt once against `compute_frame` inside hooks (every step recorded, no cache)."""
    ours_run, ours_forward = recorded_greedy_run(gpt, text, None, gpt.encode_source(text))
    with hooks(gpt.model, {}):
        full = compute_frame(gpt, text)
    assert_same_forward(ours_forward, full.forward)
    assert_same_run(ours_run, full.decode)
    max_new = gpt.default_max_output(len(gpt.encode_source(text)[1].ids))
    assert ours_forward.output_text == gpt.tgt_tokenizer.decode(uncached_continuation(gpt, text, max_new))


@pytest.mark.parametrize("max_new", [1, 3])
def test_a_continuation_cut_at_its_length_equals_the_full_recorded_forward(gpt, max_new):
    """No <eos> within `max_new` tokens: every row is recorded, the last one the token that
    ended the continuation (the full forward reads it too)."""
    text = "the cow"
    encoded = gpt.encode_source(text)
    new, ended, forward = record_greedy_continuation(gpt, encoded, max_new)
    assert new == uncached_continuation(gpt, text, max_new) and len(new) == max_new and not ended
    assert_same_forward(forward, gpt.run(text, encoded=encoded, output_ids=new))


def test_rows_recorded_over_cached_forwards_equal_one_recorded_forward(tiny_llama):
    """Rotated queries and keys, shared key/value heads: 5 + 2 + 1 rows through the cache, into
    a recording of room for 10, against `record` over one forward of the 8 tokens."""
    ids = torch.tensor([[1, 7, 3, 9, 4, 12, 30, 8]])
    with torch.no_grad(), record(tiny_llama) as full:
        tiny_llama(None, ids)
    recording, cache = RowRecording(tiny_llama, 10), KVCache(tiny_llama)
    with torch.no_grad():
        for start, end in ((0, 5), (5, 7), (7, 8)):
            with recording.rows(start, end - start):
                tiny_llama.project(tiny_llama.decode(None, None, ids[:, start:end], cache=cache))
    assert_same_trace(recording.trace(), full)
    scores = recording.trace()["decoder.layers.1.self_attn.scores"].tensor
    assert scores[0, :, :5, 5:].abs().sum() > 0  # earlier rows' scores against later keys, as the full pass has them


def test_a_recording_refuses_rows_that_do_not_continue_it(tiny_llama):
    recording = RowRecording(tiny_llama, 6)
    with pytest.raises(ValueError, match="do not continue"), recording.rows(2, 3):
        pass
    with pytest.raises(ValueError, match="do not continue"), recording.rows(0, 7):
        pass
    with pytest.raises(ValueError, match="nothing was recorded"):
        recording.trace()


def test_a_truncated_cache_continues_from_where_it_was_cut(tiny_llama):
    ids = torch.tensor([[1, 7, 3, 9, 4, 12]])
    with torch.no_grad():
        cache = KVCache(tiny_llama)
        tiny_llama.decode(None, None, ids[:, :4], cache=cache)
        tiny_llama.decode(None, None, torch.tensor([[40, 41]]), cache=cache)  # a branch, then cut off
        cache.truncate(4)
        again = tiny_llama.decode(None, None, ids[:, 4:], cache=cache)
        whole = tiny_llama.decode(None, None, ids)
    torch.testing.assert_close(again, whole[:, 4:])
    assert cache.length == 6 and cache.ids.tolist() == ids.tolist()
    with pytest.raises(ValueError, match="cannot be cut"):
        cache.truncate(7)


def test_generate_continues_a_cache_that_holds_the_prompt(tiny_llama):
    ids = [1, 7, 3, 9, 4]
    expected = generate(tiny_llama, ids, 6, use_cache=False)
    cache = KVCache(tiny_llama)
    with torch.no_grad():
        tiny_llama.decode(None, None, torch.tensor([ids[:-1]]), cache=cache)
    assert generate(tiny_llama, ids[-1:], 6, cache=cache) == expected and cache.length == len(ids) + 5
    with pytest.raises(ValueError, match="use_cache=True"):
        generate(tiny_llama, ids[-1:], 2, cache=cache, use_cache=False)
