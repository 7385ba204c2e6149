"""`train`, `average` and `bleu` under bad input (issue 36): nothing the app did not write is
deleted, flags out of range are refused before any work with a message naming the flag (exit
2, no traceback), a damaged training state is a message, a torchrun launch fails together,
and random flag values give the command's own errors, never another exception."""
import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))
from model.cli.evaluate import average_main, bleu_main  # noqa: E402
from model.cli.flags import UsageError  # noqa: E402
from model.cli.main import build_parser, check_before_work, train_main  # noqa: E402
from model.io.averaging import numbered_checkpoints, prune_steps, step_folder, steps_dir  # noqa: E402
from model.io.checkpoints import load_checkpoint, random_bundle, save_checkpoint  # noqa: E402
from test_scale_distributed import tiny_tsv  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SIZES = ["--d-model", "16", "--layers", "1", "--heads", "2", "--d-ff", "32", "--max-len", "32", "--dropout", "0",
         "--warmup", "3", "--quiet", "--threads", "1"]


def tokens_run(data: Path, out: Path, *extra: str) -> list[str]:
    return ["--data", str(data), "--tokenizer", "char", "--batch-tokens", "200", *SIZES, "--out", str(out), *extra]


def run(argv, capsys, main=train_main):
    code = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    return tiny_tsv(tmp_path_factory.mktemp("data") / "pairs.tsv", n=60)


# -- nothing deleted that the app did not write ---------------------------------------------------
def test_a_users_resume_folder_beside_out_is_kept(tmp_path, data, capsys):
    mine = tmp_path / "X.resume"
    (mine / "src").mkdir(parents=True)
    (mine / "notes.txt").write_text("my notes")
    (mine / "src" / "main.py").write_text("print('mine')")
    code, out, err = run(tokens_run(data, tmp_path / "X", "--steps", "2"), capsys)
    assert code == 1 and "X.resume" in err and "refusing to overwrite" in err
    assert (mine / "notes.txt").read_text() == "my notes" and (mine / "src" / "main.py").is_file()
    assert "trained to step" not in err  # refused before any training


def test_negative_keep_last_is_refused_and_the_kept_steps_stay(tmp_path, data, capsys):
    out = tmp_path / "run"
    code, _, err = run(tokens_run(data, out, "--steps", "2", "--save-every", "1", "--keep-last", "2"), capsys)
    assert code == 0, err
    kept = numbered_checkpoints(steps_dir(out))
    assert len(kept) == 2
    for bad in ("-1", "-7"):
        code, _, err = run(tokens_run(data, out, "--steps", "2", "--save-every", "1", "--keep-last", bad), capsys)
        assert code == 2 and f"--keep-last {bad}" in err and err.startswith("transformer-explorer train: error: ")
        assert numbered_checkpoints(steps_dir(out)) == kept


def test_pruning_kept_steps_leaves_folders_the_app_did_not_write(tmp_path):
    out = tmp_path / "run"
    bundle = random_bundle("copy", d_model=16, n_heads=2, d_ff=32, n_encoder_layers=1, n_decoder_layers=1)
    for step in (1, 2, 3):
        save_checkpoint(bundle, step_folder(out, step))
    foreign = step_folder(out, 0)
    foreign.mkdir()
    (foreign / "config.json").write_text('{"mine": true}')
    (step_folder(out, 1) / "notes.txt").write_text("added by hand")
    deleted = prune_steps(out, 1)
    assert deleted == [step_folder(out, 2)]
    assert (foreign / "config.json").is_file() and (step_folder(out, 1) / "notes.txt").is_file()
    assert step_folder(out, 3).is_dir()


def test_out_under_a_regular_file_is_refused_before_training(tmp_path, capsys):
    (tmp_path / "afile").write_text("not a folder")
    code, _, err = run(["--task", "copy", "--out", str(tmp_path / "afile" / "run"), "--steps", "200", *SIZES], capsys)
    assert code == 1 and "which is a file" in err and "trained to step" not in err


def test_average_refuses_a_users_out_folder_and_a_negative_last(tmp_path, capsys):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "thesis.tex").write_text("months of work")
    code, _, err = run([str(tmp_path / "a"), "--out", str(tmp_path / "mine")], capsys, average_main)
    assert code == 1 and "refusing to overwrite" in err
    assert (tmp_path / "mine" / "thesis.tex").read_text() == "months of work"
    code, _, err = run([str(tmp_path), "--last", "-1", "--out", str(tmp_path / "avg")], capsys, average_main)
    assert code == 1 and "--last -1" in err


# -- flags refused before any work ------------------------------------------------------------------
@pytest.mark.parametrize("flags, named", [
    (["--tokenizer", "bpe", "--vocab-size", "1000000000"], "--vocab-size 1000000000"),
    (["--tokenizer", "bpe", "--vocab-size", str(10**30)], f"--vocab-size {10**30}"),
    (["--tokenizer", "bpe", "--vocab-size", "3"], "--vocab-size 3"),
    (["--batch-tokens", "0"], "--batch-tokens 0"),
    (["--batch-tokens", "-5"], "--batch-tokens -5"),
    (["--batch-tokens", "200", "--beam", "0", "--bleu-data", "DATA"], "--beam 0"),
    (["--batch-tokens", "200", "--bleu-size", "-1"], "--bleu-size -1"),
])
def test_flags_out_of_range_exit_2_naming_flag_value_and_range(tmp_path, data, capsys, flags, named):
    flags = [str(data) if f == "DATA" else f for f in flags]
    code, _, err = run(["--data", str(data), "--out", str(tmp_path / "o"), *flags, "--steps", "1", "--quiet"], capsys)
    assert code == 2
    assert err.startswith(f"transformer-explorer train: error: {named} is out of range: give ")
    assert not (tmp_path / "o").exists()


def test_resume_refuses_model_sizes_other_than_the_saved_run(tmp_path, data, capsys):
    out = tmp_path / "r"
    assert run(tokens_run(data, out, "--steps", "2", "--save-every", "0"), capsys)[0] == 0
    before = load_checkpoint(out).model.state_dict()["src_embed.lut.weight"].clone()
    code, _, err = run(tokens_run(data, out, "--steps", "3", "--resume", "--d-model", "32"), capsys)
    assert code == 2 and "d_model 32 (saved: 16)" in err
    assert torch.equal(load_checkpoint(out).model.state_dict()["src_embed.lut.weight"], before)


def test_snapshots_with_token_batches_are_written(tmp_path, data, capsys):
    code, _, err = run(tokens_run(data, tmp_path / "z", "--steps", "2", "--save-every", "1",
                                  "--snapshots", str(tmp_path / "snaps")), capsys)
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "snaps").iterdir()) == ["step-000001", "step-000002"]
    assert load_checkpoint(tmp_path / "snaps" / "step-000002").metrics["steps"] == 2


def test_truncated_optimizer_state_is_a_message_not_a_traceback(tmp_path, data, capsys):
    out = tmp_path / "t"
    assert run(tokens_run(data, out, "--steps", "2", "--save-every", "0"), capsys)[0] == 0
    opt = tmp_path / "t.resume" / "optimizer.safetensors"
    opt.write_bytes(opt.read_bytes()[:5])
    code, _, err = run(tokens_run(data, out, "--steps", "3", "--resume"), capsys)
    assert code == 1 and "optimizer.safetensors: not a readable safetensors file, truncated or corrupt" in err


# -- bleu --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("flags, named", [(["--limit", "-1"], "--limit -1"), (["--beam", "0"], "--beam 0"),
                                          (["--beam", "-1"], "--beam -1"), (["--alpha", "nan"], "--alpha nan")])
def test_bleu_flags_out_of_range(tmp_path, capsys, flags, named):
    held = tmp_path / "h.tsv"
    held.write_text("abc\tcba\nab\tba\n")
    code, out, err = run(["--checkpoint", "reverse", "--data", str(held), *flags], capsys, bleu_main)
    assert code == 2 and f"{named} is out of range" in err and "bleu:" not in out


def test_bleu_of_a_model_that_cannot_translate_is_refused(tmp_path, capsys):
    held = tmp_path / "h.tsv"
    held.write_text("the cat\tdie Katze\n")
    for name in ("bert-facts", "gpt-facts"):
        code, out, err = run(["--checkpoint", name, "--data", str(held)], capsys, bleu_main)
        assert code == 2 and "does not translate" in err and "bleu:" not in out


# -- torchrun: every rank fails alike, one message ---------------------------------------------------
def torchrun_train(*argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                           "-m", "model.cli", "train", *argv], env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("rank, printed", [("0", True), ("1", False)])
def test_every_torchrun_rank_refuses_missing_data_before_joining_the_group(tmp_path, capsys, monkeypatch, rank,
                                                                             printed):
    import model.train.distributed as distributed

    def no_group(*_):
        raise AssertionError("the process group was joined before the flags and files were checked")

    monkeypatch.setattr(distributed, "setup", no_group)
    monkeypatch.setenv("RANK", rank)
    monkeypatch.setenv("WORLD_SIZE", "2")
    code, _, err = run(["--data", str(tmp_path / "missing.tsv"), "--tokenizer", "bpe", "--out", str(tmp_path / "o")],
                       capsys)
    assert code == 1
    assert ("missing.tsv: cannot read the file" in err) == printed and (err == "") != printed  # rank 0 alone says it


def test_a_torchrun_launch_whose_vocabulary_fails_stops_every_rank_with_one_message(tmp_path):
    bad = tmp_path / "bad.tsv"
    bad.write_text("a\tb\nno tab here\n")
    proc = torchrun_train("--data", str(bad), "--tokenizer", "bpe", "--out", str(tmp_path / "o"))
    assert proc.returncode != 0
    assert str(ROOT / "model") not in proc.stderr and "Connection closed" not in proc.stderr
    assert proc.stderr.count("transformer-explorer train: error:") == 1 and "line 2" in proc.stderr


# -- property: random flag values give the command's own errors --------------------------------------
def known_errors():
    from model.data.tasks import TaskError
    from model.data.tokenizers import TokenizerError
    from model.data.user_data import DataError
    from model.io.checkpoints import CheckpointError
    from model.io.resume import ResumeError
    from model.nn.config import ConfigError
    from model.nn.devices import DeviceError
    from model.train.config import TrainingError

    return (CheckpointError, ConfigError, DataError, DeviceError, TaskError, TokenizerError, TrainingError,
            ResumeError, UsageError)


INT_FLAGS = ["--vocab-size", "--batch-tokens", "--keep-last", "--beam", "--bleu-size", "--threads", "--seed",
             "--steps", "--batch-size", "--warmup", "--eval-every", "--eval-size", "--save-every", "--accumulate",
             "--buffer-pairs", "--d-model", "--heads", "--layers", "--d-ff", "--max-len", "--lr-decay-steps"]
FLOAT_FLAGS = ["--alpha", "--dropout", "--lr-scale", "--label-smoothing", "--clip-grad"]
ints = st.one_of(st.integers(-3, 3), st.integers(-10**6, 10**6), st.integers(-10**40, 10**40))
floats = st.floats(allow_nan=True, allow_infinity=True)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(st.one_of(st.tuples(st.sampled_from(INT_FLAGS), ints),
                                 st.tuples(st.sampled_from(FLOAT_FLAGS), floats)), max_size=5),
       scale=st.booleans())
def test_random_flag_values_give_the_commands_own_errors(tmp_path, data, values, scale):
    from model.cli.build import train_config

    argv = ["--data", str(data), "--out", str(tmp_path / "never"), *(["--tokenizer", "bpe"] if scale else [])]
    for flag, value in values:
        argv.append(f"{flag}={value!r}")  # "--alpha=-inf": argparse reads it as a value, not an option
    args = build_parser().parse_args(argv)
    try:
        check_before_work(args)
        train_config(args)
    except known_errors():
        pass
    assert not (tmp_path / "never").exists()


def test_bpe_skips_lines_longer_than_any_model_reads(tmp_path, capsys):
    """BPE's merge counting grows about quadratically with a line's length (a 1 MB line without a
    space ran for minutes); a line longer than max_len tokens could never be trained on."""
    data = tiny_tsv(tmp_path / "p.tsv", n=60)
    with open(data, "a", encoding="utf-8") as f:
        f.write("ab" * 10_000 + "\tba\n")
    code, out, err = run(["--data", str(data), "--tokenizer", "bpe", "--vocab-size", "60", *SIZES, "--steps", "1",
                          "--out", str(tmp_path / "o")], capsys)
    assert code == 0, err
    assert "skipped 1 pair(s) with a side longer than 1,600 characters" in err
    assert "abab" not in "".join(load_checkpoint(tmp_path / "o").src_tokenizer.vocab)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(st.one_of(st.tuples(st.sampled_from(["--beam", "--limit"]), ints),
                                 st.tuples(st.just("--alpha"), floats)), max_size=3))
def test_random_bleu_flags_exit_1_or_2_with_one_line(tmp_path, values):
    """Flags are checked first (2); valid ones reach the missing file (1): never a traceback."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = bleu_main(["--checkpoint", "reverse", "--data", str(tmp_path / "missing.tsv"),
                          *[f"{flag}={value!r}" for flag, value in values]])
    assert code in (1, 2)
    assert err.getvalue().startswith("transformer-explorer bleu: error: ") and err.getvalue().count("\n") == 1
