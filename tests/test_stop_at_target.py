"""A target score is claimed only on a large held-out check: `--stop-at` (the CLI) and the
lecture preset's clock (model.train.live_loop) repeat a small check that reaches the target on
at least CONFIRM_SIZE pairs, stop only if that holds, and a preset run ends once confirmed.

The Trainer's evaluation is replaced by a fake whose score depends on how many pairs it reads
(a lucky 1.0 on small checks, 0.97 on large ones): the tests run a few tiny steps."""
from __future__ import annotations

import pytest
import torch

from model.cli.main import train_main
from model.train.config import EvalEvent, TrainConfig
from model.train.live_loop import TrainingLoop
from model.train.request import TrainingRequest
from model.train.steering import Steering
from model.train.target import CONFIRM_SIZE, confirm
from model.train.trainer import Trainer

torch.set_num_threads(1)
TINY = ["--d-model", "32", "--heads", "2", "--layers", "1", "--d-ff", "64", "--batch-size", "8", "--threads", "1"]


@pytest.fixture
def scores(monkeypatch):
    """Trainer.evaluate(n) → `scores["small"]` below CONFIRM_SIZE pairs, `scores["large"]` from
    there on; `scores["calls"]` lists the sizes asked for."""
    table = {"small": 1.0, "large": 0.97, "calls": []}

    def fake(self, n=None, batch_size=250, n_examples=5):
        n = n or self.config.eval_size
        table["calls"].append(n)
        event = EvalEvent(self.step_count, table["small"] if n < CONFIRM_SIZE else table["large"], [], n)
        self.last_eval = event
        return event

    monkeypatch.setattr(Trainer, "evaluate", fake)
    return table


def cli(tmp_path, capsys, *extra):
    code = train_main(["--task", "copy", "--out", str(tmp_path / "run"), "--steps", "12", "--eval-every", "4",
                       "--eval-size", "40", "--stop-at", "0.99", *TINY, *extra])
    out, err = capsys.readouterr()
    return code, out + err


def test_a_lucky_small_check_does_not_stop_the_cli(tmp_path, capsys, scores):
    code, text = cli(tmp_path, capsys)
    assert code == 0
    assert "reached --stop-at" not in text
    assert "not confirmed on 500 held-out pairs (0.970 < 0.99)" in text
    assert "trained to step 12" in text  # it trained on to --steps
    assert scores["calls"].count(40) == 3 + 1 and scores["calls"].count(500) == 3  # 3 checks, 3 confirmations, final


def test_the_cli_stops_when_the_large_check_confirms(tmp_path, capsys, scores):
    scores["large"] = 0.995
    code, text = cli(tmp_path, capsys)
    assert code == 0
    assert "reached --stop-at 0.99: exact_match 0.995 on 500 held-out pairs: stopping" in text
    assert "trained to step 4" in text
    assert scores["calls"] == [40, 500, 40]


def test_a_check_as_large_as_the_final_one_is_the_final_score(tmp_path, capsys, scores):
    scores["small"] = 0.5  # only a check of ≥ 500 pairs reaches the target
    scores["large"] = 0.995
    code, text = cli(tmp_path, capsys, "--eval-size", "1000")
    assert code == 0
    assert "reached --stop-at 0.99: exact_match 0.995 on 1000 held-out pairs: stopping" in text
    assert "eval exact_match: 0.995 (n=1000)" in text
    assert scores["calls"] == [1000]  # the check that stopped the run is its final evaluation, not scored twice


def test_confirm_keeps_a_check_that_misses_or_is_already_large():
    class Probe:
        def evaluate(self, n):
            return EvalEvent(1, 0.5, [], n)

    small_hit, small_miss, large = EvalEvent(1, 1.0, [], 100), EvalEvent(1, 0.9, [], 100), EvalEvent(1, 1.0, [], 800)
    assert confirm(Probe(), small_hit, 0.99).n == CONFIRM_SIZE
    assert confirm(Probe(), small_miss, 0.99) is small_miss
    assert confirm(Probe(), large, 0.99) is large
    assert confirm(Probe(), small_hit, None) is small_hit


def lecture_loop(target: float) -> TrainingLoop:
    cfg = TrainConfig(steps=40, batch_size=8, warmup=10, eval_size=100, device="cpu")
    request = TrainingRequest(task="reverse", preset="lecture", train=cfg, target=target, eval_interval=1e-6,
                              snapshots=False)
    return TrainingLoop(request, Steering(request))


def outcome_of(loop: TrainingLoop):
    messages = loop.run()
    try:
        while True:
            next(messages)
    except StopIteration as end:
        return end.value


@pytest.mark.parametrize("large, stops", [(0.995, True), (0.97, False)])
def test_a_preset_run_ends_once_its_target_is_confirmed(scores, large, stops):
    scores["large"] = large
    loop = lecture_loop(0.99)
    assert outcome_of(loop) == "finished"
    steps = loop.trainer.step_count
    assert (steps < 40) == stops
    if stops:
        assert loop.reached is not None and loop.reached.n == CONFIRM_SIZE and loop.reached.step == steps
    assert all(n in (100, CONFIRM_SIZE) for n in scores["calls"])
