"""Column-major, joined Linear weights (model/nn/weight_layout.py): the layout a loaded GGUF model
decodes with computes what the plain layout computes, and every hook site still sees its own
tensor (q, k, v, gate and up apart), checked against an untouched copy of the same model."""
import copy

import pytest
import torch

import support
from model.inference.generation import generate
from model.inference.kv_cache import KVCache
from model.nn.hooks import record
from model.nn.transformer import Transformer
from model.nn.weight_layout import is_column_major, joined_linear, store_weights_transposed


def _llama(bias: bool, kv_heads: int) -> Transformer:
    model = support.tiny_llama(bias, kv_heads)
    if bias:  # non-zero biases, so a wrong join of them would show
        with torch.no_grad():
            for name, p in model.named_parameters():
                if name.endswith(".bias"):
                    p.normal_()
    return model


@pytest.fixture(scope="module", params=[(False, 2), (True, 4)], ids=["gqa-no-bias", "mha-bias"])
def pair(request):
    plain = _llama(*request.param)
    return plain, store_weights_transposed(copy.deepcopy(plain))


IDS = torch.tensor([[5, 9, 3, 17, 22, 8, 41, 7, 12]])


def test_the_layout_keeps_every_weight_its_value_and_every_tie(pair):
    plain, laid = pair
    theirs = plain.state_dict()
    for name, tensor in laid.state_dict().items():
        assert torch.equal(tensor, theirs[name]), name
    assert laid.generator.weight is laid.tgt_embed.lut.weight
    linears = [m for m in laid.modules() if isinstance(m, torch.nn.Linear)]
    assert linears and all(is_column_major(m.weight) for m in linears)
    attn, ffn = laid.decoder.layers[0].self_attn, laid.decoder.layers[0].ffn
    x = torch.randn(1, 3, 32)
    with torch.no_grad():
        for layers in ((attn.w_q, attn.w_k, attn.w_v), (attn.w_k, attn.w_v), (ffn.w_1, ffn.w_3)):
            parts = joined_linear(x, layers)  # one product over the side-by-side matrix
            assert parts is not None
            for part, layer in zip(parts, layers):
                torch.testing.assert_close(part, torch.nn.functional.linear(x, layer.weight, layer.bias))


def test_logits_and_the_cached_greedy_run_equal_the_plain_layouts(pair):
    plain, laid = pair
    with torch.no_grad():
        torch.testing.assert_close(laid(None, IDS), plain(None, IDS), atol=1e-5, rtol=1e-5)
    assert generate(laid, IDS, 12) == generate(plain, IDS, 12)
    # one cached step at a time, with a padding id in the prompt (the step must then mask it)
    prompt = IDS.clone()
    prompt[0, 3] = laid.config.pad_id
    for model in (plain, laid):
        cache = KVCache(model)
        with torch.inference_mode():
            steps = [model.project(model.decode(None, None, prompt[:, :5], cache=cache))[:, -1]]
            steps += [model.project(model.decode(None, None, prompt[:, i:i + 1], cache=cache))[:, -1]
                      for i in range(5, prompt.size(1))]
        model.steps = torch.cat(steps)
    torch.testing.assert_close(laid.steps, plain.steps, atol=1e-5, rtol=1e-5)
    with torch.no_grad():  # and those steps are the full forward's rows
        torch.testing.assert_close(laid.steps, laid(None, prompt)[0, 4:], atol=1e-5, rtol=1e-5)


def test_a_recording_sees_q_k_v_gate_and_up_apart_with_the_plain_layouts_numbers(pair):
    plain, laid = pair
    with torch.no_grad(), record(plain) as theirs, record(laid) as ours:
        plain(None, IDS)
        laid(None, IDS)
    assert set(ours.names()) == set(theirs.names())
    base = "decoder.layers.1."
    for local in ("self_attn.q", "self_attn.k", "self_attn.v", "self_attn.q_rot", "self_attn.k_rot",
                  "self_attn.weights", "ffn.gate", "ffn.up", "ffn.hidden"):
        assert base + local in ours, local
    heads, kv = laid.config.n_heads, laid.config.kv_heads
    assert ours[base + "self_attn.q"].tensor.shape[1] == heads and ours[base + "self_attn.k"].tensor.shape[1] == kv
    for name in theirs.names():
        torch.testing.assert_close(ours[name].tensor, theirs[name].tensor, atol=1e-5, rtol=1e-5, msg=name)


def test_training_gets_the_plain_layouts_gradients(pair):
    plain, laid = pair
    grads = []
    for model in (copy.deepcopy(plain), copy.deepcopy(laid)):
        model.train()
        logits = model(None, IDS[:, :-1])
        torch.nn.functional.cross_entropy(logits.flatten(0, 1), IDS[0, 1:]).backward()
        grads.append({n: p.grad for n, p in model.named_parameters()})
    for name, grad in grads[0].items():
        torch.testing.assert_close(grads[1][name], grad, atol=1e-5, rtol=1e-5, msg=name)


def test_a_cast_model_no_longer_joins_and_still_computes_the_same(pair):
    plain, laid = pair
    cast = copy.deepcopy(laid).double()
    attn = cast.decoder.layers[0].self_attn
    with torch.no_grad():
        assert joined_linear(torch.randn(1, 1, 32, dtype=torch.float64), (attn.w_q, attn.w_k, attn.w_v)) is None
        torch.testing.assert_close(cast(None, IDS).float(), plain(None, IDS), atol=1e-5, rtol=1e-5)
