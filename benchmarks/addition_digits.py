"""The addition model's exact match by the number of digits of its operands.

A model trained on operands drawn uniformly from 0–999 sees a one-digit operand in 1% of its
examples and may answer "2+2" with "44" while it adds three-digit numbers perfectly; an
overall score hides that. This prints, for a checkpoint (the bundled `addition` by default):

* `single_digit_sums`: all 100 sums 0+0 … 9+9 (the first thing a student types), and the
  wrong ones;
* `digits_A+B`: held-out sums whose operands have A and B digits (--per-cell of each; the
  nine cells of one-, two- and three-digit operands);
* `heldout_balanced`: the task's own held-out pairs (digit-balanced draws), --size of them.

    .venv/bin/python benchmarks/addition_digits.py [--checkpoint DIR] [--per-cell 300] [--size 1000]

Each figure is a `name: value` line.
"""
from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def operand(rng: random.Random, digits: int) -> int:
    return rng.randint(0 if digits == 1 else 10 ** (digits - 1), 10 ** digits - 1)


def heldout_cell(a_digits: int, b_digits: int, n: int, seed: int = 1) -> list[tuple[str, str]]:
    """Up to n distinct held-out sums (model.data.task.split_of says 'eval') of operands with
    these digit counts (one-digit + one-digit has only 100 sums, about 5 of them held out)."""
    from model.data.task import split_of

    rng = random.Random(f"digits:{a_digits}+{b_digits}:{seed}")
    found: dict[str, str] = {}
    for _ in range(200 * n):
        a, b = operand(rng, a_digits), operand(rng, b_digits)
        src = f"{a}+{b}"
        if split_of(src) == "eval":
            found[src] = str(a + b)
            if len(found) >= n:
                break
    return list(found.items())


def accuracy(bundle, pairs: list[tuple[str, str]]) -> tuple[float, list[tuple[str, str, str]]]:
    """(exact match, wrong (source, expected, output) triples) of greedy outputs."""
    from model.inference.evaluation import translate_batch

    outputs = translate_batch(bundle.model, bundle.src_tokenizer, bundle.tgt_tokenizer, [s for s, _ in pairs],
                              max_output=8)
    wrong = [(s, t, o) for (s, t), o in zip(pairs, outputs) if o != t]
    return 1 - len(wrong) / max(len(pairs), 1), wrong


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--checkpoint", help="checkpoint folder (default: the bundled addition model)")
    p.add_argument("--per-cell", type=int, default=300, help="held-out sums per digit cell")
    p.add_argument("--size", type=int, default=1000, help="held-out pairs of the task's own (balanced) draws")
    p.add_argument("--device", default="cpu")
    args = p.parse_args(argv)

    import torch

    from model.data.tasks import get_task
    from model.io.checkpoints import bundled_checkpoints, load_checkpoint

    torch.set_num_threads(1)
    bundle = load_checkpoint(args.checkpoint or bundled_checkpoints()["addition"], device=args.device)
    small = [(f"{a}+{b}", str(a + b)) for a in range(10) for b in range(10)]
    score, wrong = accuracy(bundle, small)
    print(f"single_digit_sums: {round(score * 100)}/100")
    if wrong:
        print("single_digit_wrong: " + ", ".join(f"{s}→{o or '∅'}" for s, _, o in wrong[:12])
              + (" …" if len(wrong) > 12 else ""))
    for a in (1, 2, 3):
        for b in (1, 2, 3):
            pairs = heldout_cell(a, b, args.per_cell)
            print(f"digits_{a}+{b}: {accuracy(bundle, pairs)[0]:.4f} (n={len(pairs)})")
    balanced = get_task("addition", balanced_digits=True).pairs(args.size, seed=1, split="eval")
    print(f"heldout_balanced: {accuracy(bundle, balanced)[0]:.4f} (n={len(balanced)})")
    uniform = get_task("addition", balanced_digits=False).pairs(args.size, seed=1, split="eval")
    print(f"heldout_uniform_0_999: {accuracy(bundle, uniform)[0]:.4f} (n={len(uniform)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
