"""Training tokens/s at 1 and 2 processes on this machine (issue 17), through the real command:
`transformer-explorer train` alone, then `torchrun --nproc-per-node 2 -m model.cli train`, on the
same TSV with the same global batch (--batch-tokens) and model, 1 torch thread per process.

    .venv/bin/python benchmarks/scale_throughput.py [--steps 30] [--batch-tokens 4000] [--d-model 128]

Each run prints the rate over its training steps (source + target tokens, pads excluded, all
processes, saving excluded); the last lines are `name: value`:
    tokens_per_s_1proc, tokens_per_s_2proc, speedup_2proc
On a GPU machine add --device cuda (and --nproc to use more GPUs).
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def write_toy_tsv(path: Path, n: int) -> Path:
    """Pairs of the built-in toy translation task: real sentence lengths, any machine, no download."""
    sys.path.insert(0, str(ROOT))
    from model.data.tasks import get_task

    with open(path, "w", encoding="utf-8") as f:
        f.writelines(f"{s}\t{t}\n" for s, t in get_task("translation").pairs(n))
    return path


def run(nproc: int, data: Path, out: Path, args) -> float:
    train = ["--data", str(data), "--tokenizer", "bpe", "--vocab-size", "2000", "--batch-tokens", str(args.batch_tokens),
             "--d-model", str(args.d_model), "--layers", str(args.layers), "--heads", "4", "--d-ff", str(4 * args.d_model),
             "--max-len", "64", "--steps", str(args.steps), "--warmup", "100", "--save-every", "0", "--quiet",
             "--out", str(out), "--device", args.device, "--threads", "1"]
    launcher = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(nproc)] \
        if nproc > 1 else [sys.executable]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    proc = subprocess.run(launcher + ["-m", "model.cli", "train"] + train, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{nproc} process(es) failed:\n{proc.stderr[-2000:]}")
    return float(re.search(r"tokens_per_s: (\d+)", proc.stdout).group(1))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--batch-tokens", type=int, default=4000)
    p.add_argument("--d-model", type=int, default=128)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--pairs", type=int, default=20000)
    p.add_argument("--nproc", type=int, default=2)
    p.add_argument("--device", default="cpu")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = write_toy_tsv(Path(tmp) / "toy.tsv", args.pairs)
        one = run(1, data, Path(tmp) / "one", args)
        many = run(args.nproc, data, Path(tmp) / "many", args)
    print(f"tokens_per_s_1proc: {one:.0f}")
    print(f"tokens_per_s_{args.nproc}proc: {many:.0f}")
    print(f"speedup_{args.nproc}proc: {many / one:.2f}")


if __name__ == "__main__":
    main()
