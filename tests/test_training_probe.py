"""The live loop's probe follows its run even when the first probe is slow.

On a GPU the first probe pays the device's warm-up (CUDA context, kernel selection: seconds);
spacing the next probes by that cost (PROBE_BUDGET) left a 10-second CUDA run showing "step 0"
to its end. Here the first probe is made slow on the CPU, as the device's warm-up makes it."""
from __future__ import annotations

import time

import torch

from model.inference.bundle import ModelBundle
from model.train.config import TrainConfig
from model.train.live_loop import PROBE_BUDGET, TrainingLoop
from model.train.live_messages import Snapshot
from model.train.request import TrainingRequest
from model.train.steering import Steering

torch.set_num_threads(1)


def test_a_slow_first_probe_does_not_space_the_others_past_the_run(monkeypatch):
    warm_up = 0.3  # s: by PROBE_BUDGET the next probe would wait 10 s
    real_run, calls = ModelBundle.run, []

    def run(self, *args, **kwargs):
        if not calls:
            time.sleep(warm_up)
        calls.append(1)
        return real_run(self, *args, **kwargs)

    monkeypatch.setattr(ModelBundle, "run", run)
    request = TrainingRequest(task="reverse", preset="tiny", probe="attention",
                              train=TrainConfig(steps=1_000_000, batch_size=8, warmup=20, device="cpu"))
    loop = TrainingLoop(request, Steering(request))
    start, steps = None, []
    for message in loop.run():
        if isinstance(message, Snapshot):
            steps.append(message.step)
            start = start or time.monotonic()  # the clock starts after the slow first probe
        if start is not None and time.monotonic() - start > 3.0:  # far shorter than warm_up / PROBE_BUDGET
            loop.trainer.stop()
    assert warm_up / PROBE_BUDGET > 3.0
    assert steps[0] == 0
    # spaced by the warm-up, the next probe would come after 10 s: none in these 3 s
    assert len([s for s in steps if s > 0]) >= 1, steps  # the probe moved on with the run
