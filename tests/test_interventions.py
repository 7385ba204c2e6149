"""Head surgery (model.interpret.interventions) against computations written out in the tests."""
import math
import threading

import pytest
import torch

from model.inference.decoding import decode_steps, greedy_decode
from model.inference.teacher_forcing import decoder_input, parallel_pass
from model.interpret.interventions import InterventionError, format_heads, intervene, parse_heads
from model.nn.hooks import record
from model.nn.transformer import padding_mask

SRC = torch.tensor([[5, 6, 7, 8, 9], [4, 7, 6, 0, 0]])  # the second row is padded
TGT = torch.tensor([[1, 4, 5, 6], [1, 7, 8, 9]])


def by_hand_attention(mha, x_q, x_kv, mask, zero_head=None):
    """MultiHead(Q, K, V) of Section 3.2.2 written out head by head, one head's slice of the
    concatenation set to zero."""
    B, T_q, d = x_q.shape
    h, d_k = mha.n_heads, mha.d_k
    heads = []
    for i in range(h):
        cols = slice(i * d_k, (i + 1) * d_k)
        q = x_q @ mha.w_q.weight[cols].T + mha.w_q.bias[cols]
        k = x_kv @ mha.w_k.weight[cols].T + mha.w_k.bias[cols]
        v = x_kv @ mha.w_v.weight[cols].T + mha.w_v.bias[cols]
        scores = q @ k.transpose(1, 2) / math.sqrt(d_k)
        scores = scores.masked_fill(~mask[:, 0], float("-inf"))
        head = scores.softmax(-1) @ v
        heads.append(torch.zeros_like(head) if i == zero_head else head)
    return torch.cat(heads, -1) @ mha.w_o.weight.T + mha.w_o.bias


def test_zeroing_a_head_equals_the_layer_recomputed_by_hand(make_model):
    model = make_model()
    with torch.no_grad(), record(model) as plain:
        model(SRC, TGT)
    layer = model.encoder.layers[1]
    x = plain["encoder.layers.0.add_norm2.norm"].tensor  # what enters encoder layer 1
    mask = padding_mask(SRC, 0)
    with torch.no_grad():
        attn = by_hand_attention(layer.self_attn, x, x, mask, zero_head=2)
        y = layer.add_norm1.norm(x + attn)
        expected = layer.add_norm2.norm(y + layer.ffn.w_2(torch.relu(layer.ffn.w_1(y))))
        with intervene(model, {("encoder", 1, 2): "zero"}), record(model) as cut:
            logits = model(SRC, TGT)
        fast = None
        with intervene(model, {("encoder", 1, 2): "zero"}):
            fast = model(SRC, TGT)  # the unrecorded fast path edits the same way
        after = model(SRC, TGT)
    torch.testing.assert_close(cut["encoder.layers.1.add_norm2.norm"].tensor, expected, atol=1e-5, rtol=1e-5)
    context = cut["encoder.layers.1.self_attn.context"].tensor
    assert torch.all(context[:, 2] == 0) and context[:, 1].abs().sum() > 0  # the record shows the edit
    torch.testing.assert_close(fast, logits, atol=1e-5, rtol=1e-5)
    assert not torch.allclose(after, logits, atol=1e-4)  # and leaving the block restores the model
    torch.testing.assert_close(after, model(SRC, TGT).detach())


def test_uniform_attention_rows_are_one_over_allowed_keys(make_model):
    model = make_model(1)
    heads = {("encoder", 0, 1): "uniform", ("decoder_self", 1, 3): "uniform", ("cross", 0, 0): "uniform"}
    with torch.no_grad(), intervene(model, heads), record(model) as trace:
        model(SRC, TGT)
    enc = trace.attention("encoder", 0)[:, 1]  # (B, S, S)
    assert torch.allclose(enc[0], torch.full((5, 5), 1 / 5))
    assert torch.allclose(enc[1, :, :3], torch.full((5, 3), 1 / 3)) and torch.all(enc[1, :, 3:] == 0)
    dec = trace.attention("decoder_self", 1)[0, 3]  # (T, T): row i averages keys 0..i
    expected = torch.tril(torch.ones(4, 4)) / torch.arange(1, 5)[:, None]
    torch.testing.assert_close(dec, expected)
    cross = trace.attention("cross", 0)[1, 0]  # the padded source: 1/3 on its real tokens
    assert torch.allclose(cross[:, :3], torch.full((4, 3), 1 / 3)) and torch.all(cross[:, 3:] == 0)
    assert not torch.allclose(trace.attention("encoder", 0)[:, 0], enc[:, :1].expand(-1, 5, -1))  # others untouched


def test_mean_is_over_real_source_positions_and_a_running_mean_in_the_decoder(make_model):
    model = make_model(2)
    with torch.no_grad(), record(model) as plain:
        model(SRC, TGT)
    heads = {("encoder", 0, 0): "mean", ("decoder_self", 0, 2): "mean"}
    with torch.no_grad(), intervene(model, heads), record(model) as cut:
        model(SRC, TGT)
    before = plain["encoder.layers.0.self_attn.context"].tensor[:, 0]  # (B, S, d_k)
    after = cut["encoder.layers.0.self_attn.context"].tensor[:, 0]
    torch.testing.assert_close(after[1], before[1, :3].mean(0).expand(5, -1))  # padding left out
    dec_before = plain["decoder.layers.0.self_attn.context"].tensor[0, 2]  # (T, d_k)
    dec_after = cut["decoder.layers.0.self_attn.context"].tensor[0, 2]
    torch.testing.assert_close(dec_after[2], dec_before[:3].mean(0))
    # no position reads the future, so step-by-step decoding still equals the parallel pass
    with torch.no_grad(), intervene(model, heads):
        steps = list(decode_steps(model, SRC[:1], 1, 2, 6))
        tf = parallel_pass(model, SRC[:1], decoder_input(steps), causal=True)
    for t, step in enumerate(steps):
        torch.testing.assert_close(step.model_probs, tf.probs[t], atol=1e-5, rtol=1e-4)


def test_decoding_and_variants_run_with_the_intervention(make_model):
    model = make_model(3)
    heads = {("cross", 0, h): "zero" for h in range(4)} | {("cross", 1, h): "zero" for h in range(4)}
    with intervene(model, heads):
        a = greedy_decode(model, SRC[:1], 1, 2, 8)
        b = greedy_decode(model, SRC[1:], 1, 2, 8)
    assert torch.equal(a, b)  # with every cross head zeroed, the output cannot depend on the source
    gpt = make_model(4, kind="decoder_only", n_encoder_layers=0, src_vocab_size=11)
    bert = make_model(5, kind="encoder_only", n_decoder_layers=0, norm_first=True, positional="learned")
    with torch.no_grad():
        for m, kind, args in ((gpt, "decoder_self", (None, TGT)), (bert, "encoder", (SRC,))):
            plain = m(*args)
            with intervene(m, {(kind, 0, 1): "uniform", (kind, 1, 0): "mean"}):
                assert not torch.allclose(m(*args), plain, atol=1e-4)


def test_other_threads_never_see_the_intervention(make_model):
    model = make_model(6)
    with torch.no_grad():
        plain = model(SRC, TGT)
        seen = {}
        with intervene(model, {("encoder", 0, h): "zero" for h in range(4)}):
            worker = threading.Thread(target=lambda: seen.setdefault("x", model(SRC, TGT)))
            worker.start()
            worker.join()
            inside = model(SRC, TGT)
    torch.testing.assert_close(seen["x"], plain)
    assert not torch.allclose(inside, plain, atol=1e-4)


@pytest.mark.parametrize("heads, words", [
    ({("decoder", 0, 0): "zero"}, "unknown attention kind"),
    ({("encoder", 2, 0): "zero"}, "out of range"),
    ({("encoder", 0, 4): "zero"}, "head 4 is out of range"),
    ({("encoder", 0, 0): "drop"}, "unknown edit"),
    ({("cross", 0, 0): "zero"}, "no cross attention"),
])
def test_bad_heads_are_refused_clearly(make_model, heads, words):
    model = make_model(kind="decoder_only", n_encoder_layers=0) if ("cross", 0, 0) in heads else make_model()
    with pytest.raises(InterventionError, match=words), intervene(model, heads):
        pass


def test_text_form_round_trips():
    heads = parse_heads("encoder:0:1=zero, cross:1:0=uniform")
    assert heads == {("encoder", 0, 1): "zero", ("cross", 1, 0): "uniform"}
    assert parse_heads(format_heads(heads)) == heads
    for bad in ("encoder:0=zero", "enc:0:1=zero", "encoder:a:1=zero", "encoder:0:1=nope"):
        with pytest.raises(InterventionError):
            parse_heads(bad)
