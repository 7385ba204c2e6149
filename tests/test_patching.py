"""Activation patching and direct logit attribution (model.interpret.patching, .logit_attribution).

Checked against forwards that run outside any hook: the unpatched models' own logits, a
decoder-only forward written layer by layer with one MLP output replaced, and an encoder whose
attention is spelled out by hand with one head's context replaced. Direct logit attribution's
terms must add up to the model's own logit difference, for post-LN and pre-LN models.
"""
from dataclasses import replace

import pytest
import torch

from model import activation_patching, direct_logit_attribution
from model.inference.bundle import ModelBundle
from model.interpret.patching import PatchingError
from model.io.checkpoints import bundled_checkpoints, load_checkpoint
from model.nn.attention import attention
from model.nn.transformer import Transformer, decoder_mask, padding_mask

PAIRS = {"reverse": ("abcde", "abcdx"), "gpt-facts": ("the duck says", "the cow says"),
         "bert-facts": ("the [MASK] says moo", "the [MASK] says quack")}


@pytest.fixture(scope="module")
def bundles():
    torch.set_num_threads(1)
    found = bundled_checkpoints()
    return {name: load_checkpoint(found[name]) for name in PAIRS}


@pytest.fixture(scope="module")
def results(bundles):
    return {name: activation_patching(bundles[name], *PAIRS[name]) for name in PAIRS}


def plain_logits(bundle, text):
    """The measured position's logits from an unhooked forward."""
    src, _ = bundle.encode_source(text)
    kind = bundle.model_kind
    with torch.no_grad():
        if kind.continues_prompt:
            seq = torch.cat([torch.tensor([[bundle.tgt_tokenizer.bos_id]]), src], 1)
            return bundle.model(None, seq)[0, -1]
        if kind.has_decoder:
            return bundle.model(src, torch.tensor([[bundle.tgt_tokenizer.bos_id]]))[0, -1]
        return bundle.model(src)[0, src[0].tolist().index(6)]  # bert-facts: [MASK] is id 6


def test_the_unpatched_differences_are_the_models_own(bundles, results):
    for name, (clean, corrupted) in PAIRS.items():
        r = results[name]
        for text, measured in ((clean, r.clean_diff), (corrupted, r.corrupted_diff)):
            logits = plain_logits(bundles[name], text)
            assert measured == pytest.approx(float(logits[r.answer_id] - logits[r.wrong_id]), abs=1e-4)
        assert r.answer_id == int(plain_logits(bundles[name], clean).argmax())


def test_patching_a_position_the_output_cannot_read_changes_nothing(results):
    """The last layer's stream at any position but the measured one never reaches its logits."""
    for name, key in (("gpt-facts", "decoder.resid"), ("bert-facts", "encoder.resid")):
        r = results[name]
        last = r.map(key).logit_diff[-1]
        others = [t for t in range(len(last)) if t != r.position]
        assert others and all(last[t] == pytest.approx(r.corrupted_diff, abs=1e-4) for t in others)


def test_patching_the_last_layers_stream_gives_the_clean_logits(bundles, results):
    for name, (clean, _) in PAIRS.items():
        r = results[name]
        m = r.map("decoder.resid" if bundles[name].model_kind.has_decoder else "encoder.resid")
        assert m.logit_diff[-1, r.position] == pytest.approx(r.clean_diff, abs=1e-4)
        assert m.restored[-1, r.position] == pytest.approx(1.0, abs=1e-5)
        clean_probs = plain_logits(bundles[name], clean).softmax(-1)
        top = clean_probs.topk(5)
        assert m.top_ids[-1, r.position].tolist() == top.indices.tolist()
        assert torch.allclose(torch.from_numpy(m.top_probs[-1, r.position]), top.values, atol=1e-5)


def gpt_by_hand(model, tgt, mlp_layer=None, position=None, value=None):
    """Decoder-only post-LN forward, layer by layer, no hooks; returns (last logits, MLP outputs)."""
    x = model.embed(tgt, model.tgt_embed, "decoder")
    mask = decoder_mask(tgt, model.config.pad_id)
    outputs = []
    for l, layer in enumerate(model.decoder.layers):
        x = layer.add_norm1(x, lambda y, layer=layer: layer.self_attn(y, y, y, mask))
        out = layer.ffn(x)
        if l == mlp_layer:
            out = out.clone()
            out[:, position] = value
        outputs.append(out)
        x = layer.add_norm3(x, lambda _y, out=out: out)
    return model.generator(x)[0, -1], outputs


def test_one_patched_mlp_output_equals_a_hand_written_forward(bundles, results):
    bundle, r = bundles["gpt-facts"], results["gpt-facts"]
    ids = {t: torch.cat([torch.tensor([[bundle.tgt_tokenizer.bos_id]]), bundle.encode_source(t)[0]], 1)
           for t in PAIRS["gpt-facts"]}
    clean, corrupted = (ids[t] for t in PAIRS["gpt-facts"])
    m = r.map("decoder.ffn.mlp")
    with torch.no_grad():
        _, clean_mlp = gpt_by_hand(bundle.model, clean)
        for layer, position in ((0, 2), (1, 3), (0, 3)):
            logits, _ = gpt_by_hand(bundle.model, corrupted, layer, position, clean_mlp[layer][0, position])
            assert m.logit_diff[layer, position] == pytest.approx(
                float(logits[r.answer_id] - logits[r.wrong_id]), abs=1e-4)


def reverse_by_hand(model, src, tgt, layer_index, head, clean_context=None):
    """Encoder-decoder forward with the encoder's attention spelled out (no hooks): head `head`
    of encoder layer `layer_index` takes `clean_context`; returns (first logits, that context)."""
    B, T = src.shape
    n_heads, d_k = model.config.n_heads, model.config.d_model // model.config.n_heads
    mask = padding_mask(src, model.config.pad_id)
    x = model.embed(src, model.src_embed, "encoder")
    seen = {}
    for l, layer in enumerate(model.encoder.layers):
        m = layer.self_attn

        def attend(y, m=m, l=l):
            q, k, v = (w(y).view(B, T, n_heads, d_k).transpose(1, 2) for w in (m.w_q, m.w_k, m.w_v))
            context, _ = attention(q, k, v, mask)
            if l == layer_index:
                seen["context"] = context
                if clean_context is not None:
                    context = context.clone()
                    context[:, head] = clean_context[:, head]
            return m.w_o(context.transpose(1, 2).reshape(B, T, -1))

        x = layer.add_norm2(layer.add_norm1(x, attend), layer.ffn)
    logits = model.project(model.decode(x, src, tgt))
    return logits[0, -1], seen["context"]


def test_one_patched_head_equals_a_hand_written_forward(bundles, results):
    bundle, r = bundles["reverse"], results["reverse"]
    clean, corrupted = (bundle.encode_source(t)[0] for t in PAIRS["reverse"])
    tgt = torch.tensor([[bundle.tgt_tokenizer.bos_id]])
    m = r.map("encoder.self_attn.head")
    with torch.no_grad():
        for layer, head in ((1, 3), (0, 0), (1, 1)):
            _, context = reverse_by_hand(bundle.model, clean, tgt, layer, head)
            logits, _ = reverse_by_hand(bundle.model, corrupted, tgt, layer, head, context)
            assert m.logit_diff[layer, head] == pytest.approx(float(logits[r.answer_id] - logits[r.wrong_id]),
                                                              abs=1e-4)


def test_the_changed_letter_is_carried_at_its_position_only(results):
    """reverse: the first output is the last letter, so (in a model trained to reverse) the last
    source position's stream carries nearly all of it, in every encoder layer."""
    stream = results["reverse"].map("encoder.resid").restored
    assert stream[:, -1].min() > 0.99
    assert abs(stream[:, :-1]).max() < 0.01


def pre_ln(bundle):
    cfg = replace(bundle.config, norm_first=True)
    torch.manual_seed(0)
    return ModelBundle(Transformer(cfg).eval(), bundle.src_tokenizer, bundle.tgt_tokenizer, dict(bundle.task))


@pytest.mark.parametrize("name", list(PAIRS))
def test_direct_logit_attribution_sums_to_the_logit_difference(bundles, name):
    for bundle in (bundles[name], pre_ln(bundles[name])):
        clean = PAIRS[name][0]
        dla = direct_logit_attribution(bundle, clean)
        logits = plain_logits(bundle, clean)
        order = logits.argsort(descending=True)
        assert dla.total == pytest.approx(float(logits[order[0]] - logits[order[1]]), abs=1e-4)
        assert dla.accounted == pytest.approx(dla.total, abs=1e-4)
        assert len(dla.labels) == len(dla.values) == len(dla.kinds)
        assert sum(k == "mlp" for k in dla.kinds) == len(getattr(bundle.model, "decoder" if bundle.config.has_decoder
                                                                  else "encoder").layers)


def test_patching_a_pre_ln_models_last_stream_gives_the_clean_difference(bundles):
    bundle = pre_ln(bundles["gpt-facts"])
    r = activation_patching(bundle, *PAIRS["gpt-facts"], sites=("resid",))
    assert r.map("decoder.resid").restored[-1, r.position] == pytest.approx(1.0, abs=1e-4)


@pytest.mark.parametrize("name, clean, corrupted, words", [
    ("gpt-facts", "the duck says", "the cow", "same number of tokens"),
    ("reverse", "abcde", "abcd", "same number of tokens"),
    ("bert-facts", "the cow says moo", "the pig says oink", r"has no \[MASK\]"),
    ("bert-facts", "the [MASK] says moo", "[MASK] cow says moo", "same place"),
])
def test_inputs_that_do_not_line_up_are_refused_clearly(bundles, name, clean, corrupted, words):
    with pytest.raises(PatchingError, match=words):
        activation_patching(bundles[name], clean, corrupted)


def test_unknown_sites_and_tokens_are_refused_clearly(bundles):
    with pytest.raises(PatchingError, match="choose from"):
        activation_patching(bundles["gpt-facts"], *PAIRS["gpt-facts"], sites=("heads",))
    with pytest.raises(PatchingError, match="not one token"):
        activation_patching(bundles["gpt-facts"], *PAIRS["gpt-facts"], answer="zebra")


def test_the_progress_run_reports_up_to_its_total_and_returns_the_plain_results(bundles, results):
    """`compute_patching` (the panel's worker) reports monotone progress ending one short of its
    total before the attribution, and returns what the plain functions compute."""
    from model.interpret.patching_view import PatchingRequest, compute_patching

    bundle = bundles["gpt-facts"]
    steps = compute_patching(PatchingRequest(bundle, "gpt-facts", *PAIRS["gpt-facts"], None, None))
    reports = []
    try:
        while True:
            reports.append(next(steps))
    except StopIteration as stop:
        view = stop.value
    done = [d for d, _total, _what in reports]
    assert done == sorted(done) and reports[-1][0] == reports[-1][1] - 1
    plain = results["gpt-facts"]
    assert (view.result.answer_id, view.result.clean_diff) == (plain.answer_id, pytest.approx(plain.clean_diff))
    dla = direct_logit_attribution(bundle, PAIRS["gpt-facts"][0], plain.answer_id, plain.wrong_id)
    assert view.dla.labels == dla.labels and torch.allclose(torch.as_tensor(view.dla.values), torch.as_tensor(dla.values))
