"""The mask-leak lab's figures: one GPT-like decoder trained twice on the facts corpus, with and
without the causal mask (model.interpret.leak_lab), then scored on held-out sentences.

    .venv/bin/python benchmarks/leak_lab.py [--steps 400] [--layers 1] [--threads 1] [--seed 0]

Prints `name: value` lines: each run's final training loss (mean of its last 20 steps), its
teacher-forced and free-running next-word accuracy, the share of generated sentences that are
right, its attention weight on later positions; the loss floor and the best possible next-word
accuracy no model reading only the past can beat; and the wall time of training + scoring.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from model.interpret.leak_lab import LeakConfig, LeakLab  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=LeakConfig.steps)
    p.add_argument("--layers", type=int, default=LeakConfig.n_layers)
    p.add_argument("--d-model", type=int, default=LeakConfig.d_model)
    p.add_argument("--eval-size", type=int, default=LeakConfig.eval_size)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    config = LeakConfig(steps=args.steps, n_layers=args.layers, d_model=args.d_model, eval_size=args.eval_size,
                        seed=args.seed)
    start = time.perf_counter()
    lab = LeakLab(config)
    built = time.perf_counter() - start
    result = lab.run()
    total = time.perf_counter() - start
    print(f"config: steps {config.steps}, layers {config.n_layers}, d_model {config.d_model}, "
          f"batch {config.batch_size}, seed {config.seed}, torch threads {args.threads}")
    print(f"load_average_1min: {os.getloadavg()[0]:.2f}")
    for name, value in result.summary().items():
        print(f"{name}: {value}")
    for run, scores in result.runs.items():
        for prompt, continuation in scores.generations:
            print(f"# {run}: {prompt} → {continuation}")
    print(f"build_seconds: {built:.2f}")
    print(f"train_seconds: {result.seconds:.2f}")  # both runs, interleaved
    print(f"score_seconds: {total - built - result.seconds:.2f}")
    print(f"total_seconds: {total:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
