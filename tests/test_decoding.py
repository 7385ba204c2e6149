"""Decoding: step-by-step equals the parallel teacher-forced pass; greedy, sampling and beam search."""
import math

import pytest
import torch

from model import beam_search, decode_steps, greedy_decode, sample_decode
from model.inference.decoding import filter_logits, length_penalty

PAD, BOS, EOS = 0, 1, 2
V = 12


@pytest.fixture
def decoder_model(make_model):
    """`decoder_model(seed)`: a random model whose outputs vary (a biased generator), eos reachable."""
    def factory(seed: int = 0, **overrides):
        model = make_model(seed=seed, src_vocab_size=V, tgt_vocab_size=V, **overrides)
        with torch.no_grad():
            model.generator.bias.copy_(torch.randn(V, generator=torch.Generator().manual_seed(seed)) * 2)
            model.generator.bias[PAD] = -1e4  # a model never predicts padding
        return model
    return factory


def source(seed: int = 0, length: int = 6) -> torch.Tensor:
    return torch.randint(3, V, (1, length), generator=torch.Generator().manual_seed(100 + seed))


def teacher_forced_log_probs(model, src, tokens: list[int]) -> torch.Tensor:
    """log P(tokens[t+1] | tokens[:t+1]) for every t, from one parallel forward."""
    ys = torch.tensor([tokens])
    with torch.no_grad():
        logp = model(src, ys[:, :-1]).log_softmax(-1)[0]  # (L-1, V)
    return logp.gather(1, ys[0, 1:, None])[:, 0]


# -- step by step ------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_decode_steps_equal_the_teacher_forced_pass(decoder_model, seed):
    model = decoder_model(seed)
    src = source(seed)
    greedy = greedy_decode(model, src, BOS, EOS, max_len=10)  # (1, L)
    steps = list(decode_steps(model, src, BOS, EOS, max_len=10))
    assert [s.chosen for s in steps] == greedy[0, 1:].tolist()  # temperature 0 reproduces greedy
    with torch.no_grad():
        parallel = model(src, greedy[:, :-1]).softmax(-1)[0]  # (L-1, V)
    assert len(steps) == parallel.size(0)
    for t, step in enumerate(steps):
        assert step.t == t and step.prefix == greedy[0, : t + 1].tolist()
        torch.testing.assert_close(step.model_probs, parallel[t], atol=1e-5, rtol=0)
        assert torch.equal(step.probs, step.model_probs)  # greedy: no filtering
        assert step.mask.shape == (t + 1, t + 1) and step.mask.dtype == torch.bool
        assert torch.equal(step.mask, torch.ones(t + 1, t + 1, dtype=torch.bool).tril())
        n_layers, h = model.config.n_decoder_layers, model.config.n_heads
        assert step.self_attention.shape == (n_layers, h, t + 1, t + 1)
        assert torch.all(step.self_attention[..., ~step.mask] == 0)
        assert step.cross_attention.shape == (n_layers, h, t + 1, src.size(1))
        torch.testing.assert_close(step.cross_attention.sum(-1), torch.ones(n_layers, h, t + 1))


def test_decode_steps_forced_follows_a_given_target(decoder_model):
    model = decoder_model(3)
    src = source(3)
    target = [5, 9, 4, 7, EOS]  # not what the model would choose
    steps = list(decode_steps(model, src, BOS, EOS, max_len=10, forced=target))
    assert [s.chosen for s in steps] == target
    with torch.no_grad():
        parallel = model(src, torch.tensor([[BOS] + target[:-1]])).softmax(-1)[0]
    for t, step in enumerate(steps):
        torch.testing.assert_close(step.model_probs, parallel[t], atol=1e-5, rtol=0)


def test_decode_steps_for_a_decoder_only_model(decoder_model):
    model = decoder_model(4, kind="decoder_only")
    steps = list(decode_steps(model, None, BOS, EOS, max_len=6))
    greedy = greedy_decode(model, None, BOS, EOS, max_len=6)
    assert [s.chosen for s in steps] == greedy[0, 1:].tolist()
    assert all(s.cross_attention is None for s in steps)


# -- greedy and sampling -----------------------------------------------------------------------
def test_greedy_picks_the_argmax_of_the_parallel_pass(decoder_model):
    model = decoder_model(5)
    src = source(5)
    ys = greedy_decode(model, src, BOS, EOS, max_len=8)
    assert ys[0, 0] == BOS and ys.size(1) <= 9
    with torch.no_grad():
        argmax = model(src, ys[:, :-1]).argmax(-1)  # (1, L-1)
    assert torch.equal(argmax, ys[:, 1:])
    assert ys.size(1) == 9 or ys[0, -1] == EOS  # stops at <eos> or at max_len


def test_greedy_batch_equals_each_sentence_alone(decoder_model):
    """Rows that finished are padded; sources of different lengths are padded too."""
    model = decoder_model(6)
    long, short = source(6, length=7), source(7, length=4)
    src = torch.cat([long, torch.cat([short, torch.full((1, 3), PAD)], 1)])
    batch = greedy_decode(model, src, BOS, EOS, max_len=12)
    for row, alone_src in enumerate((long, short)):
        alone = greedy_decode(model, alone_src, BOS, EOS, max_len=12)[0]
        n = alone.size(0)
        assert torch.equal(batch[row, :n], alone)
        assert torch.all(batch[row, n:] == PAD)
        if n < batch.size(1):
            assert alone[-1] == EOS


def test_sampling_is_reproducible_with_a_seeded_generator(decoder_model):
    model = decoder_model(8)
    src = source(8).expand(4, -1)  # four samples of one sentence

    def sample(seed):
        return sample_decode(model, src, BOS, EOS, max_len=10, temperature=1.5,
                             generator=torch.Generator().manual_seed(seed))

    first = sample(123)
    assert torch.equal(first, sample(123))
    assert any(not torch.equal(first, sample(s)) for s in (1, 2, 3))


def test_top_k_1_sampling_is_greedy(decoder_model):
    model = decoder_model(9)
    src = source(9)
    sampled = sample_decode(model, src, BOS, EOS, max_len=10, temperature=0.7, top_k=1,
                            generator=torch.Generator().manual_seed(0))
    assert torch.equal(sampled, greedy_decode(model, src, BOS, EOS, max_len=10))


def test_sampled_decode_steps_use_the_filtered_distribution(decoder_model):
    model = decoder_model(10)
    steps = list(decode_steps(model, source(10), BOS, EOS, max_len=6, temperature=0.8, top_k=3,
                              generator=torch.Generator().manual_seed(0)))
    for step in steps:
        assert int((step.probs > 0).sum()) == 3
        assert step.probs[step.chosen] > 0
        torch.testing.assert_close(step.model_probs.sum(), torch.tensor(1.0))


# -- filter_logits -----------------------------------------------------------------------------
def test_temperature_divides_the_logits():
    logits = torch.tensor([[1.0, -2.0, 0.5, 3.0]])
    torch.testing.assert_close(filter_logits(logits, temperature=0.5), logits / 0.5)
    with pytest.raises(ValueError, match="temperature"):
        filter_logits(logits, temperature=0)


@pytest.mark.parametrize("k", [1, 3, 7, 20])
def test_top_k_keeps_exactly_the_k_largest(k):
    logits = torch.randn(5, 20, generator=torch.Generator().manual_seed(k))
    out = filter_logits(logits, top_k=k)
    kept = torch.isfinite(out)
    assert torch.all(kept.sum(-1) == k)
    for row in range(5):
        largest = set(sorted(range(20), key=lambda i: -logits[row, i].item())[:k])
        assert set(kept[row].nonzero().flatten().tolist()) == largest
    torch.testing.assert_close(out[kept], logits[kept])


@pytest.mark.parametrize("p", [0.05, 0.3, 0.5, 0.9, 0.99])
def test_top_p_keeps_the_minimal_nucleus(p):
    logits = torch.randn(6, 15, generator=torch.Generator().manual_seed(int(p * 100))) * 2
    out = filter_logits(logits, top_p=p)
    probs = logits.softmax(-1)
    for row in range(6):
        ranked = sorted(range(15), key=lambda i: -probs[row, i].item())
        cumulative, nucleus = 0.0, []
        for i in ranked:  # add tokens, most likely first, until their mass reaches p
            nucleus.append(i)
            cumulative += probs[row, i].item()
            if cumulative >= p:
                break
        assert set(torch.isfinite(out[row]).nonzero().flatten().tolist()) == set(nucleus)


# -- beam search -------------------------------------------------------------------------------
@pytest.mark.parametrize("alpha", [0.0, 0.6, 1.0])
def test_length_penalty_is_gnmt_formula(alpha):
    for length in (1, 2, 5, 17):
        assert math.isclose(length_penalty(length, alpha), ((5 + length) / 6) ** alpha)
    assert length_penalty(1, alpha) == 1.0


@pytest.mark.parametrize("seed", range(12))
def test_beam_size_1_is_greedy(decoder_model, seed):
    model = decoder_model(seed)
    src = source(seed)
    greedy = greedy_decode(model, src, BOS, EOS, max_len=10)[0].tolist()
    assert beam_search(model, src, BOS, EOS, max_len=10, beam_size=1).tokens == greedy


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_beam_search_result_and_tree(decoder_model, seed):
    model = decoder_model(seed)
    src = source(seed)
    beam_size, alpha = 3, 0.6
    result = beam_search(model, src, BOS, EOS, max_len=8, beam_size=beam_size, alpha=alpha)
    nodes = result.nodes
    assert result.finished and all(not nodes[n].pruned for n in result.finished)
    best = max(result.finished, key=lambda n: nodes[n].score)
    assert result.score == nodes[best].score == max(nodes[n].score for n in result.finished)
    assert result.tokens == result.sequence(best) and result.tokens[0] == BOS
    for node in nodes[1:]:
        tokens = result.sequence(node.id)
        assert len(tokens) == node.step + 1
        assert node.finished == (tokens[-1] == EOS)
        assert EOS not in tokens[1:-1]  # nothing grows after <eos>
        # cumulative log-probability checked against an independent teacher-forced pass
        assert math.isclose(node.log_prob, teacher_forced_log_probs(model, src, tokens).sum().item(), abs_tol=1e-4)
        assert math.isclose(node.score, node.log_prob / length_penalty(node.step, alpha), rel_tol=1e-9)
    parents = {n.parent for n in nodes if n.parent is not None}
    assert not any(nodes[p].pruned for p in parents)  # pruned hypotheses are never expanded
    assert any(n.pruned for n in nodes)  # 2 × beam candidates per step: some must be dropped
    for step in range(1, max(n.step for n in nodes) + 1):
        alive = [n for n in nodes if n.step == step and not n.pruned and not n.finished]
        assert len(alive) <= beam_size
    # every finished hypothesis that ends in <eos> scores no better than the returned one
    assert all(nodes[n].score <= result.score for n in result.finished)


def test_beam_search_rejects_batches(decoder_model):
    model = decoder_model(0)
    with pytest.raises(ValueError, match="batch size 1"):
        beam_search(model, source(0).expand(2, -1), BOS, EOS, max_len=5)


def test_alignment_prefers_a_head_that_aligns_over_one_that_only_sinks():
    """The decoding panel's "Sharpest head": each row's largest weight, averaged, times the share of
    different tokens the rows pick — built here from maps whose answer is known."""
    from model.inference.teacher_forcing import ParallelPass

    rows, keys = 4, 5
    sink = torch.zeros(rows, keys)
    sink[:, 0] = 1.0  # every row on one token: sharp, shows nothing
    diagonal = torch.zeros(rows, keys)
    diagonal[torch.arange(rows), torch.arange(rows)] = 0.9  # each row on its own token
    diagonal += 0.1 / keys
    even = torch.full((rows, keys), 1 / keys)  # no focus at all
    cross = torch.stack([torch.stack([sink, even]), torch.stack([even, diagonal])])  # (L=2, h=2, rows, keys)
    p = ParallelPass(tgt_in=[1, 5, 6, 7], causal=True, probs=torch.zeros(rows, 9), predicted=[5, 6, 7, 2],
                     mask=torch.ones(rows, rows, dtype=torch.bool).tril(), self_attention=torch.zeros(2, 2, rows, rows),
                     cross_attention=cross)
    score = p.alignment()
    assert score[0, 0].item() == pytest.approx(1.0 * 1 / 4)  # sharp, one distinct token of min(4, 5)
    assert score[1, 1].item() == pytest.approx(0.92 * 4 / 4)
    assert score[0, 1].item() == pytest.approx(0.2 * 1 / 4)  # argmax of a flat row: one token
    assert p.sharpest_head() == (1, 1)
    # without cross-attention (decoder-only) the masked self-attention decides, <bos>'s row left out
    causal = torch.zeros(2, 2, rows, rows)
    causal[..., 0] = 1.0  # every row on <bos>
    causal[1, 0] = torch.eye(rows)  # each row on itself
    p.cross_attention, p.self_attention = None, causal
    assert p.sharpest_head() == (1, 0) and p.alignment()[1, 0].item() == pytest.approx(1.0)
    assert p.alignment()[0, 0].item() == pytest.approx(1 / 3)  # three rows after <bos>, one token
