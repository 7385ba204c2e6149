"""The BERT-like and GPT-like variants (issue 7): BERT's masking rule, both objectives in the
one Trainer, prompt continuation, masked-LM fill-ins, the facts corpus and its checker."""
import math
import random

import pytest
import torch

from model.cli import train_main
from model.data.corpus import MASK_TOKEN, WORLD, check_facts, facts_sentence, facts_task
from model.data.masking import KEPT_OUT, MASK_PROB, MASKED, RANDOM, SPLIT, UNCHANGED, mask_id_of, mask_tokens
from model.data.tasks import get_task
from model.data.tokenizers import BOS_ID, EOS_ID, PAD_ID
from model.inference.bundle import InputError
from model.inference.decoding import beam_search, decode_steps, greedy_decode
from model.io.checkpoints import load_checkpoint, random_bundle, save_checkpoint
from model.train.trainer import TrainConfig, Trainer, TrainingError, masked_accuracy, next_token_accuracy

torch.set_num_threads(1)


def small(kind: str, **over):
    params = dict(d_model=32, n_heads=4, d_ff=64, dropout=0.0)
    params.update(over)
    if kind == "encoder_only":
        params["n_decoder_layers"] = 0
    else:
        params["n_encoder_layers"] = 0
    torch.manual_seed(0)
    return random_bundle("facts", kind=kind, **params)


# -- BERT's 15% / 80-10-10 rule ------------------------------------------------------------
def _ids_with_padding(n_rows=4000, width=40, vocab=60, seed=0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, vocab, (n_rows, width), generator=g)
    lengths = torch.randint(5, width + 1, (n_rows,), generator=g)
    ids[torch.arange(width)[None, :] >= lengths[:, None]] = PAD_ID
    ids[:, 0] = BOS_ID  # specials are never chosen
    return ids


def _z(count: int, n: int, p: float) -> float:
    return (count - n * p) / math.sqrt(n * p * (1 - p))


def test_masking_follows_bert_proportions_statistically():
    """15% of real tokens chosen; of those 80% [MASK], 10% random, 10% unchanged. Each
    proportion within 4 standard errors, and a chi-square test of the 4-way outcome."""
    ids = _ids_with_padding()
    candidates = torch.arange(5, 60)
    out = mask_tokens(ids, mask_id=4, candidates=candidates, special_ids=(PAD_ID, BOS_ID, EOS_ID),
                      generator=torch.Generator().manual_seed(1))
    real = (ids != PAD_ID) & (ids != BOS_ID)
    n_real = int(real.sum())
    d = out.decision
    assert not bool((d[~real] != KEPT_OUT).any()), "a special or padding position was chosen"
    chosen = d != KEPT_OUT
    n_chosen = int(chosen.sum())
    assert abs(_z(n_chosen, n_real, MASK_PROB)) < 4, n_chosen / n_real
    for code, p in zip((MASKED, RANDOM, UNCHANGED), SPLIT):
        count = int((d == code).sum())
        assert abs(_z(count, n_chosen, p)) < 4, (code, count / n_chosen)
    # chi-square over every real token: kept out / [MASK] / random / unchanged (df = 3)
    expected = [1 - MASK_PROB] + [MASK_PROB * p for p in SPLIT]
    observed = [int(((d == c) & real).sum()) for c in (KEPT_OUT, MASKED, RANDOM, UNCHANGED)]
    chi2 = sum((o - n_real * e) ** 2 / (n_real * e) for o, e in zip(observed, expected))
    assert chi2 < 16.27, f"chi2 {chi2:.1f} ≥ 16.27 (p < 0.001 at df 3): {observed}"


def test_masking_rewrites_inputs_and_labels_as_the_rule_says():
    ids = _ids_with_padding(n_rows=500)
    candidates = torch.arange(5, 60)
    out = mask_tokens(ids, 4, candidates, (PAD_ID, BOS_ID, EOS_ID), ignore_id=-100,
                      generator=torch.Generator().manual_seed(2))
    d = out.decision
    assert bool((out.inputs[d == MASKED] == 4).all())
    assert bool((out.inputs[d == UNCHANGED] == ids[d == UNCHANGED]).all())
    assert bool((out.inputs[d == KEPT_OUT] == ids[d == KEPT_OUT]).all())
    random_picks = out.inputs[d == RANDOM]
    assert bool(torch.isin(random_picks, candidates).all())
    # random replacements are spread over the candidates (not one fixed word)
    assert len(set(random_picks.tolist())) > len(candidates) // 2
    assert bool((out.labels[d != KEPT_OUT] == ids[d != KEPT_OUT]).all())
    assert bool((out.labels[d == KEPT_OUT] == -100).all())


def test_masking_repeats_with_a_seed_and_differs_without():
    ids = _ids_with_padding(n_rows=50)
    a = mask_tokens(ids, 4, torch.arange(5, 60), (0, 1), generator=torch.Generator().manual_seed(3))
    b = mask_tokens(ids, 4, torch.arange(5, 60), (0, 1), generator=torch.Generator().manual_seed(3))
    c = mask_tokens(ids, 4, torch.arange(5, 60), (0, 1), generator=torch.Generator().manual_seed(4))
    assert torch.equal(a.inputs, b.inputs) and torch.equal(a.decision, b.decision)
    assert not torch.equal(a.decision, c.decision)


def test_trainer_mlm_batches_label_only_chosen_positions():
    bundle = small("encoder_only")
    trainer = Trainer(bundle, config=TrainConfig(steps=1, batch_size=256, warmup=10))
    assert trainer.objective == "mlm" and trainer.metric == "masked_accuracy"
    batch = trainer.next_batch()
    logits, labels, _ = trainer._forward(batch)
    labels = labels.cpu()  # the trainer's device (CUDA where there is one); the batch stays on the CPU
    real = batch.src != PAD_ID
    labelled = labels != PAD_ID
    assert not bool((labelled & ~real).any())
    frac = int(labelled.sum()) / int(real.sum())
    assert abs(_z(int(labelled.sum()), int(real.sum()), MASK_PROB)) < 4, frac
    assert bool((labels[labelled] == batch.src[labelled]).all())  # the original token is the label
    assert logits.shape == (*batch.src.shape, len(bundle.src_tokenizer))


# -- both objectives learn -----------------------------------------------------------------
def test_masked_lm_training_learns_to_fill_blanks():
    bundle = small("encoder_only")
    trainer = Trainer(bundle, config=TrainConfig(steps=250, batch_size=64, warmup=60, seed=0))
    before = trainer.evaluate(100).score
    trainer.run()
    after = trainer.evaluate(100)
    assert after.metric == "masked_accuracy" and after.n == 100
    assert before < 0.1 and after.score > 0.4, (before, after.score)
    assert trainer.metrics()["masked_accuracy"] == after.score and trainer.metrics()["objective"] == "mlm"


def test_next_token_training_learns_the_corpus():
    bundle = small("decoder_only")
    trainer = Trainer(bundle, config=TrainConfig(steps=250, batch_size=64, warmup=60, seed=0))
    before = trainer.evaluate(100).score
    trainer.run()
    after = trainer.evaluate(100)
    assert after.metric == "next_token_accuracy"
    assert before < 0.1 and after.score > 0.45, (before, after.score)
    prompt, _, continuation = after.examples[0]
    assert continuation.startswith(prompt)  # the example shows the prompt and what followed


def test_masked_accuracy_matches_a_hand_computation():
    bundle = small("encoder_only")
    tok, model = bundle.src_tokenizer, bundle.model.eval()
    mask = mask_id_of(tok)
    texts = ["the cow says moo .", "a duck eats bread ."]
    score, examples = masked_accuracy(model, tok, texts, mask)
    hits = total = 0
    for text in texts:
        ids = tok.encode(text).ids
        for i in range(len(ids)):
            x = torch.tensor([ids[:i] + [mask] + ids[i + 1:]])
            hits += int(model(x)[0, i].argmax()) == ids[i]
            total += 1
    assert score == pytest.approx(hits / total)
    assert examples[0][0].split()[2] == MASK_TOKEN and examples[0][1] == texts[0]


def test_next_token_accuracy_matches_a_hand_computation():
    bundle = small("decoder_only")
    tok, model = bundle.tgt_tokenizer, bundle.model.eval()
    texts = ["the cow says moo .", "a big duck eats bread and is white ."]
    score, _ = next_token_accuracy(model, tok, texts)
    hits = total = 0
    for text in texts:
        ids = tok.encode(text).ids
        logits = model(None, torch.tensor([[BOS_ID] + ids]))[0]
        for t, want in enumerate(ids + [EOS_ID]):
            hits += int(logits[t].argmax()) == want
            total += 1
    assert score == pytest.approx(hits / total)


def test_mlm_needs_a_mask_token():
    bundle = random_bundle("reverse", kind="encoder_only", n_decoder_layers=0, d_model=32, n_heads=4, d_ff=64)
    with pytest.raises(TrainingError, match=r"\[MASK\]"):
        Trainer(bundle)


# -- decoder-only continuation ---------------------------------------------------------------
def test_decoder_only_run_continues_the_prompt():
    bundle = small("decoder_only")
    prompt = bundle.src_tokenizer.encode("the duck").ids
    result = bundle.run("the duck")
    assert result.n_prompt == 2 and result.src_pieces == []
    assert result.tgt_pieces[:3] == ["<bos>", "the", "duck"]
    y = bundle.tgt_tokenizer.encode(result.output_text).ids
    assert result.out_pieces == bundle.tgt_tokenizer.pieces(prompt + y + [EOS_ID])
    # the continuation is the greedy one from <bos> + prompt, computed independently
    seq = [BOS_ID] + prompt
    model = bundle.model.eval()
    while len(seq) < bundle.config.max_len:
        logits = model(None, torch.tensor([seq]))[0, -1]
        logits[[BOS_ID, PAD_ID]] = -float("inf")
        nxt = int(logits.argmax())
        if nxt == EOS_ID:
            break
        seq.append(nxt)
        if len(seq) - 1 - len(prompt) >= bundle.default_max_output(len(prompt)):
            break
    assert seq[1 + len(prompt):] == y
    # the recorded self-attention covers prompt and continuation, causally
    w = result.trace.attention("decoder_self", 0)[0]
    n = len(result.tgt_pieces)
    assert w.shape[-2:] == (n, n) and float(w.triu(1).abs().max()) == 0.0


def test_prompt_changes_what_a_decoder_only_model_writes():
    bundle = small("decoder_only")
    torch.manual_seed(1)
    trainer = Trainer(bundle, config=TrainConfig(steps=200, batch_size=64, warmup=60))
    trainer.run()
    outs = {bundle.translate(p) for p in ("the cow", "the dog", "a frog lives in the")}
    assert len(outs) == 3


def test_beam_and_steps_with_a_prompt():
    bundle = small("decoder_only")
    model = bundle.model.eval()
    prompt = bundle.src_tokenizer.encode("the cow says").ids
    greedy = greedy_decode(model, None, BOS_ID, EOS_ID, 8 + len(prompt),
                           prefix=torch.tensor([[BOS_ID] + prompt]))[0].tolist()
    beam = beam_search(model, None, BOS_ID, EOS_ID, 8, beam_size=1, prompt=prompt)
    assert beam.tokens == [t for t in greedy if t != PAD_ID]  # beam 1 is greedy
    assert [n.prompt for n in beam.nodes[1:1 + len(prompt)]] == [True] * len(prompt)
    steps = list(decode_steps(model, None, BOS_ID, EOS_ID, 8, prompt=prompt))
    assert steps[0].prefix == [BOS_ID] + prompt and steps[0].n_prompt == len(prompt)
    assert steps[0].self_attention.shape[-1] == len(prompt) + 1
    assert [s.chosen for s in steps] == greedy[1 + len(prompt):1 + len(prompt) + len(steps)]


def test_decoder_only_prompt_too_long_is_refused():
    bundle = small("decoder_only", max_len=8)
    with pytest.raises(InputError, match="at most"):
        bundle.run("the cow says moo and eats grass .")


# -- masked-LM fill-ins ----------------------------------------------------------------------
def test_mask_predictions_are_the_models_softmax_at_each_mask():
    bundle = small("encoder_only")
    assert bundle.fills_masks and bundle.mask_token == MASK_TOKEN
    text = "the [MASK] says moo and eats [MASK] ."
    result = bundle.run(text)
    ids = bundle.src_tokenizer.encode(text).ids
    probs = bundle.model.eval()(torch.tensor([ids]))[0].softmax(-1)
    assert [m.position for m in result.mask_predictions] == [1, 6]
    for m in result.mask_predictions:
        top = probs[m.position].topk(5)
        assert m.pieces == bundle.src_tokenizer.pieces(top.indices.tolist())
        assert m.probs == pytest.approx(top.values.tolist(), abs=1e-6)
    words = result.output_text.split()
    assert words[0] == "the" and words[2:6] == ["says", "moo", "and", "eats"]  # only the blanks change
    assert words[1] == result.mask_predictions[0].pieces[0] and words[6] == result.mask_predictions[1].pieces[0]


def test_examples_fit_the_kind():
    assert all(MASK_TOKEN in e for e in small("encoder_only").examples)
    assert all(MASK_TOKEN not in e for e in small("decoder_only").examples)


@pytest.mark.parametrize("kind", ["encoder_only", "decoder_only"])
def test_variant_checkpoints_round_trip(kind, tmp_path):
    bundle = small(kind)
    save_checkpoint(bundle, tmp_path / "m")
    loaded = load_checkpoint(tmp_path / "m")
    text = "the [MASK] says moo" if kind == "encoder_only" else "the cow"
    a, b = bundle.run(text), loaded.run(text)
    assert loaded.config.kind == kind and a.output_text == b.output_text
    assert torch.allclose(a.trace["generator.logits"].tensor, b.trace["generator.logits"].tensor, atol=1e-6)


def test_cli_trains_a_masked_lm(tmp_path, capsys):
    code = train_main(["--task", "facts", "--kind", "encoder_only", "--out", str(tmp_path / "bert"),
                       "--steps", "5", "--d-model", "32", "--eval-size", "20", "--quiet"])
    assert code == 0
    assert "eval masked_accuracy:" in capsys.readouterr().out
    bundle = load_checkpoint(tmp_path / "bert")
    assert bundle.config.kind == "encoder_only" and bundle.config.n_decoder_layers == 0
    assert bundle.metrics["objective"] == "mlm" and "masked_accuracy" in bundle.metrics


# -- the corpus ------------------------------------------------------------------------------
def test_facts_sentences_state_only_true_facts():
    rng = random.Random(0)
    for _ in range(500):
        s = facts_sentence(rng)
        true, false = check_facts(s)
        assert true >= 1 and false == 0, s
        assert MASK_TOKEN not in s and s.endswith(" .")


def test_check_facts_counts_false_statements():
    assert check_facts("the cow says moo and eats grass .") == (2, 0)
    assert check_facts("the cow says woof , lives in the barn and eats bones .") == (1, 2)
    assert check_facts("hello world") == (0, 0)


def test_facts_vocabulary_covers_the_corpus_and_mask():
    task = facts_task()
    src, tgt = task.build_tokenizers()
    assert src.vocab == tgt.vocab and MASK_TOKEN in src.index
    rng = random.Random(1)
    for _ in range(200):
        assert not src.encode(facts_sentence(rng)).has_unknown
    assert get_task("facts").name == "facts" and len(WORLD) == 16


def test_sentence_distribution_is_the_generators():
    """The exact distribution behind best_possible_scores matches what facts_sentence draws."""
    from collections import Counter

    from model.data.corpus import best_possible_scores, sentence_distribution

    dist = sentence_distribution()
    assert sum(dist.values()) == pytest.approx(1.0)
    rng = random.Random(7)
    n = 20000
    drawn = [tuple(facts_sentence(rng).split()) for _ in range(n)]
    assert all(s in dist for s in drawn)
    for feature, p in (("a", 1 / 3),):  # determiner "a" one time in three
        count = sum(s[0] == feature for s in drawn)
        assert abs(_z(count, n, p)) < 4
    lengths = Counter(sum(w in ("says", "lives", "eats", "is") for w in s) for s in drawn)
    for k, p in ((1, 0.25), (2, 0.5), (3, 0.25)):
        assert abs(_z(lengths[k], n, p)) < 4
    # a perfect predictor of the corpus cannot guess free choices, but gets facts right
    masked, nxt = best_possible_scores(["a cow says moo ."])
    assert masked == pytest.approx(4 / 5)  # a masked "a" is guessed "the" (2/3 prior); cow, says, moo, "." are forced
    assert 0 < nxt < 1


# -- a user's own text file --------------------------------------------------------------------
def _lines(tmp_path, text):
    path = tmp_path / "lines.txt"
    path.write_text(text, encoding="utf-8")
    return path


def test_char_tokenizer_reads_mask_as_one_token_only_when_it_has_one():
    from model.data.tokenizers import CharTokenizer

    plain = CharTokenizer.from_texts(["ab[]MASK"])
    assert plain.split("a[MASK]") == list("a[MASK]")
    masked = CharTokenizer(plain.vocab + [MASK_TOKEN])
    assert masked.split("a[MASK]b") == ["a", MASK_TOKEN, "b"]
    assert masked.decode(masked.encode("a[MASK]b").ids) == "a[MASK]b"


def test_text_file_trains_both_variants_and_round_trips(tmp_path, capsys):
    from model.data.user_data import text_task
    from model.train.trainer import task_from_info

    path = _lines(tmp_path, "\n".join(facts_sentence(random.Random(i)) for i in range(60)) + "\n\n")
    task = text_task(path, "char")
    src, tgt = task.build_tokenizers()
    assert MASK_TOKEN in src.index and src.split("th[MASK]")[-1] == MASK_TOKEN
    assert all(s == t for s, t in task.split_pairs["train"]) and task.split_pairs["eval"]
    for kind, metric in (("encoder_only", "masked_accuracy"), ("decoder_only", "next_token_accuracy")):
        out = tmp_path / kind
        code = train_main(["--text", str(path), "--kind", kind, "--out", str(out), "--steps", "3",
                           "--d-model", "32", "--eval-size", "5", "--quiet"])
        assert code == 0
        assert f"eval {metric}:" in capsys.readouterr().out
        bundle = load_checkpoint(out)
        assert task_from_info(bundle.task).split_pairs == task.split_pairs  # the checkpoint names its corpus
    assert load_checkpoint(tmp_path / "encoder_only").run("the c[MASK]w says moo").mask_predictions


@pytest.mark.parametrize("content, message", [
    ("one line only\n", "at least 2"),
    ("a line\nwith [MASK] in it\n", "line 2: contains"),
    ("ok\n" + "x" * 1001 + "\n", "line 2: 1001 characters"),
])
def test_bad_text_files_are_refused_with_the_line(tmp_path, content, message):
    from model.data.user_data import DataError, text_task

    with pytest.raises(DataError, match=message):
        text_task(_lines(tmp_path, content))


def test_text_needs_a_variant_kind(tmp_path, capsys):
    path = _lines(tmp_path, "a b\nc d\n")
    assert train_main(["--text", str(path), "--out", str(tmp_path / "o"), "--steps", "1"]) == 2
    assert "--kind encoder_only" in capsys.readouterr().err


def test_long_texts_are_scored_at_a_bounded_number_of_positions():
    from model.train.trainer import scored_positions

    assert scored_positions(10, 16) == list(range(10))
    pos = scored_positions(40, 16)
    assert pos[0] == 0 and pos[-1] == 39 and 20 in pos and 16 <= len(pos) <= 17 and len(set(pos)) == len(pos)
    bundle = small("encoder_only", max_len=64)
    tok, model = bundle.src_tokenizer, bundle.model.eval()
    long_text = " ".join(["the cow says moo , a duck eats bread ."] * 4)  # 40 tokens
    ids = tok.encode(long_text).ids
    assert len(ids) == 40
    mask = mask_id_of(tok)
    hits = [int(model(torch.tensor([ids[:i] + [mask] + ids[i + 1:]]))[0, i].argmax()) == ids[i] for i in pos]
    score, _ = masked_accuracy(model, tok, [long_text], mask, max_positions=16)
    assert score == pytest.approx(sum(hits) / len(pos))
