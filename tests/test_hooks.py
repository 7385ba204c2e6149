"""One hook mechanism (model.nn.hooks): recording, head surgery and patching are hook sets on the
same named sites; the fused kernel runs only where no hook is set."""
import torch
import torch.nn.functional as F

from model.interpret.interventions import intervene
from model.nn.hooks import hooks, patch, record
from model.nn.kinds import ATTENTION_KINDS, AttentionKind

SRC = torch.tensor([[5, 6, 7, 8, 9], [4, 7, 6, 0, 0]])  # the second row is padded
TGT = torch.tensor([[1, 4, 5, 6], [1, 7, 8, 9]])


def test_recording_and_head_surgery_share_the_sites_and_compose(make_model):
    """A recording entered *before* the intervention still shows the edited weights and context:
    editing hooks run before reading ones, whatever the order of the `with`s."""
    model = make_model()
    with torch.no_grad(), record(model) as plain:
        model(SRC, TGT)
    heads = {("cross", 1, 2): "uniform", ("encoder", 0, 1): "zero"}
    with torch.no_grad(), record(model) as trace, intervene(model, heads):
        logits = model(SRC, TGT)
    cross = trace.attention("cross", 1)[:, 2]  # (B, T_tgt, T_src)
    assert torch.allclose(cross[0], torch.full((4, 5), 1 / 5))
    assert torch.allclose(cross[1, :, :3], torch.full((4, 3), 1 / 3)) and torch.all(cross[1, :, 3:] == 0)
    torch.testing.assert_close(trace.attention("encoder", 0), plain.attention("encoder", 0))  # "zero" acts after
    context = trace["encoder.layers.0.self_attn.context"].tensor
    assert torch.all(context[:, 1] == 0) and context[:, 0].abs().sum() > 0
    # the context the recording shows is the edited weights times the recorded values
    v = trace["decoder.layers.1.cross_attn.v"].tensor
    torch.testing.assert_close(trace["decoder.layers.1.cross_attn.context"].tensor[:, 2], cross @ v[:, 2])
    torch.testing.assert_close(trace["generator.logits"].tensor, logits)


def test_a_hook_replacing_an_activation_equals_the_forward_written_by_hand(make_model):
    """Replace the last encoder layer's FFN hidden layer of an encoder-only model; the logits
    must be the rest of that layer computed by hand from the replacement."""
    model = make_model(kind="encoder_only", n_decoder_layers=0)
    replacement = torch.randn(2, 5, 64)
    with torch.no_grad():
        with record(model) as plain:
            model(SRC)
        with hooks(model, {"encoder.layers.1.ffn.hidden": lambda t, site: replacement}):
            logits = model(SRC)
        layer = model.encoder.layers[1]
        x = plain["encoder.layers.1.add_norm1.norm"].tensor  # what enters the FFN (unchanged upstream)
        by_hand = model.generator(layer.add_norm2.norm(x + layer.ffn.w_2(replacement)))
    torch.testing.assert_close(logits, by_hand, atol=1e-6, rtol=1e-6)
    assert not torch.allclose(logits, plain["generator.logits"].tensor, atol=1e-3)


def test_patching_attention_weights_from_another_run(make_model):
    """`patch` puts another run's weights in: the context is those weights times this run's values."""
    model = make_model()
    other_src = torch.tensor([[9, 8, 7, 6, 5], [6, 7, 4, 0, 0]])
    name = "encoder.layers.0.self_attn.weights"
    with torch.no_grad():
        with record(model) as other:
            model(other_src, TGT)
        with patch(model, {name: other[name].tensor}), record(model) as patched:
            model(SRC, TGT)
    torch.testing.assert_close(patched[name].tensor, other[name].tensor)
    v = patched["encoder.layers.0.self_attn.v"].tensor
    torch.testing.assert_close(patched["encoder.layers.0.self_attn.context"].tensor, other[name].tensor @ v)


def test_the_fused_kernel_runs_wherever_no_hook_is_set(make_model, monkeypatch):
    model = make_model()
    calls = []
    fused = F.scaled_dot_product_attention

    def counting(*args, **kwargs):
        calls.append(1)
        return fused(*args, **kwargs)

    monkeypatch.setattr(F, "scaled_dot_product_attention", counting)
    with torch.no_grad():
        model(SRC, TGT)
        assert len(calls) == 6  # 2 encoder self, 2 decoder self, 2 cross
        calls.clear()
        with record(model):
            model(SRC, TGT)
        assert not calls  # every attention spelled out for the recording
        with intervene(model, {("encoder", 1, 0): "zero"}):
            model(SRC, TGT)
        assert len(calls) == 5  # only the edited sublayer leaves the fused kernel
        calls.clear()
        with hooks(model, {"*.ffn.hidden": lambda t, site: t}):
            model(SRC, TGT)
        assert len(calls) == 6  # a hook elsewhere leaves attention fused


def test_attention_kind_keeps_the_saved_strings():
    assert [k.value for k in AttentionKind] == ["encoder", "decoder_self", "cross"]
    assert AttentionKind("cross") == "cross" and f"{AttentionKind.CROSS}" == "cross"
    assert {"cross": 1}[AttentionKind.CROSS] == 1
    assert ATTENTION_KINDS["decoder_self"] == "decoder.layers.{layer}.self_attn"
    for kind in AttentionKind:
        assert AttentionKind.of_module(kind.module_name(3) + ".weights") == (kind, 3)
    assert AttentionKind.of_module("encoder.layers.0.ffn.hidden") is None
