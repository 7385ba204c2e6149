"""Which attribution method finds the input token that a known alignment says mattered.

For `reverse` the answer is positional: output position i copies input position n−1−i.
For `translation` every target word is the word-for-word translation of one source word (the
task's lexicon is a bijection, read from the task's own vocabulary texts; the grammar only
reorders words), so the aligned source positions are those holding the word that translates
to it (two when a determiner occurs twice; either one counts).

Over `--n` held-out pairs (the task's eval split, `Task.pairs(n, seed=1, split="eval")` as the
Trainer evaluates), teacher-forced on the reference, each method's top-1 token (largest
|score|, `model.interpret.attribution.top1`) is compared with the alignment at one output position per
pair (drawn with a fixed seed; `--all-positions` scores every position but <eos>).

    PYTHONPATH=. .venv/bin/python benchmarks/attribution_agreement.py [--n 200] [--ig-steps 32]

Prints `name: value` lines: `<task>_<method>_top1: fraction` and the positions scored.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from model.data.tasks import get_task  # noqa: E402
from model.interpret.attribution import METHODS, attribute_problem, build_problem, gradients, top1  # noqa: E402
from model.io.checkpoints import bundled_checkpoints, load_checkpoint  # noqa: E402


def reverse_alignment(source_pieces: list[str], target_pieces: list[str]) -> list[set[int]]:
    n = len(source_pieces)
    return [{n - 1 - i} for i in range(len(target_pieces))]


def translation_alignment(task):
    """target word → the source word it translates, from the task's vocabulary texts (the
    source words and their translations, in the same order)."""
    lexicon = dict(zip(task.tgt_texts[0].split(), task.src_texts[0].split()))

    def align(source_pieces: list[str], target_pieces: list[str]) -> list[set[int]]:
        return [{j for j, w in enumerate(source_pieces) if w == lexicon.get(t)} for t in target_pieces]
    return align


def evaluate(name: str, n: int, all_positions: bool, rng: random.Random) -> tuple[dict[str, float], int]:
    bundle = load_checkpoint(bundled_checkpoints()[name])
    task = get_task(bundle.task["name"], **bundle.task.get("params", {}))
    align = reverse_alignment if name == "reverse" else translation_alignment(task)
    hits = {m: 0 for m in METHODS}
    scored = 0
    for source, reference in task.pairs(n, seed=1, split="eval"):
        problem = build_problem(bundle, source, reference, position=0)
        targets = problem.outputs[:-1]  # <eos> has no aligned source token
        aligned = align(problem.input_pieces, targets)
        positions = range(len(targets)) if all_positions else [rng.randrange(len(targets))]
        for k in positions:
            if not aligned[k]:
                continue  # no aligned source token (cannot happen for these tasks; kept honest)
            scores = attribute_problem(problem.with_position(k))
            for m in METHODS:
                hits[m] += top1(scores[m]) in aligned[k]
            scored += 1
    return {m: hits[m] / max(scored, 1) for m in METHODS}, scored


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--ig-steps", type=int, default=gradients.IG_STEPS)
    parser.add_argument("--all-positions", action="store_true")
    parser.add_argument("--tasks", default="reverse,translation")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    gradients.IG_STEPS = args.ig_steps
    print(f"held_out_inputs: {args.n}")
    print(f"ig_steps: {args.ig_steps}")
    for name in args.tasks.split(","):
        start = time.perf_counter()
        agreement, scored = evaluate(name, args.n, args.all_positions, random.Random(0))
        print(f"{name}_positions_scored: {scored}")
        for method, value in agreement.items():
            print(f"{name}_{method}_top1: {value:.3f}")
        print(f"{name}_seconds: {time.perf_counter() - start:.1f}")
        sys.stdout.flush()


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
