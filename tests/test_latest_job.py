"""`LatestJob` tells every ending: a result, or a failure in a sentence, also where a generator
job raises the RuntimeError torch raises (superqt would end such a worker without a signal), on
the calling thread and on a worker."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

pytest.importorskip("pytestqt")

from explorer.latest_job import LatestJob  # noqa: E402


def failing_steps():
    yield "step 1"
    raise RuntimeError("shape mismatch")


def steps():
    yield "step 1"
    return "done"


@pytest.mark.parametrize("synchronous", [True, False], ids=["calling thread", "worker"])
def test_a_generator_job_that_raises_fails_in_words_and_the_next_job_runs(qtbot, synchronous):
    job = LatestJob(synchronous=synchronous)
    failed, done, progress = [], [], []
    job.failed.connect(failed.append)
    job.done.connect(done.append)
    job.progress.connect(progress.append)
    job.submit(failing_steps)
    assert job.wait(5000) and not job.running
    assert failed == ["shape mismatch"] and progress == ["step 1"]
    job.submit(steps)
    assert job.wait(5000) and done == ["done"]
