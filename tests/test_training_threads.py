"""A training run's torch threads are its own: the run and a lab's stream use the count they
were given, and the thread that ran them has its earlier count back afterwards (torch's setting
would otherwise outlive the run and slow every later frame computed in the app)."""
from __future__ import annotations

import pytest
import torch

from explorer.panels.training.worker import train
from model.train.config import TrainConfig
from model.train.lab_stream import LabSteering, lab_messages
from model.train.live_messages import RunInfo
from model.train.request import TrainingRequest, torch_threads
from model.train.steering import Steering


@pytest.fixture(autouse=True)
def app_threads():
    """The app's own count, other than the one-thread runs below (which stay cheap)."""
    earlier = torch.get_num_threads()
    torch.set_num_threads(2)
    yield 2
    torch.set_num_threads(earlier)


def test_a_short_run_uses_its_threads_and_leaves_the_count_as_it_was():
    before = torch.get_num_threads()
    request = TrainingRequest(task="reverse", preset="tiny", threads=1, snapshots=False, probe="ab",
                              train=TrainConfig(steps=3, batch_size=4, warmup=1, device="cpu"))
    steering, infos = Steering(request), []
    for message in train(request, steering):
        if isinstance(message, RunInfo):
            infos.append(message)
            steering.stop(offer=False)  # the run ends through its own finishing phase
    assert steering.outcome == "stopped"
    assert [i.threads for i in infos] == [1]  # the run reports (and used) the count it was given
    assert torch.get_num_threads() == before


def test_a_run_abandoned_midway_also_gives_the_count_back():
    before = torch.get_num_threads()
    request = TrainingRequest(task="reverse", preset="tiny", threads=1, snapshots=False,
                              train=TrainConfig(steps=1_000_000, batch_size=4, warmup=1, device="cpu"))
    run = train(request, Steering(request))
    next(m for m in run if isinstance(m, RunInfo))
    assert torch.get_num_threads() == 1
    run.close()  # the worker dropped the generator (the window closed)
    assert torch.get_num_threads() == before


def test_the_count_comes_back_when_the_block_raises():
    before = torch.get_num_threads()
    try:
        with torch_threads(before + 2):
            assert torch.get_num_threads() == before + 2
            raise RuntimeError("a bug in the loop")
    except RuntimeError:
        pass
    assert torch.get_num_threads() == before


class OneStepLab:
    def __init__(self, config):
        self.seen = torch.get_num_threads()

    def stop(self, *args):
        pass

    def events(self):
        yield f"lab ran with {self.seen} threads"


def test_a_labs_stream_uses_its_threads_and_gives_them_back():
    before = torch.get_num_threads()
    messages = list(lab_messages(OneStepLab, int, 1, None, LabSteering()))
    assert messages[-1] == "lab ran with 1 threads"
    assert torch.get_num_threads() == before


def test_the_optimiser_imports_warm_up_once_per_process(monkeypatch):
    """One warm-up thread however often it is asked for (each tour with a training scene asks), and none
    where torch._dynamo is imported already."""
    import sys

    import torch._dynamo  # noqa: F401 - imported, as after any run

    from model.train import request

    started = []

    class Recorded:
        def __init__(self, target, name, daemon):
            self.name = name

        def start(self):
            started.append(self.name)

    monkeypatch.setattr(request.threading, "Thread", Recorded)
    monkeypatch.setattr(request, "_warm_up", None)
    assert request.warm_up_in_background() is None and started == []
    monkeypatch.delitem(sys.modules, "torch._dynamo")  # (put back after the test; nothing imports it here)
    first = request.warm_up_in_background()
    assert request.warm_up_in_background() is first and started == ["warm-up torch._dynamo"]
