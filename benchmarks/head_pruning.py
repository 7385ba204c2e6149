"""How many heads the bundled models need (Michel et al. 2019, "Are Sixteen Heads Really Better than One?").

For each bundled checkpoint named (default: translation and reverse): head importance by
masking (loss increase when the head is zeroed) and by Michel et al.'s gradient estimate on
`--importance-pairs` held-out pairs, then held-out exact match on a *different* held-out
sample of `--pairs` pairs: unablated, with the least important half of the heads zeroed (by
each importance), and with the single most important head zeroed. Also which attention kind
holds the most important head, and each kind's total masking importance.

    .venv/bin/python benchmarks/head_pruning.py [--models translation reverse] [--pairs 500]

Prints `name: value` lines, e.g. `translation_exact_match_half_pruned_masking: 0.93`.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from model.interpret.importance import head_importance, heldout_pairs, heldout_score  # noqa: E402
from model.interpret.interventions import intervene  # noqa: E402
from model.io.checkpoints import bundled_checkpoints, load_checkpoint  # noqa: E402


def score_without(bundle, heads, pairs) -> float:
    with intervene(bundle.model, {key: "zero" for key in heads}):
        return heldout_score(bundle, pairs)


def report(name: str, args) -> None:
    bundle = load_checkpoint(bundled_checkpoints()[name])
    bundle.model.eval()
    start = time.perf_counter()
    result = head_importance(bundle, args.importance_pairs, curve=False)
    # A second held-out sample, so the score does not reuse the pairs the ranking was made on.
    pairs = heldout_pairs(bundle, args.pairs, seed=2)
    n = len(result.heads)
    print(f"{name}_heads: {n}")
    print(f"{name}_held_out_pairs: {len(pairs)}")
    print(f"{name}_exact_match_unablated: {heldout_score(bundle, pairs):.4f}")
    for by in ("masking", "gradient"):
        ranking = result.ranking(None, by)  # most important first
        print(f"{name}_exact_match_half_pruned_{by}: {score_without(bundle, ranking[n - n // 2:], pairs):.4f}")
        top = ranking[0]
        print(f"{name}_most_important_head_{by}: {top[0]}:{top[1]}:{top[2]}")
        print(f"{name}_exact_match_without_most_important_{by}: {score_without(bundle, [top], pairs):.4f}")
    for kind in dict.fromkeys(k for k, _, _ in result.heads):
        total = sum(v for k, v in result.masking.items() if k[0] == kind)
        print(f"{name}_masking_importance_sum_{kind}: {total:.4f}")
    print(f"{name}_seconds: {time.perf_counter() - start:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["translation", "reverse"])
    parser.add_argument("--pairs", type=int, default=500)
    parser.add_argument("--importance-pairs", type=int, default=200)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    for name in args.models:
        report(name, args)


if __name__ == "__main__":
    main()
