"""The lecture preset (issue 18): the CLI and the training panel run the preset's own
settings, and the panel shows the time to its target.

What the preset achieves in seconds is measured by benchmarks/lecture_demo.py, not here.
"""
from __future__ import annotations

import json

import pytest
import torch

from model.cli.main import _train_config, build_parser, train_main
from model.train.presets import LECTURE_PRESETS, antidiagonal_mass, lecture_bundle, lecture_preset
from model.train.trainer import TrainingError


def test_reverse_preset_is_one_to_sixteen_letters_with_its_model():
    preset = lecture_preset("reverse")
    task = preset.build_task()
    assert task.max_src_len == 16 and task.params == {"min_len": 1, "max_len": 16}
    bundle = lecture_bundle(preset, task)
    c = bundle.config
    assert (c.d_model, c.n_heads, c.d_ff, c.n_encoder_layers, c.n_decoder_layers, c.dropout) == (
        preset.model["d_model"], preset.model["n_heads"], preset.model["d_ff"], preset.model["n_encoder_layers"],
        preset.model["n_decoder_layers"], preset.model["dropout"])
    assert set(LECTURE_PRESETS) == {"reverse", "translation", "facts"}
    assert lecture_preset("facts").kind == "decoder_only"
    with pytest.raises(TrainingError, match="no lecture preset for task 'sort'"):
        lecture_preset("sort")


def test_the_cli_preset_uses_the_presets_schedule_and_lets_flags_override_it():
    preset = lecture_preset("reverse")
    args = build_parser().parse_args(["--preset", "lecture", "--task", "reverse", "--out", "x"])
    cfg = _train_config(args)
    assert (cfg.steps, cfg.batch_size, cfg.warmup, cfg.lr_scale, cfg.lr_decay_steps, cfg.label_smoothing) == (
        preset.steps, preset.batch_size, preset.warmup, preset.lr_scale, preset.lr_decay_steps, preset.label_smoothing)
    assert preset.lr_decay_steps > preset.warmup  # the measured schedule anneals (model.train.presets.REVERSE_MEASURED)
    assert args.stop_at == preset.target and cfg.eval_every > 0
    args = build_parser().parse_args(["--preset", "lecture", "--task", "reverse", "--out", "x", "--warmup", "7"])
    assert _train_config(args).warmup == 7
    plain = _train_config(build_parser().parse_args(["--task", "reverse", "--out", "x"]))
    assert (plain.steps, plain.batch_size, plain.warmup, plain.lr_scale, plain.lr_decay_steps) == (2000, 64, 400, 1.0, 0)
    decayed = _train_config(build_parser().parse_args(["--task", "reverse", "--out", "x", "--lr-decay-steps", "900"]))
    assert decayed.lr_decay_steps == 900


def test_cli_lecture_run_saves_the_presets_model(tmp_path, capsys):
    out = tmp_path / "lecture"
    code = train_main(["--preset", "lecture", "--task", "reverse", "--out", str(out), "--steps", "3",
                       "--eval-size", "5", "--quiet", "--threads", "1"])
    assert code == 0, capsys.readouterr().err
    saved = json.loads((out / "config.json").read_text())
    preset = lecture_preset("reverse")
    assert {k: saved["model"][k] for k in preset.model} == preset.model
    assert saved["metrics"]["train_config"]["lr_scale"] == preset.lr_scale
    assert saved["task"]["params"] == {"min_len": 1, "max_len": 16}


def test_cli_preset_refuses_model_flags(capsys):
    code = train_main(["--preset", "lecture", "--task", "reverse", "--out", "x", "--d-model", "32"])
    assert code == 2 and "drop d_model" in capsys.readouterr().err


def test_antidiagonal_mass_finds_the_reversal():
    n = 5
    perfect = torch.zeros(2, n, n)
    perfect[1, torch.arange(n), n - 1 - torch.arange(n)] = 1.0  # head 1 reverses; head 0 looks nowhere
    assert antidiagonal_mass(perfect) == pytest.approx(1.0)
    uniform = torch.full((3, n + 1, n), 1.0 / n)  # the extra <eos> row is ignored
    assert antidiagonal_mass(uniform) == pytest.approx(1.0 / n)
