"""`record(model)`: what a trace holds, that its numbers are the model's, and that it is private."""
import math
import threading

import pytest
import torch

from model import record

PAD = 0
ATTN_STEPS = ["q", "k", "v", "scores", "mask", "masked_scores", "weights", "context", "concat", "output"]


def batch_with_padding():
    """Two sentences each side; the second is shorter and padded with PAD."""
    src = torch.tensor([[5, 3, 8, 2, 9, 4, 7], [6, 2, 11, 4, PAD, PAD, PAD]])  # (2, 7)
    tgt = torch.tensor([[1, 4, 7, 3, 9, 2], [1, 8, 5, PAD, PAD, PAD]])  # (2, 6)
    return src, tgt


def recorded(model, src, tgt):
    with torch.no_grad(), record(model) as trace:
        logits = model(src, tgt)
    return trace, logits


def expected_names(n_enc: int, n_dec: int, norm_first: bool) -> list[str]:
    """The order of Figure 1, written out independently of the model code."""
    def sublayer(prefix, add_norm, inner):
        if norm_first:
            return [f"{prefix}.{add_norm}.norm", *inner, f"{prefix}.{add_norm}.residual"]
        return [*inner, f"{prefix}.{add_norm}.residual", f"{prefix}.{add_norm}.norm"]

    def attn(prefix):
        return [f"{prefix}.{s}" for s in ATTN_STEPS]

    def ffn(prefix):
        return [f"{prefix}.ffn.hidden", f"{prefix}.ffn.output"]

    def embedding(stack):
        return [f"{stack}.embedding.tokens", f"{stack}.embedding.scaled", f"{stack}.positional", f"{stack}.input"]

    names = embedding("encoder")
    for i in range(n_enc):
        p = f"encoder.layers.{i}"
        names += sublayer(p, "add_norm1", attn(p + ".self_attn")) + sublayer(p, "add_norm2", ffn(p))
    names += ["encoder.final_norm"] if norm_first else []
    names += embedding("decoder")
    for i in range(n_dec):
        p = f"decoder.layers.{i}"
        names += (sublayer(p, "add_norm1", attn(p + ".self_attn")) + sublayer(p, "add_norm2", attn(p + ".cross_attn"))
                  + sublayer(p, "add_norm3", ffn(p)))
    names += ["decoder.final_norm"] if norm_first else []
    return names + ["generator.logits", "generator.probs"]


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
def test_every_step_recorded_in_figure1_order(make_model, norm_first):
    """Post-LN: sublayer → residual → norm. Pre-LN: norm before the sublayer's q, plus final norms."""
    model = make_model(norm_first=norm_first, n_encoder_layers=2, n_decoder_layers=3)
    trace, _ = recorded(model, *batch_with_padding())
    assert trace.names() == expected_names(2, 3, norm_first)
    if norm_first:
        assert trace.index("encoder.layers.0.add_norm1.norm") < trace.index("encoder.layers.0.self_attn.q")
    else:
        assert trace.index("encoder.layers.0.self_attn.output") < trace.index("encoder.layers.0.add_norm1.norm")
        assert "encoder.final_norm" not in trace and "decoder.final_norm" not in trace


def test_pre_ln_final_norm_is_the_layer_norm_of_the_last_residual(make_model):
    model = make_model(norm_first=True)
    trace, _ = recorded(model, *batch_with_padding())
    last = trace["encoder.layers.1.add_norm2.residual"].tensor
    with torch.no_grad():
        torch.testing.assert_close(trace["encoder.final_norm"].tensor, model.encoder.norm(last))


def test_recording_does_not_change_the_logits(make_model):
    model = make_model()
    src, tgt = batch_with_padding()
    with torch.no_grad():
        plain = model(src, tgt)
    trace, logits = recorded(model, src, tgt)
    torch.testing.assert_close(logits, plain, atol=1e-5, rtol=0)
    torch.testing.assert_close(trace["generator.logits"].tensor, plain, atol=1e-5, rtol=0)
    torch.testing.assert_close(trace["generator.probs"].tensor, plain.softmax(-1), atol=1e-6, rtol=0)


def test_attention_shapes_for_all_three_kinds(make_model):
    model = make_model(n_heads=2)
    trace, _ = recorded(model, *batch_with_padding())
    assert trace.attention_kinds() == ["encoder", "decoder_self", "cross"]
    assert trace.n_layers("encoder") == 2 and trace.n_layers("cross") == 2
    for layer in range(2):
        assert trace.attention("encoder", layer).shape == (2, 2, 7, 7)
        assert trace.attention("decoder_self", layer).shape == (2, 2, 6, 6)
        assert trace.attention("cross", layer).shape == (2, 2, 6, 7)  # T_tgt x T_src
    with pytest.raises(KeyError):
        trace.attention("sideways", 0)
    with pytest.raises(KeyError):
        trace.attention("encoder", 2)


def test_attention_weights_are_distributions_that_respect_the_masks(make_model):
    model = make_model()
    src, tgt = batch_with_padding()
    trace, _ = recorded(model, src, tgt)
    src_pad = (src == PAD)[:, None, None, :]  # (B, 1, 1, T_src)
    tgt_pad = (tgt == PAD)[:, None, None, :]  # (B, 1, 1, T_tgt)
    future = torch.ones(6, 6, dtype=torch.bool).triu(1)  # (T_tgt, T_tgt) strictly above the diagonal
    for layer in range(2):
        for kind in ("encoder", "decoder_self", "cross"):
            w = trace.attention(kind, layer)
            torch.testing.assert_close(w.sum(-1), torch.ones(w.shape[:-1]), atol=1e-6, rtol=0)
            assert torch.all(w >= 0)
        assert torch.all(trace.attention("decoder_self", layer)[..., future] == 0)  # exactly 0
        assert torch.all(trace.attention("encoder", layer).masked_select(src_pad.expand(2, 4, 7, 7)) == 0)
        assert torch.all(trace.attention("cross", layer).masked_select(src_pad.expand(2, 4, 6, 7)) == 0)
        assert torch.all(trace.attention("decoder_self", layer).masked_select(tgt_pad.expand(2, 4, 6, 6)) == 0)
        # and a real key does get weight
        assert torch.all(trace.attention("cross", layer)[1, :, :, :4].sum(-1) > 0.999)


def test_recorded_scores_and_weights_follow_eq1(make_model):
    """scores = q kᵀ / √d_k from the recorded q, k; weights = softmax(masked_scores)."""
    model = make_model()
    trace, _ = recorded(model, *batch_with_padding())
    prefixes = [f"encoder.layers.{i}.self_attn" for i in range(2)]
    prefixes += [f"decoder.layers.{i}.{a}" for i in range(2) for a in ("self_attn", "cross_attn")]
    for p in prefixes:
        q, k, v = (trace[f"{p}.{s}"].tensor for s in "qkv")
        scores = trace[f"{p}.scores"].tensor
        torch.testing.assert_close(scores, q @ k.transpose(-2, -1) / math.sqrt(q.size(-1)), atol=1e-5, rtol=1e-5)
        mask = trace[f"{p}.mask"].tensor[:, None]  # (B, 1, T_q, T_k)
        masked = trace[f"{p}.masked_scores"].tensor
        assert torch.equal(masked, scores.masked_fill(~mask, float("-inf")))
        weights = trace[f"{p}.weights"].tensor
        torch.testing.assert_close(weights, masked.softmax(-1), atol=1e-7, rtol=0)
        torch.testing.assert_close(trace[f"{p}.context"].tensor, weights @ v, atol=1e-6, rtol=1e-5)
        B, h, T_q, d_k = q.shape
        concat = trace[f"{p}.context"].tensor.transpose(1, 2).reshape(B, T_q, h * d_k)
        torch.testing.assert_close(trace[f"{p}.concat"].tensor, concat)


def test_recorded_steps_chain_into_each_other(make_model):
    """Each recorded value is computed from the recorded values before it (post-LN layer)."""
    model = make_model()
    trace, _ = recorded(model, *batch_with_padding())
    layer = model.encoder.layers[0]
    x = trace["encoder.input"].tensor
    p = "encoder.layers.0"
    with torch.no_grad():
        torch.testing.assert_close(trace[f"{p}.self_attn.q"].tensor,
                                   layer.self_attn.w_q(x).view(2, 7, 4, 8).transpose(1, 2))
        residual = x + trace[f"{p}.self_attn.output"].tensor
        torch.testing.assert_close(trace[f"{p}.add_norm1.residual"].tensor, residual)
        normed = torch.nn.functional.layer_norm(residual, (32,), layer.add_norm1.norm.weight, layer.add_norm1.norm.bias)
        torch.testing.assert_close(trace[f"{p}.add_norm1.norm"].tensor, normed)
        hidden = torch.relu(normed @ layer.ffn.w_1.weight.T + layer.ffn.w_1.bias)
        torch.testing.assert_close(trace[f"{p}.ffn.hidden"].tensor, hidden)
        assert torch.all(trace[f"{p}.ffn.hidden"].tensor >= 0)


def test_axes_name_every_dimension_consistently(make_model):
    model = make_model(d_ff=48)
    src, tgt = batch_with_padding()
    trace, _ = recorded(model, src, tgt)
    sizes = {"batch": 2, "head": 4, "src": 7, "tgt": 6, "d_model": 32, "d_k": 8, "d_ff": 48, "vocab": 11}
    for step in trace:
        assert len(step.axes) == step.tensor.dim(), step.name
        assert step.shape == tuple(sizes[a] for a in step.axes), step.name
        assert step.formula and step.description
        assert not step.tensor.requires_grad and step.tensor.device.type == "cpu"
    assert trace["decoder.layers.0.cross_attn.weights"].axes == ("batch", "head", "tgt", "src")
    assert trace["decoder.layers.0.cross_attn.weights"].block == "decoder.layers.0.cross_attn"


def test_trace_holds_copies_not_live_tensors(make_model):
    """A training thread updating the weights after a recording must not change what was recorded."""
    model = make_model(positional="learned")
    src, tgt = batch_with_padding()
    with record(model) as trace:  # with autograd on, as a training step would be
        logits = model(src, tgt)
    recorded_pe = trace["encoder.positional"].tensor.clone()
    assert torch.equal(recorded_pe, model.positional.weight.detach()[:7])
    logits.sum().backward()  # the trace did not cut the graph
    assert model.positional.weight.grad is not None
    with torch.no_grad():
        model.positional.weight.add_(1.0)
    assert torch.equal(trace["encoder.positional"].tensor, recorded_pe)


def test_outside_record_nothing_is_recorded(make_model):
    model = make_model()
    src, tgt = batch_with_padding()
    with torch.no_grad(), record(model) as trace:
        model(src, tgt)
    n = len(trace)
    with torch.no_grad():
        model(src, tgt)  # after the block
    assert len(trace) == n
    with torch.no_grad(), record(model) as twice:
        model(src, tgt)
        model(src[:1], tgt[:1])
    assert len(twice) == 2 * n
    assert twice.attention("encoder", 0).shape[0] == 1  # the later forward wins a name


def test_recording_is_private_to_its_thread(make_model):
    """A forward running in another thread while this one records is not captured (contextvar)."""
    model = make_model()
    src, tgt = batch_with_padding()
    other_src, other_tgt = torch.randint(1, 11, (3, 5)), torch.randint(1, 11, (3, 4))
    recording, other_done = threading.Event(), threading.Event()
    errors = []

    def other_thread():
        try:
            recording.wait(5)
            with torch.no_grad():
                for _ in range(3):
                    model(other_src, other_tgt)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            other_done.set()

    worker = threading.Thread(target=other_thread)
    worker.start()
    with torch.no_grad(), record(model) as trace:
        recording.set()
        assert other_done.wait(10)  # the other thread's forwards ran entirely inside our block
        model(src, tgt)
    worker.join(5)
    assert not errors
    assert len(trace) == len(expected_names(2, 2, False))
    assert all(step.tensor.shape[0] == 2 for step in trace if step.axes[0] == "batch")


def test_concurrent_recordings_stay_separate(make_model):
    """Two threads recording at the same time each get only their own forwards."""
    model = make_model()
    inputs = {0: (torch.randint(1, 11, (1, 5)), torch.randint(1, 11, (1, 3))),
              1: (torch.randint(1, 11, (2, 8)), torch.randint(1, 11, (2, 6)))}
    traces, barrier = {}, threading.Barrier(2)

    def run(i):
        src, tgt = inputs[i]
        with torch.no_grad(), record(model) as trace:
            barrier.wait(5)
            for _ in range(4):
                model(src, tgt)
        traces[i] = trace

    threads = [threading.Thread(target=run, args=(i,)) for i in inputs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    n = len(expected_names(2, 2, False))
    for i, (src, tgt) in inputs.items():
        assert len(traces[i]) == 4 * n
        assert all(s.tensor.shape == traces[i][s.name].tensor.shape for s in traces[i])
        assert traces[i].attention("cross", 1).shape == (src.size(0), 4, tgt.size(1), src.size(1))


def test_steps_are_float32_whatever_the_model_dtype(make_model):
    """A float64 (or half) model records float32 copies; boolean masks stay boolean."""
    model = make_model().double()
    src, tgt = batch_with_padding()
    with torch.no_grad(), record(model) as trace:
        logits = model(src, tgt)
    assert logits.dtype == torch.float64
    assert trace["generator.logits"].tensor.dtype == torch.float32
    torch.testing.assert_close(trace["generator.logits"].tensor, logits.float())
    assert trace["encoder.layers.0.self_attn.mask"].tensor.dtype == torch.bool
    assert all(s.tensor.dtype in (torch.float32, torch.bool) for s in trace)


def test_record_overhead_benchmark_runs(capsys):
    """benchmarks/record_overhead.py stays runnable and ends with its summary line."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "record_overhead.py"
    spec = importlib.util.spec_from_file_location("record_overhead", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    threads = torch.get_num_threads()
    try:
        ratio = bench.main(["--repeats", "1"])
    finally:
        torch.set_num_threads(threads)
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last == f"record_overhead: {ratio:.2f}" and ratio > 0
