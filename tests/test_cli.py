"""`transformer-explorer train`: trains, saves a loadable checkpoint, reports exact match;
bad arguments and bad files give one clear line and a non-zero exit, never a traceback."""
import re
import subprocess
import sys

import pytest
import torch

from model.cli.main import Progress, train_main
from model.io.checkpoints import load_checkpoint

torch.set_num_threads(1)
TINY = ["--d-model", "32", "--heads", "2", "--layers", "1", "--d-ff", "64", "--batch-size", "16", "--threads", "1"]


def run(argv, capsys):
    code = train_main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def test_trains_saves_and_reports(tmp_path, capsys):
    out_dir = tmp_path / "rev"
    code, out, err = run(["--task", "reverse", "--out", str(out_dir), "--steps", "30", "--eval-size", "40",
                          "--save-every", "10", "--seed", "3", *TINY], capsys)
    assert code == 0
    assert re.fullmatch(r"eval exact_match: \d\.\d{3} \(n=40\)\n", out)
    assert "step 30/30" in err and "steps/s" in err and "ETA" in err and "loss" in err
    b = load_checkpoint(out_dir)
    assert b.metrics["steps"] == 30 and b.metrics["eval_size"] == 40
    assert b.metrics["command"].startswith("transformer-explorer train --task reverse")
    c = b.config
    assert (c.d_model, c.n_heads, c.n_encoder_layers, c.d_ff, c.norm_first) == (32, 2, 1, 64, False)
    assert b.task["name"] == "reverse"


def test_entry_point_dispatches_without_qt(tmp_path):
    code = ("import sys; from explorer.__main__ import main; rc = main(sys.argv[1:]); "
            "assert not any(m.startswith(('PySide6', 'pyqtgraph')) for m in sys.modules), 'Qt imported'; sys.exit(rc)")
    proc = subprocess.run([sys.executable, "-c", code, "train", "--task", "copy", "--out", str(tmp_path / "c"),
                           "--steps", "5", "--eval-size", "10", *TINY], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("eval exact_match: ")


def test_init_continues_and_pre_ln(tmp_path, capsys):
    first = tmp_path / "a"
    assert run(["--task", "copy", "--out", str(first), "--steps", "8", "--eval-size", "10", "--pre-ln", *TINY],
               capsys)[0] == 0
    second = tmp_path / "b"
    code, out, err = run(["--init", str(first), "--out", str(second), "--steps", "4", "--eval-size", "10",
                          "--threads", "1"], capsys)
    assert code == 0, err
    b = load_checkpoint(second)
    assert b.metrics["steps"] == 12 and b.config.norm_first and b.task["name"] == "copy"
    code, out, err = run(["--init", str(first), "--out", str(second), "--d-model", "64"], capsys)
    assert code == 2 and "drop d_model" in err


def test_tsv_data_with_word_tokenizer(tmp_path, capsys):
    data = tmp_path / "pairs.tsv"
    data.write_text("".join(f"w{i % 7} v{i % 5}\tx{i % 5} y{i % 7}\n" for i in range(60)), encoding="utf-8")
    code, out, err = run(["--data", str(data), "--tokenizer", "word", "--out", str(tmp_path / "m"), "--steps", "5",
                          "--eval-size", "10", *TINY], capsys)
    assert code == 0, err
    b = load_checkpoint(tmp_path / "m")
    assert b.src_tokenizer.kind == "word" and "w3" in b.src_tokenizer.vocab


@pytest.mark.parametrize("argv, message, status", [
    (["--out", "X"], "say what to learn: --task NAME", 2),  # a usage error exits 2, as argparse's do
    (["--task", "juggling", "--out", "X"], "unknown task 'juggling'", 1),
    (["--task", "reverse", "--out", "X", "--d-model", "30", "--heads", "4"], "must be divisible by n_heads", 1),
    (["--task", "reverse", "--out", "X", "--device", "tpu"], "unknown device 'tpu'", 1),
    (["--task", "reverse", "--out", "X", "--steps", "0"], "--steps 0 is out of range", 2),
    (["--task", "reverse", "--out", "X", "--max-len", "8"], "max_len is 8", 1),
    (["--data", "DATA", "--out", "X"], "line 2: expected 'source<TAB>target'", 1),
    (["--data", "MISSING", "--out", "X"], "cannot read the file", 1),
    (["--task", "reverse", "--init", "MISSING", "--out", "X"], "no such file or folder", 1),
])
def test_errors_are_one_clear_line(tmp_path, capsys, argv, message, status):
    data = tmp_path / "bad.tsv"
    data.write_text("a\tb\nno tab\n")
    argv = [{"X": str(tmp_path / "out"), "DATA": str(data), "MISSING": str(tmp_path / "missing")}.get(a, a)
            for a in argv]
    code, out, err = run(argv + ["--threads", "1"], capsys)
    assert code == status
    assert err.startswith("transformer-explorer train: error: ") and message in err
    assert not (tmp_path / "out").exists()


def test_out_folder_that_is_not_a_checkpoint_is_kept(tmp_path, capsys):
    (tmp_path / "thesis.tex").write_text("months of work")
    code, out, err = run(["--task", "copy", "--out", str(tmp_path), "--steps", "2", "--eval-size", "5", *TINY],
                         capsys)
    assert code == 1 and "refusing to overwrite" in err
    assert (tmp_path / "thesis.tex").read_text() == "months of work"


def test_argparse_errors_exit_2_without_traceback(capsys):
    code, out, err = run(["--task", "reverse"], capsys)  # --out missing
    assert code == 2 and "--out" in err
    code, out, err = run(["--help"], capsys)
    assert code == 0 and "--warmup" in out


def test_progress_bar_format():
    import io

    buf = io.StringIO()
    p = Progress(100, stream=buf)
    p.update(50, 1.2345, force=True)
    line = buf.getvalue()
    assert re.match(r"step 50/100 \[#{12}\.{12}\]  50% +[\d.]+ steps/s loss 1\.2345 ETA \d\d:\d\d\n", line)


def test_stop_at_ends_training_early(tmp_path, capsys):
    code, out, err = run(["--task", "copy", "--out", str(tmp_path / "s"), "--steps", "500", "--eval-every", "5",
                          "--eval-size", "10", "--stop-at", "0.0", *TINY], capsys)
    assert code == 0 and "reached --stop-at 0.0" in err
    assert load_checkpoint(tmp_path / "s").metrics["steps"] == 5
    code, out, err = run(["--task", "copy", "--out", str(tmp_path / "t"), "--stop-at", "0.9"], capsys)
    assert code == 2 and "--stop-at needs --eval-every" in err
