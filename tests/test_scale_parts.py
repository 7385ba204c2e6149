"""The parts of training at scale (issue 17), each against an independent reference: BPE
round-trips text and shows sub-word pieces in the app; token batches stay within the budget and
slots partition the corpus; a streamed slot resumes where it stopped; averaging is the mean of
the tensors; BLEU of a perfect output is 100; bf16 autocast runs on the CPU; a resumed run
continues the schedule at the saved step and ends where an unbroken run ends."""
import random
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))
from model.cli.evaluate import average_main  # noqa: E402
from model.cli.main import train_main  # noqa: E402
from model.data.batching import SlotStream, token_batches, tsv_lines  # noqa: E402
from model.data.bpe import WORD_START, BPETokenizer  # noqa: E402
from model.inference.bundle import ModelBundle  # noqa: E402
from model.io.averaging import average_checkpoints, last_checkpoints, step_folder, steps_dir  # noqa: E402
from model.io.checkpoints import bundled_checkpoints, load_checkpoint, random_bundle, save_checkpoint  # noqa: E402
from model.io.resume import read_state  # noqa: E402
from model.nn.config import TransformerConfig  # noqa: E402
from model.nn.transformer import Transformer  # noqa: E402
from model.train.bleu import beam_translate, bleu_score  # noqa: E402
from model.train.optimizer import noam_lr  # noqa: E402
from test_scale_distributed import tiny_tsv  # noqa: E402

CORPUS = ["the cat sat on the mat", "the dog sat on the log", "a cat and a dog", "die Katze sitzt auf der Matte",
          "der Hund sitzt auf dem Baumstamm", "eine Katze und ein Hund"] * 20


@pytest.fixture(scope="module")
def bpe():
    return BPETokenizer.train(CORPUS, vocab_size=90, min_frequency=2)


def test_bpe_round_trips_text_and_keeps_sub_words(bpe):
    for text in ["the cat sat on the mat", "a dog and die Katze", "the mats sat", "Hund und Katze"]:
        enc = bpe.encode(text)
        assert not enc.unknown and bpe.decode(enc.ids) == text
    pieces = bpe.encode("the mats").pieces
    assert pieces[0] == WORD_START + "the" and len(pieces) > 2  # "mats" is not a word of the corpus: split
    assert "".join(pieces).replace(WORD_START, " ").strip() == "the mats"
    assert bpe.vocab[:4] == ["<pad>", "<bos>", "<eos>", "<unk>"]
    unknown = bpe.encode("the cat!")
    assert unknown.unknown == [(len(unknown.ids) - 1, "!")]  # reported with the text it replaced
    again = BPETokenizer.from_dict(bpe.to_dict())
    assert again.vocab == bpe.vocab and again.encode("the log").ids == bpe.encode("the log").ids


def test_bpe_checkpoint_opens_with_sub_word_axes(bpe, tmp_path):
    torch.manual_seed(0)
    config = TransformerConfig(src_vocab_size=len(bpe), tgt_vocab_size=len(bpe), d_model=16, n_heads=2, d_ff=32,
                               n_encoder_layers=1, n_decoder_layers=1, max_len=32, share_embeddings=True)
    save_checkpoint(ModelBundle(Transformer(config), bpe, bpe, {"name": "bpe"}, {}), tmp_path / "ck")
    bundle = load_checkpoint(tmp_path / "ck")
    assert isinstance(bundle.src_tokenizer, BPETokenizer) and bundle.src_tokenizer.vocab == bpe.vocab
    result = bundle.run("the mats", target="die Katze")
    assert result.src_pieces == bpe.encode("the mats").pieces
    assert result.tgt_pieces[1:] == bpe.encode("die Katze").pieces


def test_token_batches_never_exceed_the_budget():
    rng = random.Random(3)
    rows = [([1] * rng.randint(1, 40), [1] * rng.randint(1, 40)) for _ in range(500)]
    for budget in (40, 100, 777):
        groups = token_batches(rows, budget)
        for g in groups:
            assert len(g) * max(len(rows[i][0]) for i in g) <= budget
            assert len(g) * max(len(rows[i][1]) + 1 for i in g) <= budget
        fitting = [i for i, (s, t) in enumerate(rows) if len(s) <= budget and len(t) + 1 <= budget]
        assert sorted(i for g in groups for i in g) == fitting  # each fitting pair exactly once


def test_slots_partition_the_stream_and_resume_where_they_stopped(tmp_path):
    from model.data.tokenizers import CharTokenizer

    data = tiny_tsv(tmp_path / "p.tsv", n=90)
    tok = CharTokenizer.from_texts(["abcdefgh"])
    lines = [pair[0] for _, _, pair in tsv_lines(data)]
    for slot in range(3):
        stream = SlotStream(data, tok, tok, 60, slot, 3, 32, buffer_pairs=10)
        for _ in range(8):  # beyond one pass over the slot's 30 lines
            next(stream)
        after = next(stream)
        resumed = SlotStream(data, tok, tok, 60, slot, 3, 32, buffer_pairs=10, position=stream.position)
        resumed_first = next(resumed)
        assert torch.equal(resumed_first.src, next(stream).src)
        assert not torch.equal(resumed_first.src, after.src) or after.src.size(0) == 1
    for slot in range(3):
        mine = SlotStream(data, tok, tok, 1000, slot, 3, 32, buffer_pairs=100)
        got = {tok.decode(r.tolist()) for r in next(mine).src}
        assert got == set(lines[slot::3])  # slot k holds lines k, k+3, …


def test_average_is_the_mean_of_the_tensors(tmp_path):
    out = tmp_path / "run"
    states = []
    for k, step in enumerate((10, 20, 30, 40)):
        torch.manual_seed(k)
        bundle = random_bundle("reverse", d_model=16, n_heads=2, d_ff=32, n_encoder_layers=1, n_decoder_layers=1)
        save_checkpoint(bundle, step_folder(out, step))
        states.append(bundle.model.state_dict())
    paths = last_checkpoints(steps_dir(out), 3)
    assert [p.name for p in paths] == ["step-00000020", "step-00000030", "step-00000040"]
    averaged = average_checkpoints(paths).model.state_dict()
    for name, tensor in averaged.items():
        expected = (states[1][name].double() + states[2][name].double() + states[3][name].double()) / 3
        assert torch.allclose(tensor.double(), expected, atol=1e-7), name
    assert average_main(["--last", "3", str(steps_dir(out)), "--out", str(tmp_path / "avg")]) == 0  # the command
    written = load_checkpoint(tmp_path / "avg").model.state_dict()
    assert all(torch.equal(written[name], t) for name, t in averaged.items())
    assert average_main(["--last", "9", str(steps_dir(out)), "--out", str(tmp_path / "avg9")]) == 1  # a clear error


def test_bleu_of_a_perfect_output_is_100():
    refs = ["the cat sat on the mat", "a dog and a cat sat on the log today"]
    assert bleu_score(refs, refs) == pytest.approx(100.0)
    assert bleu_score(["the cat sat on a mat", "a dog sat on the log"], refs) < 100.0
    bundle = load_checkpoint(bundled_checkpoints()["translation"])
    sources = bundle.task["examples"]
    outputs = beam_translate(bundle, sources, beam_size=4, alpha=0.6)
    limits = [min(len(bundle.src_tokenizer.encode(s).ids) + 50, bundle.config.max_len - 1) for s in sources]
    assert outputs == [bundle.translate(s, method="beam", beam_size=4, alpha=0.6, max_len=n)
                       for s, n in zip(sources, limits)]
    assert all(len(o.split()) >= 4 for o in outputs)
    assert bleu_score(outputs, outputs) == pytest.approx(100.0)


def test_bf16_autocast_runs_on_the_cpu(tmp_path):
    from model.train.trainer import TrainConfig, Trainer
    from scale_worker import tiny_model

    data = str(tiny_tsv(tmp_path / "p.tsv", n=40))
    losses, dtypes = {}, []
    for precision in ("fp32", "bf16"):
        bundle = tiny_model(data)
        trainer = Trainer(bundle, None, TrainConfig(steps=1, batch_tokens=200, precision=precision, warmup=4,
                                                    device="cpu"), data=data)
        hook = bundle.model.generator.register_forward_hook(lambda m, i, o: dtypes.append(o.dtype))
        losses[precision] = trainer.step().loss
        hook.remove()
    assert dtypes == [torch.float32, torch.bfloat16]
    assert abs(losses["bf16"] - losses["fp32"]) < 0.05 * losses["fp32"]


def test_resume_continues_the_schedule_at_the_saved_step(tmp_path):
    data = tiny_tsv(tmp_path / "p.tsv", n=120)
    common = ["--data", str(data), "--tokenizer", "char", "--batch-tokens", "200", "--d-model", "16", "--layers", "1",
              "--heads", "2", "--d-ff", "32", "--max-len", "32", "--dropout", "0", "--warmup", "3", "--quiet",
              "--save-every", "0"]
    assert train_main(common + ["--steps", "5", "--out", str(tmp_path / "straight")]) == 0
    assert train_main(common + ["--steps", "2", "--out", str(tmp_path / "broken")]) == 0
    info, _, _ = read_state(tmp_path / "broken")
    assert info["step"] == 2 and info["scheduler"]["last_epoch"] == 2
    assert train_main(common + ["--steps", "5", "--out", str(tmp_path / "broken"), "--resume"]) == 0
    info, _, _ = read_state(tmp_path / "broken")
    assert info["step"] == 5 and info["scheduler"]["last_epoch"] == 5
    assert info["optimizer"]["param_groups"][0]["lr"] == pytest.approx(noam_lr(6, 16, 3))
    straight, resumed = load_checkpoint(tmp_path / "straight"), load_checkpoint(tmp_path / "broken")
    assert resumed.metrics["steps"] == 5
    from model.train.request import continue_refusal

    assert "--resume" in continue_refusal(resumed)  # the app's Training tab says where it continues
    for name, tensor in straight.model.state_dict().items():
        assert torch.allclose(resumed.model.state_dict()[name], tensor, atol=1e-6), name
