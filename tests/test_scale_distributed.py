"""`torchrun --nproc-per-node 2` on the CPU (gloo), checked against one process with the same
global batch (issue 17): each rank reads its own data, DDP keeps the replicas identical, the loss
curve is the single process's, and the checkpoint rank 0 writes opens as an app bundle."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from model.interpret.frame import compute_frame  # noqa: E402
from model.io.checkpoints import load_checkpoint  # noqa: E402
from model.train.distributed import Processes  # noqa: E402
from scale_worker import digest, run  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
STEPS = 4
LOSS_TOLERANCE = 1e-4  # fp32; the two runs sum the same gradients in another order (gloo vs one process)


def tiny_tsv(path: Path, n: int = 160) -> Path:
    """Distinct sources (so a row says which line it came from), target = source reversed."""
    import random

    rng = random.Random(7)
    seen, lines = set(), []
    while len(lines) < n:
        s = "".join(rng.choice("abcdefgh") for _ in range(rng.randint(3, 10)))
        if s not in seen:
            seen.add(s)
            lines.append(f"{s}\t{s[::-1]}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ddp")
    data = tiny_tsv(folder / "pairs.tsv")
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}", "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                           str(ROOT / "tests" / "scale_worker.py"), str(data), str(folder / "ddp"), str(STEPS), "1"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    ranks = [json.loads((folder / "ddp" / f"rank{r}.json").read_text()) for r in (0, 1)]
    single = run(str(data), str(folder / "single"), STEPS, accumulate=2, procs=Processes())
    return ranks, single, folder


def _rows(record, step: int, per_step: int) -> set:
    return {tuple(r) for batch in record["rows"][step * per_step:(step + 1) * per_step] for r in batch}


def test_each_rank_reads_its_own_data(runs):
    ranks, _, _ = runs
    assert [r["world_size"] for r in ranks] == [2, 2]
    for step in range(STEPS):
        a, b = _rows(ranks[0], step, 1), _rows(ranks[1], step, 1)
        assert a and b and not a & b


def test_replicas_identical_after_every_step(runs):
    ranks, _, _ = runs
    assert ranks[0]["digests"] == ranks[1]["digests"]
    assert len(set(ranks[0]["digests"])) == STEPS  # the weights did change every step


def test_loss_curve_matches_one_process_with_the_same_global_batch(runs):
    ranks, single, _ = runs
    for step in range(STEPS):  # the same pairs in each step: one process accumulating over both slots
        assert _rows(single, step, 2) == _rows(ranks[0], step, 1) | _rows(ranks[1], step, 1)
    assert ranks[0]["losses"] == ranks[1]["losses"]  # metrics are reduced over ranks
    for ddp_loss, one_loss in zip(ranks[0]["losses"], single["losses"]):
        assert abs(ddp_loss - one_loss) <= LOSS_TOLERANCE


def test_sentence_batches_too_match_one_process(runs):
    """Batched by sentences, the ranks share each step's pairs as one process's accumulated slots."""
    ranks, single, _ = runs
    assert ranks[0]["sentence_losses"] == ranks[1]["sentence_losses"]
    assert ranks[0]["sentence_digest"] == ranks[1]["sentence_digest"]
    assert len(set(ranks[0]["sentence_losses"])) == STEPS
    assert ranks[0]["sentence_losses"] == pytest.approx(single["sentence_losses"], abs=LOSS_TOLERANCE)


def test_micro_batches_within_the_token_budget(runs):
    ranks, single, _ = runs
    for record in ranks + [single]:
        for batch in record["rows"]:
            assert len(batch) * max(len(r) for r in batch) <= record["budget"]


def test_rank_zero_checkpoint_opens_in_the_app(runs):
    ranks, _, folder = runs
    bundle = load_checkpoint(folder / "ddp" / "checkpoint")
    assert digest(bundle.model) == ranks[0]["digests"][-1]
    assert bundle.metrics["processes"] == 2 and bundle.metrics["steps"] == STEPS
    assert (folder / "ddp" / "checkpoint.resume" / "training.json").is_file()
    frame = compute_frame(bundle, "abcde", None)
    assert frame.forward.src_pieces == list("abcde")
    assert len(frame.forward.trace) > 0 and frame.decode is not None
