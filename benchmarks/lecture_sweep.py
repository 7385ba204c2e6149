"""Steps and CPU seconds until a lecture preset's task reaches 99 % held-out, without a GUI.

The measurements that chose `model.train.presets`'s presets, repeatable: one Trainer on 1 torch
thread, held-out exact match on --eval pairs every --every steps; the first score ≥ --target
is confirmed on --confirm held-out pairs (the checks' pairs among them) --hold steps later (a preset must hold its score,
not touch it once). Any preset field can be overridden, so a row of `REVERSE_MEASURED` is

    .venv/bin/python benchmarks/lecture_sweep.py --task reverse --lr-decay-steps 0      # Eq. 3's decay
    .venv/bin/python benchmarks/lecture_sweep.py --task reverse --batch-size 64 --lr-decay-steps 500 --seed 2

Prints the score curve, then `steps_to_target: N`, `cpu_seconds_to_target: S` (training steps
only: load-independent, unlike the wall clock) and `confirmed: X`.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from model.train.presets import LECTURE_PRESETS, lecture_bundle  # noqa: E402
from model.train.trainer import Trainer  # noqa: E402


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--task", default="reverse", choices=tuple(LECTURE_PRESETS))
    p.add_argument("--batch-size", type=int)
    p.add_argument("--warmup", type=int)
    p.add_argument("--lr-scale", type=float)
    p.add_argument("--lr-decay-steps", type=int, help="0: Eq. 3's 1/√step decay")
    p.add_argument("--label-smoothing", type=float)
    p.add_argument("--d-ff", type=int)
    p.add_argument("--heads", type=int)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-steps", type=int, default=1500)
    p.add_argument("--every", type=int, default=50)
    p.add_argument("--eval", type=int, default=200)
    p.add_argument("--target", type=float, help="default: the preset's")
    p.add_argument("--hold", type=int, default=200, help="steps trained past the first hit before confirming")
    p.add_argument("--confirm", type=int, default=1000)
    return p.parse_args(argv)


def preset_from(args):
    base = LECTURE_PRESETS[args.task]
    fields = {k: v for k, v in dict(batch_size=args.batch_size, warmup=args.warmup, lr_scale=args.lr_scale,
                                     lr_decay_steps=args.lr_decay_steps,
                                     label_smoothing=args.label_smoothing).items() if v is not None}
    sizes = {k: v for k, v in dict(d_ff=args.d_ff, n_heads=args.heads).items() if v is not None}
    return dataclasses.replace(base, model={**base.model, **sizes}, **fields)


def main(argv=None) -> int:
    args = parse_args(argv)
    torch.set_num_threads(1)
    preset = preset_from(args)
    target = args.target if args.target is not None else preset.target
    print(preset.describe())
    task = preset.build_task()
    trainer = Trainer(lecture_bundle(preset, task, args.seed), task,
                      preset.train_config(steps=args.max_steps, eval_every=0, seed=args.seed))
    cpu, hit = 0.0, None
    while trainer.step_count < args.max_steps:
        t = time.process_time()
        trainer.step()
        cpu += time.process_time() - t
        if trainer.step_count % args.every:
            continue
        score = trainer.evaluate(args.eval).score
        print(f"  step {trainer.step_count}: {score:.3f} ({cpu:.1f} CPU s)", flush=True)
        if hit is None and score >= target:
            hit = (trainer.step_count, cpu)
        if hit is not None and trainer.step_count >= hit[0] + args.hold:
            break
    print(f"ms_per_step: {1000 * cpu / max(trainer.step_count, 1):.1f}")
    if hit is None:
        print("steps_to_target: inf\ncpu_seconds_to_target: inf")
        return 1
    confirmed = trainer.evaluate(args.confirm)
    print(f"steps_to_target: {hit[0]}\ncpu_seconds_to_target: {hit[1]:.1f}\nconfirmed: {confirmed.score:.3f} "
          f"(n={confirmed.n}, step {trainer.step_count})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
