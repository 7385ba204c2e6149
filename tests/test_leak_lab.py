"""The mask-leak lab (model.interpret.leak_lab): one tiny lab trained once (60 steps per run, d_model 32),
then what it claims checked against computations written here: the leaking run attends to
the future and the masked one exactly not, a changed future token changes the leaking model's
earlier predictions and never the masked one's, the leak's loss ends lower, free-running
accuracy against a one-sentence-at-a-time loop, and the loss floor by the chain rule."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from model.data.corpus import sentence_distribution
from model.data.tokenizers import BOS_ID, EOS_ID, PAD_ID
from model.interpret.leak_lab import RUNS, LeakConfig, LeakLab, LeakPhase, LeakResult, LeakStep, head_choices
from model.interpret.leak_scores import (
    animal_prompt,
    entropy_floor,
    free_running_accuracy,
    future_mass,
    sentence_batch,
    teacher_forced_accuracy,
)
from model.nn.hooks import record

TINY = dict(steps=60, d_model=32, batch_size=16, warmup=20, eval_size=40)


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """Tiny models: one thread is fastest, and the machine is shared."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def lab(one_thread):
    lab = LeakLab(LeakConfig(**TINY))
    return lab, list(lab.events())


@pytest.fixture(scope="module")
def result(lab) -> LeakResult:
    return lab[1][-1]


def test_events_interleave_both_runs_then_score(lab, result):
    _, events = lab
    steps = [e for e in events if isinstance(e, LeakStep)]
    assert [e.run for e in steps[:4]] == ["masked", "leaking", "masked", "leaking"]
    assert [e.step for e in steps if e.run == "leaking"] == list(range(1, TINY["steps"] + 1))
    assert isinstance(events[-2], LeakPhase) and isinstance(result, LeakResult)
    assert not result.stopped and result.eval_n == TINY["eval_size"]
    for run in RUNS:
        losses = result.runs[run].losses
        assert losses.shape == (TINY["steps"],) and np.all(np.isfinite(losses))
        assert losses[-10:].mean() < losses[:5].mean()  # both learn
    assert result.runs["masked"].causal_mask and not result.runs["leaking"].causal_mask


def test_both_runs_start_from_the_same_weights_and_batches():
    lab = LeakLab(LeakConfig(**{**TINY, "steps": 1}))
    masked, leaking = (lab.trainers[r] for r in RUNS)
    for (name, a), b in zip(masked.model.state_dict().items(), leaking.model.state_dict().values()):
        assert torch.equal(a, b), name
    assert torch.equal(masked.next_batch().tgt_in, leaking.next_batch().tgt_in)


def upper_triangle_by_hand(model, tgt_in: torch.Tensor, causal: bool) -> float:
    """Largest attention weight above the diagonal over every head, layer and real query."""
    model.eval()
    with record(model) as trace, torch.no_grad():
        model(None, tgt_in, causal=causal)
    largest = 0.0
    real = tgt_in != PAD_ID
    for layer in range(model.config.n_decoder_layers):
        att = trace.attention("decoder_self", layer)  # (B, h, T, T)
        for b in range(att.size(0)):
            n = int(real[b].sum())
            for i in range(n):
                largest = max(largest, float(att[b, :, i, i + 1:n].max()) if i + 1 < n else 0.0)
    return largest


def test_leaking_run_attends_to_the_future_and_the_masked_run_never(lab, result):
    lab, _ = lab
    tgt_in, _ = sentence_batch(lab.tokenizer, lab.held_out()[:12], 32)
    masked, leaking = (lab.trainers[r].model for r in RUNS)
    assert upper_triangle_by_hand(masked, tgt_in, causal=True) == 0.0
    assert upper_triangle_by_hand(leaking, tgt_in, causal=False) > 0.2
    assert future_mass(masked, tgt_in, causal=True) == 0.0
    assert result.runs["masked"].future_mass == 0.0
    assert result.runs["leaking"].future_mass > 0.1
    assert np.triu(result.runs["masked"].attention, 1).max() == 0.0  # the maps the panel draws
    assert np.triu(result.runs["leaking"].attention, 1).max() > 0.2


def test_a_changed_future_token_changes_only_the_leaking_models_past(lab):
    lab, _ = lab
    ids = lab.tokenizer.encode("the cow says moo and eats grass .").ids
    tgt = torch.tensor([[BOS_ID] + ids])
    changed = tgt.clone()
    changed[0, 5] = lab.tokenizer.encode("lives").ids[0]  # a later token replaced
    for run, causal in (("masked", True), ("leaking", False)):
        model = lab.trainers[run].model.eval()
        with torch.no_grad():
            before, after = model(None, tgt, causal=causal)[0, :5], model(None, changed, causal=causal)[0, :5]
        moved = float((before - after).abs().max())
        assert (moved == 0.0) if run == "masked" else (moved > 1e-3), (run, moved)


def test_the_leaking_loss_ends_lower(result):
    assert result.runs["leaking"].final_loss < result.runs["masked"].final_loss


def test_masked_run_scores_the_same_forced_and_free_running(result):
    m = result.runs["masked"]
    assert m.teacher_forced == pytest.approx(m.free_running, abs=0.01)
    leak = result.runs["leaking"]
    assert leak.teacher_forced > leak.free_running + 0.1  # the leak's signature: reading the answer helps it


def test_free_running_accuracy_against_a_sentence_by_sentence_loop(lab):
    lab, _ = lab
    texts = lab.held_out()[:10]
    tgt_in, tgt_out = sentence_batch(lab.tokenizer, texts, 32)
    model = lab.trainers["leaking"].model.eval()
    hits = total = 0
    with torch.no_grad():
        for text in texts:
            ids = [BOS_ID] + lab.tokenizer.encode(text).ids
            labels = ids[1:] + [EOS_ID]
            for t, label in enumerate(labels):
                logits = model(None, torch.tensor([ids[: t + 1]]), causal=False)[0, -1].clone()
                logits[[BOS_ID, PAD_ID]] = -math.inf
                hits += int(logits.argmax()) == label
                total += 1
    assert free_running_accuracy(model, tgt_in, tgt_out, causal=False) == pytest.approx(hits / total)
    forced = teacher_forced_accuracy(model, tgt_in, tgt_out, causal=False)
    assert 0.0 <= forced <= 1.0


def test_loss_floor_is_the_corpus_entropy_per_token_by_the_chain_rule():
    dist = sentence_distribution()
    following: dict[tuple, dict[str, float]] = {}
    for words, p in dist.items():
        for i, w in enumerate(words + ("<eos>",)):
            options = following.setdefault(words[:i], {})
            options[w] = options.get(w, 0.0) + p
    nats = tokens = 0.0
    for words, p in dist.items():
        for i, w in enumerate(words + ("<eos>",)):
            options = following[words[:i]]
            nats -= p * math.log(options[w] / sum(options.values()))
        tokens += p * (len(words) + 1)
    assert entropy_floor() == pytest.approx(nats / tokens, rel=1e-9)


def test_animal_prompt():
    assert animal_prompt("a sleepy lion eats meat .") == "a sleepy lion"
    assert animal_prompt("the cow says moo .") == "the cow"


def test_stop_ends_training_early_and_still_scores():
    lab = LeakLab(LeakConfig(**{**TINY, "steps": 500, "eval_size": 10}))
    seen = []
    for event in lab.events():
        seen.append(event)
        if isinstance(event, LeakStep) and event.step == 3 and event.run == "leaking":
            lab.stop()
    result = seen[-1]
    assert isinstance(result, LeakResult) and result.stopped
    assert all(r.steps == 3 for r in result.runs.values())
    lab = LeakLab(LeakConfig(**{**TINY, "steps": 500}))
    events = lab.events()
    next(events)
    lab.stop(evaluate=False)
    assert all(isinstance(e, LeakStep) for e in events)  # no scoring: a closing window waits for nothing


def test_the_ceiling_and_its_band_against_sampled_held_out_sets(result):
    """model.data.corpus.next_word_ceiling: the Bayes-optimal next-word guess's expected score and its
    spread on n sentences, computed exactly from the distribution, against scores of that guess
    on 300 independently drawn sets of 50 sentences (facts_sentence, the generator itself): their
    mean within 3 standard errors, their standard deviation within 20 %. The with-mask bar of a
    lucky run may pass the line by a point, never the band."""
    import random
    import statistics

    from model.data.corpus import facts_sentence, next_word_ceiling
    best, sd = next_word_ceiling(50)
    assert 0.6 < best < 0.7 and 0.005 < sd < 0.05
    dist = sentence_distribution()
    follows: dict[tuple, dict[str, float]] = {}
    for words, p in dist.items():
        for i, w in enumerate(words + ("<eos>",)):
            follows.setdefault(words[:i], {}).setdefault(w, 0.0)
            follows[words[:i]][w] += p
    guess = {prefix: max(options, key=options.get) for prefix, options in follows.items()}
    rng = random.Random(7)
    scores = []
    for _ in range(300):
        hits = total = 0
        for _ in range(50):
            words = tuple(facts_sentence(rng).split())
            hits += sum(guess[words[:i]] == w for i, w in enumerate(words + ("<eos>",)))
            total += len(words) + 1
        scores.append(hits / total)
    assert statistics.fmean(scores) == pytest.approx(best, abs=3 * sd / 300 ** 0.5)
    assert statistics.stdev(scores) == pytest.approx(sd, rel=0.2)
    assert next_word_ceiling(200)[1] == pytest.approx(sd / 2)  # the spread shrinks as 1/√n
    assert result.best_accuracy == pytest.approx(next_word_ceiling(result.eval_n)[0])
    assert result.ceiling_spread == pytest.approx(2 * next_word_ceiling(result.eval_n)[1])


def test_the_leakiest_head_is_the_one_with_most_weight_above_the_diagonal(result):
    from model.interpret.leak_lab import leakiest_head, verdict

    att = result.runs["leaking"].attention  # (L, h, T, T)
    ahead = {(layer, head): sum(att[layer, head][q, k] for q in range(att.shape[2]) for k in range(q + 1, att.shape[3]))
             for layer in range(att.shape[0]) for head in range(att.shape[1])}
    assert leakiest_head(result) == max(ahead, key=ahead.get)
    assert f"loss {result.runs['leaking'].final_loss:.2f}" in verdict(result)


def test_the_map_choices_are_each_layers_mean_then_its_heads_the_leakiest_named():
    choices = head_choices(2, 3, leakiest=(1, 2))
    assert [choice for _, choice in choices] == [(layer, head) for layer in range(2) for head in (None, 0, 1, 2)]
    named = [text for text, choice in choices if "most ahead" in text]
    assert named == ["layer 2 · head 3 (most ahead)"]
    assert choices[0][0] == "layer 1 · mean of heads"


def test_a_runs_map_is_its_head_or_the_layers_mean_the_masked_one_blocked_above_the_diagonal(result):
    from model.interpret.leak_lab import attention_map

    for run in RUNS:
        att = result.runs[run].attention
        matrix, blocked, ahead = attention_map(result, run, 0, 1)
        assert np.array_equal(matrix, att[0, 1])
        n = matrix.shape[0]
        later = [sum(matrix[q, k] for k in range(q + 1, n)) for q in range(n)]
        assert ahead == pytest.approx(sum(later) / n)
        assert (blocked is None) == (not result.runs[run].causal_mask)
        if blocked is not None:
            assert all(blocked[q, k] == (k > q) for q in range(n) for k in range(n))
        assert np.allclose(attention_map(result, run, 0, None)[0], att[0].mean(0))
