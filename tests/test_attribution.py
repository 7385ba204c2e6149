"""model.interpret.attribution against references computed here by other routes: rollout as a plain
matrix product, flow as a minimum cut found by enumeration or scipy's max-flow, integrated
gradients' completeness against two forwards, occlusion against a loop."""
import copy
import itertools

import numpy as np
import pytest
import torch
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_flow

from model.interpret.attribution import UnsupportedAttribution, attribute, build_problem, rank_correlations, top1
from model.interpret.attribution.gradients import integrated_gradients
from model.interpret.attribution.graph import encoder_decoder_flow_graph, max_flows, stack_flow_graph
from model.io.checkpoints import bundled_checkpoints, load_checkpoint
from model.nn.hooks import record


@pytest.fixture(scope="module")
def bundles():
    return {name: load_checkpoint(bundled_checkpoints()[name]) for name in ("reverse", "gpt-facts", "bert-facts")}


def recorded_means(bundle, *args):
    """Head-averaged attention of every sublayer, recorded here with the model's own forward."""
    with torch.no_grad(), record(bundle.model) as trace:
        bundle.model(*args)
    return {kind: [trace.attention(kind, l)[0].double().mean(0).numpy() for l in range(trace.n_layers(kind))]
            for kind in trace.attention_kinds()}


def residual(a):
    return 0.5 * a + 0.5 * np.eye(len(a))


# -- rollout ----------------------------------------------------------------------------------
def test_rollout_of_an_encoder_is_the_product_of_residual_attention(bundles):
    bundle = bundles["bert-facts"]
    problem = build_problem(bundle, "the [MASK] says moo", position=0)
    means = recorded_means(bundle, problem.src)["encoder"]
    expected = residual(means[1]) @ residual(means[0])  # layer 2 after layer 1
    got = attribute(bundle, "the [MASK] says moo", position=0, methods=["rollout"])["rollout"]
    np.testing.assert_allclose(got, expected[problem.row], atol=1e-9)
    assert problem.row == 1  # the [MASK]


def test_rollout_of_a_decoder_only_model_covers_the_prompt(bundles):
    bundle = bundles["gpt-facts"]
    problem = build_problem(bundle, "the cow says", position=1)
    means = recorded_means(bundle, None, problem.tgt)["decoder_self"]
    expected = residual(means[1]) @ residual(means[0])
    got = attribute(bundle, "the cow says", position=1, methods=["rollout"])["rollout"]
    np.testing.assert_allclose(got, expected[problem.row, 1:4], atol=1e-9)  # the prompt follows <bos>


def test_encoder_decoder_rollout_is_a_product_of_joint_matrices(bundles):
    """The docstring's rule written as one (T+S)-square matrix per sublayer, multiplied."""
    bundle = bundles["reverse"]
    problem = build_problem(bundle, "abcdef", position=2)
    m = recorded_means(bundle, problem.src, problem.tgt)
    S, T = problem.src.size(1), problem.tgt.size(1)
    enc = residual(m["encoder"][1]) @ residual(m["encoder"][0])
    joint = np.zeros((T + S, T + S))  # rows/cols: target tokens, then source tokens
    joint[:T, :T], joint[T:, T:] = np.eye(T), enc
    for self_att, cross in zip(m["decoder_self"], m["cross"]):
        mix_self = np.eye(T + S)
        mix_self[:T, :T] = residual(self_att)
        mix_cross = np.eye(T + S)
        mix_cross[:T, :T] = 0.5 * np.eye(T)
        mix_cross[:T, T:] = 0.5 * cross
        joint = mix_cross @ mix_self @ joint
    got = attribute(bundle, "abcdef", position=2, methods=["rollout"])["rollout"]
    np.testing.assert_allclose(got, joint[problem.row, T:], atol=1e-9)
    assert joint[:T].sum(1) == pytest.approx(np.ones(T))  # relevance is shared, never lost


# -- flow ----------------------------------------------------------------------------------------
def min_cut(capacity: dict, source, sink) -> float:
    """Max-flow = min-cut (Ford & Fulkerson): the cheapest set of edges leaving a node set
    that holds the source but not the sink, by trying every such set."""
    others = sorted({u for e in capacity for u in e} - {source, sink}, key=str)
    best = np.inf
    for r in range(len(others) + 1):
        for chosen in itertools.combinations(others, r):
            side = {source, *chosen}
            best = min(best, sum(c for (u, v), c in capacity.items() if u in side and v not in side))
    return best


def test_flow_on_a_two_layer_graph_written_out_by_hand():
    a1 = np.array([[0.6, 0.4], [0.2, 0.8]])
    a2 = np.array([[0.1, 0.9], [0.5, 0.5]])
    # Â = 0.5·A + 0.5·I: layer 1 [[.8 .2] [.1 .9]], layer 2 [[.55 .45] [.25 .75]].
    capacity = {(("x", 2, 0), ("x", 1, 0)): 0.55, (("x", 2, 0), ("x", 1, 1)): 0.45,
                (("x", 2, 1), ("x", 1, 0)): 0.25, (("x", 2, 1), ("x", 1, 1)): 0.75,
                (("x", 1, 0), ("x", 0, 0)): 0.8, (("x", 1, 0), ("x", 0, 1)): 0.2,
                (("x", 1, 1), ("x", 0, 0)): 0.1, (("x", 1, 1), ("x", 0, 1)): 0.9}
    got = max_flows(stack_flow_graph([a1, a2]), ("x", 2, 0), [("x", 0, 0), ("x", 0, 1)])
    expected = [min_cut(capacity, ("x", 2, 0), ("x", 0, j)) for j in (0, 1)]
    np.testing.assert_allclose(got, expected, atol=1e-9)
    # and by hand, two disjoint paths each: min(.55, .8) + min(.45, .1); min(.55, .2) + min(.45, .9)
    assert expected == pytest.approx([0.55 + 0.1, 0.2 + 0.45])


def test_flow_through_cross_attention_on_a_hand_written_graph():
    enc = np.array([[0.0, 1.0], [1.0, 0.0]])  # Â_enc = [[.5 .5] [.5 .5]]
    dec_self = np.array([[1.0]])  # one target position
    cross = np.array([[0.8, 0.2]])
    t_out, t_self = ("tgt", 1, 0), ("tgt", 1, "self", 0)
    capacity = {(t_out, t_self): 0.5, (t_out, ("src", 1, 0)): 0.4, (t_out, ("src", 1, 1)): 0.1,
                (t_self, ("tgt", 0, 0)): 1.0,
                (("src", 1, 0), ("src", 0, 0)): 0.5, (("src", 1, 0), ("src", 0, 1)): 0.5,
                (("src", 1, 1), ("src", 0, 0)): 0.5, (("src", 1, 1), ("src", 0, 1)): 0.5}
    graph = encoder_decoder_flow_graph([enc], [dec_self], [cross])
    got = max_flows(graph, t_out, [("src", 0, 0), ("src", 0, 1)])
    np.testing.assert_allclose(got, [min_cut(capacity, t_out, ("src", 0, j)) for j in (0, 1)], atol=1e-9)


def test_flow_of_a_real_encoder_matches_scipy_max_flow(bundles):
    """The model's recorded attention, the graph built here as a sparse matrix, scipy's
    (integer) max-flow: a different library and a different graph construction."""
    bundle = bundles["bert-facts"]
    problem = build_problem(bundle, "the [MASK] says moo", position=0)
    means = recorded_means(bundle, problem.src)["encoder"]
    S, scale = problem.src.size(1), 10 ** 9
    n = 3 * S  # node (l, i) is l·S + i; layer 2 is the top
    cap = np.zeros((n, n), dtype=np.int64)
    for l, a in enumerate(means):
        cap[(l + 1) * S:(l + 2) * S, l * S:(l + 1) * S] = np.round(residual(a) * scale)
    got = attribute(bundle, "the [MASK] says moo", position=0, methods=["flow"])["flow"]
    top = 2 * S + problem.row
    expected = [maximum_flow(csr_matrix(cap), top, j).flow_value / scale for j in range(S)]
    np.testing.assert_allclose(got, expected, atol=1e-6)


# -- gradients ----------------------------------------------------------------------------------
def log_p(bundle, problem, model=None):
    model = model or bundle.model
    with torch.no_grad():
        logits = model(problem.src, problem.tgt)
    return logits[0, problem.row].log_softmax(-1)[problem.token_id].item()


def test_integrated_gradients_are_complete(bundles):
    """Σ attributions = f(x) − f(baseline) within 1%; f(baseline) from a copy of the model
    whose source embedding table is all zeros (the baseline), not through the hook."""
    bundle = bundles["reverse"]
    problem = build_problem(bundle, "hello", position=1)
    scores = integrated_gradients(problem)
    zeroed = copy.deepcopy(bundle.model)
    with torch.no_grad():
        zeroed.src_embed.lut.weight.zero_()
    difference = log_p(bundle, problem) - log_p(bundle, problem, zeroed)
    assert abs(difference) > 0.1  # a real change to account for
    assert scores.sum() == pytest.approx(difference, rel=0.01)


def test_grad_x_input_matches_a_directional_derivative(bundles):
    """Σ_j grad·input = d/dt f(t·e) at t = 1: checked by a central difference."""
    bundle = bundles["reverse"]
    problem = build_problem(bundle, "hello", position=1)
    got = attribute(bundle, "hello", position=1, methods=["grad_x_input"])["grad_x_input"]
    weight = bundle.model.src_embed.lut.weight
    values = []
    for t in (1 + 1e-3, 1 - 1e-3):
        scaled = copy.deepcopy(bundle.model)
        with torch.no_grad():
            scaled.src_embed.lut.weight.copy_(weight * t)
        values.append(log_p(bundle, problem, scaled))
    assert got.sum() == pytest.approx((values[0] - values[1]) / 2e-3, rel=0.05, abs=1e-6)


# -- occlusion --------------------------------------------------------------------------------
def test_occlusion_matches_a_loop(bundles):
    bundle = bundles["reverse"]
    problem = build_problem(bundle, "abcdefg", position=3)
    full = log_p(bundle, problem)
    expected = []
    for j in range(problem.src.size(1)):
        src = problem.src.clone()
        src[0, j] = bundle.config.pad_id
        with torch.no_grad():
            logits = bundle.model(src, problem.tgt)
        expected.append(full - logits[0, problem.row].log_softmax(-1)[problem.token_id].item())
    got = attribute(bundle, "abcdefg", position=3, methods=["occlusion"])["occlusion"]
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert top1(got) == 7 - 1 - 3  # output 3 of a reversal copies input n−1−3


# -- raw attention, choices, table, refusals ------------------------------------------------------
def test_raw_attention_is_the_last_cross_attention_row(bundles):
    bundle = bundles["reverse"]
    problem = build_problem(bundle, "abc", target="cba", position=0)
    with torch.no_grad(), record(bundle.model) as trace:
        bundle.model(problem.src, problem.tgt)
    cross = trace.attention("cross", 1)[0].double().numpy()  # (h, T, S)
    got = attribute(bundle, "abc", "cba", position=0, methods=["attention", "attention_head"], head=(1, 2))
    np.testing.assert_allclose(got["attention"], cross.mean(0)[0], atol=1e-7)
    np.testing.assert_allclose(got["attention_head"], cross[2, 0], atol=1e-7)
    assert problem.outputs == ["c", "b", "a", "<eos>"]


def test_rank_correlations_agree_with_ranks_by_hand():
    names, rho = rank_correlations({"a": np.array([1.0, 2.0, 3.0, 4.0]), "b": np.array([4.0, 3.0, 1.0, 2.0]),
                                    "flat": np.zeros(4)})
    d = np.array([1, 2, 3, 4]) - np.array([4, 3, 1, 2])
    assert rho[0, 1] == pytest.approx(1 - 6 * (d ** 2).sum() / (4 * (16 - 1)))
    assert np.isnan(rho[2]).all() and names == ["a", "b", "flat"]


def test_an_encoder_without_a_masked_lm_head_is_refused(bundles):
    bundle = copy.copy(bundles["bert-facts"])
    bundle.task = dict(bundle.task, pretrained=True)  # as a loaded pretrained encoder is marked
    with pytest.raises(UnsupportedAttribution, match="masked-LM head"):
        attribute(bundle, "the cow says moo")
    with pytest.raises(ValueError, match="unknown attribution method"):
        attribute(bundles["reverse"], "abc", methods=["saliency"])


def test_a_near_certain_output_flags_gradient_x_input_as_saturated(bundles):
    """The panel's "g×i ≈ 0" note: for an output the model is sure of, log p is flat where the
    input is (g×i tiny), while IG, integrated from the zero embedding, accounts for the whole
    change in log p. Checked on the reverse model's first letter, p from the model itself."""
    from model.interpret.attribution.gradients import grad_x_input, gradient_saturated

    bundle = bundles["reverse"]
    problem = build_problem(bundle, "transformer", position=0)
    # near certain (label smoothing caps it at ~0.92): the case the note is for
    assert np.exp(log_p(bundle, problem)) > 0.9
    gxi, ig = grad_x_input(problem), integrated_gradients(problem)
    assert np.abs(gxi).max() < 0.05 * np.abs(ig).max() and gradient_saturated(gxi, ig)
    assert not gradient_saturated(np.array([0.5, -0.2]), np.array([1.0, 0.3]))  # comparable scales
    assert not gradient_saturated(np.array([0.0]), np.array([0.0]))  # nothing to compare with


def test_integrated_gradients_add_up_to_the_change_in_log_p_within_one_percent():
    """Completeness, checked against f(x) − f(0) computed by a plain forward of each end."""
    from model import bundled_checkpoints, load_checkpoint
    from model.interpret.attribution import build_problem
    from model.interpret.attribution.gradients import input_embeddings, integrated_gradients, log_prob_of_embeddings

    bundle = load_checkpoint(bundled_checkpoints()["reverse"])
    problem = build_problem(bundle, "transformer", None, 10)
    scores = integrated_gradients(problem)
    x = input_embeddings(problem)
    with torch.no_grad():
        change = float(log_prob_of_embeddings(problem, x) - log_prob_of_embeddings(problem, torch.zeros_like(x)))
    assert abs(scores.sum() - change) <= 0.01 * max(abs(change), 1.0)


def test_compare_methods_reports_each_method_and_returns_what_attribute_gives(bundles, monkeypatch):
    from model.interpret.attribution import METHODS, gradients
    from model.interpret.attribution.side_by_side import AttributionRequest, compare_request

    monkeypatch.setattr(gradients, "IG_STEPS", 8)
    bundle = bundles["reverse"]
    request = AttributionRequest(bundle, "reverse", "abcd", None, 99, (0, 1))  # past the end: the last token
    steps = compare_request(request)  # (the GUI's job: compare_methods for a request)
    reports = []
    while True:
        try:
            reports.append(next(steps))
        except StopIteration as stop:
            answered, result = stop.value
            break
    assert answered is request
    done = [done for done, _, _ in reports]  # (integrated gradients' refinements repeat its count)
    assert done == sorted(done) and sorted(set(done)) == list(range(len(METHODS) + 1))
    assert all(total == len(METHODS) + 1 for _, total, _ in reports)
    assert result.position == len(result.outputs) - 1 and list(result.scores) == list(METHODS)
    expected = attribute(bundle, "abcd", position=result.position, methods=["occlusion", "attention_head"], head=(0, 1))
    for method, values in expected.items():
        np.testing.assert_allclose(result.scores[method], values, atol=1e-6)
    names, rho = rank_correlations(result.scores)
    assert result.names == names and np.allclose(result.rho, rho, equal_nan=True)


def test_a_request_reads_the_sessions_views_and_clamps_the_head_to_the_model():
    from types import SimpleNamespace

    from model.interpret.attribution.side_by_side import request_for

    config = SimpleNamespace(has_decoder=True, n_decoder_layers=3, n_encoder_layers=2, n_heads=4)
    run = SimpleNamespace(output_ids=[5, 6, 2], eos_id=2)
    frame = SimpleNamespace(bundle=SimpleNamespace(config=config), model_label="m", source="ab", target=None,
                            decode=run, settings=SimpleNamespace(strategy="greedy"))
    default = request_for(frame, None, None)
    assert (default.position, default.head, default.output_ids) == (0, (2, 0), (5, 6))  # last layer, eos dropped
    assert request_for(frame, "4", "1,2").head == (1, 2) and request_for(frame, "4", "1,2").position == 4
    assert request_for(frame, "x", "9,9").head == (2, 3)  # past the model: its last layer and head
    assert request_for(frame, None, "1;2").head == (2, 0)  # not "layer,head": the default
    frame.settings.strategy = "beam"
    assert request_for(frame, None, None).output_ids is None  # only a greedy decode is reused
    frame.bundle.config.has_decoder = False
    assert request_for(frame, None, None).head == (1, 0)  # an encoder's last layer
