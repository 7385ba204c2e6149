"""Wall time until the reverse task reaches 99% exact match on held-out strings.

Trains the bundled reverse model's sizes (2+2 layers, 4 heads, d_model 64, d_ff 256) from
scratch with the paper's optimiser and schedule (the fast settings of scripts/train_bundled.sh:
dropout 0, half rate, batch 128) and evaluates every `--eval-every` steps (greedy decoding,
batched); a result at or above the target is confirmed on a larger held-out set before the
clock stops.

    .venv/bin/python benchmarks/convergence.py [--device cpu] [--threads 1] [--max-steps 20000]

The last line is `convergence_seconds: X` (wall time including the evaluations; `inf` if the
target was not reached within --max-steps).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from model.io.checkpoints import random_bundle  # noqa: E402
from model.train.trainer import StepEvent, TrainConfig, Trainer  # noqa: E402

# The bundled reverse model's sizes (see scripts/train_bundled.sh); --dropout overrides.
MODEL = dict(d_model=64, n_heads=4, n_encoder_layers=2, n_decoder_layers=2, d_ff=256, max_len=64, dropout=0.0)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cpu")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--max-steps", type=int, default=20000)
    p.add_argument("--eval-every", type=int, default=200)
    p.add_argument("--eval-size", type=int, default=300)
    p.add_argument("--confirm-size", type=int, default=1000)
    p.add_argument("--target", type=float, default=0.99)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--warmup", type=int, default=1000)
    p.add_argument("--lr-scale", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dropout", type=float, default=MODEL["dropout"])
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    bundle = random_bundle("reverse", **{**MODEL, "dropout": args.dropout})
    cfg = TrainConfig(steps=args.max_steps, batch_size=args.batch_size, warmup=args.warmup, lr_scale=args.lr_scale,
                      device=args.device, seed=args.seed)
    trainer = Trainer(bundle, None, cfg)
    c = bundle.config
    print(f"reverse: d_model {c.d_model}, {c.n_heads} heads, {c.n_encoder_layers}+{c.n_decoder_layers} layers, "
          f"d_ff {c.d_ff}, dropout {c.dropout}; batch {args.batch_size}, warmup {args.warmup}, "
          f"lr_scale {args.lr_scale}; device {trainer.device}, "
          f"threads {torch.get_num_threads()}; target {args.target:.0%} exact match")
    start = time.perf_counter()
    reached = None
    for event in trainer.events():
        if not isinstance(event, StepEvent) or event.step % args.eval_every:
            continue
        em = trainer.evaluate(args.eval_size).exact_match
        wall = time.perf_counter() - start
        print(f"step {event.step}: exact match {em:.3f} (n={args.eval_size}), loss {event.loss:.3f}, "
              f"{wall:.1f} s", flush=True)
        if em >= args.target:
            confirm = trainer.evaluate(args.confirm_size).exact_match
            wall = time.perf_counter() - start
            print(f"  confirmation: {confirm:.3f} (n={args.confirm_size})", flush=True)
            if confirm >= args.target:
                reached = (event.step, wall)
                break
    if reached is None:
        print(f"not reached within {args.max_steps} steps")
        print("convergence_seconds: inf")
        return 1
    step, wall = reached
    print(f"reached {args.target:.0%} at step {step}: {wall:.1f} s wall "
          f"({trainer.elapsed:.1f} s of training and evaluation in the trainer)")
    print(f"convergence_seconds: {wall:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
