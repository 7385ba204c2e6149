"""The logit lens (model.interpret.lens): every layer of the output-feeding stack read through the output layer.

Checked against the model's own output (the last layer's lens must be it) and against a
hand computation that runs the layers one by one outside any recording, for post-LN (no
final norm) and pre-LN (the stack's final LayerNorm applied) models of all three kinds.
"""
import pytest
import torch
import torch.nn.functional as F

from model.interpret.frame import compute_frame
from model.interpret.interventions import logit_lens
from model.interpret.lens import LensError, lens_view
from model.io.checkpoints import bundled_checkpoints, load_checkpoint
from model.nn.config import TransformerConfig
from model.nn.hooks import record
from model.nn.transformer import Transformer, decoder_mask, padding_mask


@pytest.fixture(scope="module")
def bundles():
    torch.set_num_threads(1)
    found = bundled_checkpoints()
    return {name: load_checkpoint(found[name]) for name in ("reverse", "bert-facts", "gpt-facts")}


@pytest.mark.parametrize("name, text", [("reverse", "hello"), ("bert-facts", "the cat can [MASK] ."),
                                        ("gpt-facts", "the cat can")])
def test_last_layer_is_the_models_own_output(bundles, name, text):
    bundle = bundles[name]
    trace = bundle.run(text).trace
    lens = logit_lens(trace)
    cfg = bundle.config
    n = cfg.n_decoder_layers if cfg.has_decoder else cfg.n_encoder_layers
    own = trace["generator.probs"].tensor  # (1, T, V), what the model itself predicted
    assert lens.shape == (n, *own.shape)
    assert torch.allclose(lens[-1], own, atol=1e-6)
    assert torch.allclose(lens.sum(-1), torch.ones(lens.shape[:-1]), atol=1e-5)
    assert not torch.allclose(lens[0], own, atol=1e-3)  # an earlier layer is a different reading


def tiny(kind: str, norm_first: bool, seed: int = 0) -> Transformer:
    torch.manual_seed(seed)
    cfg = TransformerConfig(13, 17 if kind == "encoder_decoder" else 13, d_model=16, n_heads=2, d_ff=32,
                            n_encoder_layers=0 if kind == "decoder_only" else 2,
                            n_decoder_layers=0 if kind == "encoder_only" else 3, dropout=0.0, max_len=16,
                            norm_first=norm_first, kind=kind)
    model = Transformer(cfg).eval()
    with torch.no_grad():  # LayerNorm gains and biases away from 1 / 0, so a skipped norm would show
        for name, p in model.named_parameters():
            if "norm" in name or name.endswith("bias"):
                p.add_(torch.randn_like(p) * 0.3)
    return model


def by_hand(model: Transformer, src, tgt, layer: int) -> torch.Tensor:
    """Layer `layer`'s output computed by running the layers one at a time (no recorder),
    then LayerNorm (pre-LN only) and x Wᵀ + b, softmax — written out here."""
    cfg, kind = model.config, model.config.model_kind
    with torch.no_grad():
        if not kind.has_decoder:
            x, stack = model.embed(src, model.src_embed, "encoder"), model.encoder
            run = [lambda h, lay=lay: lay(h, padding_mask(src, cfg.pad_id)) for lay in stack.layers]
        else:
            memory = model.encode(src) if kind.has_encoder else None
            src_mask = padding_mask(src, cfg.pad_id) if kind.has_encoder else None
            x, stack = model.embed(tgt, model.tgt_embed, "decoder"), model.decoder
            run = [lambda h, lay=lay: lay(h, memory, src_mask, decoder_mask(tgt, cfg.pad_id)) for lay in stack.layers]
        for step in run[:layer + 1]:
            x = step(x)
        if cfg.norm_first:
            x = F.layer_norm(x, (cfg.d_model,), stack.norm.weight, stack.norm.bias, cfg.layer_norm_eps)
        logits = x @ model.generator.weight.T + model.generator.bias
    return logits.softmax(-1)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("kind", ["encoder_decoder", "encoder_only", "decoder_only"])
def test_a_middle_layer_matches_a_hand_computation(kind, norm_first):
    model = tiny(kind, norm_first)
    src = torch.tensor([[5, 6, 7, 8, 9]])
    tgt = torch.tensor([[1, 4, 10, 11]])
    with record(model) as trace, torch.no_grad():
        model(None if kind == "decoder_only" else src, None if kind == "encoder_only" else tgt)
    lens = logit_lens(trace)
    assert torch.allclose(lens[1], by_hand(model, src, tgt, 1), atol=1e-5)
    assert torch.allclose(lens[-1], trace["generator.probs"].tensor, atol=1e-6)
    top = lens_view(trace, [f"w{i}" for i in range(lens.size(-1))], ["p"] * lens.size(2), marked=[2])
    assert torch.equal(top.top_ids[1, :, 0], lens[1, 0].argmax(-1))  # the view's best = the lens's argmax
    assert torch.allclose(top.top_probs[1, :, 0], lens[1, 0].max(-1).values)
    assert top.top_pieces[1][0][0] == f"w{int(lens[1, 0, 0].argmax())}" and top.marked == [2]
    assert (top.top_probs[..., :-1] >= top.top_probs[..., 1:]).all()  # best first


def test_a_model_without_an_output_layer_is_refused_clearly():
    cfg = TransformerConfig(13, 13, d_model=16, n_heads=2, d_ff=32, n_encoder_layers=1, n_decoder_layers=0,
                            kind="encoder_only", output_layer=False)
    model = Transformer(cfg).eval()
    with record(model) as trace, torch.no_grad():
        model.encode(torch.tensor([[3, 4]]))
    with pytest.raises(LensError, match="no output layer"):
        logit_lens(trace)


def test_a_trace_without_the_stack_is_refused(bundles):
    model = bundles["reverse"].model
    with record(model) as trace, torch.no_grad():
        model.encode(torch.tensor([[4, 5]]))  # the encoder only: nothing of the decoder to read
    with pytest.raises(LensError, match="no recorded decoder layers"):
        logit_lens(trace)


def test_the_frame_carries_the_lens(bundles):
    frame = compute_frame(bundles["bert-facts"], "the cat can [MASK] .")
    lens = frame.lens
    assert lens is not None and lens.stack == "encoder" and lens.positions == frame.forward.src_pieces
    masks = [m.position for m in frame.forward.mask_predictions]
    assert lens.marked == masks and masks
    # at a [MASK], the last layer's top-k are the masked LM's own guesses
    assert lens.top_pieces[-1][masks[0]] == frame.forward.mask_predictions[0].pieces
    gpt = compute_frame(bundles["gpt-facts"], "the cat can")
    assert gpt.lens.stack == "decoder" and gpt.lens.positions == gpt.forward.tgt_pieces
    assert gpt.lens.top_probs.shape[:2] == (gpt.bundle.config.n_decoder_layers, len(gpt.forward.tgt_pieces))
