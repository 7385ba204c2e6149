"""How fast the two variants learn the facts corpus, and how close they get to the best possible.

Trains an encoder-only masked LM and a decoder-only LM of the bundled sizes (d_model 64,
2 layers, 4 heads) from scratch with the same Trainer, evaluating every `--eval-every`
steps on held-out sentences, and prints for each the wall time until its held-out score
reaches `--share` of the Bayes-optimal score on the same sentences (model.data.corpus
.best_possible_scores), and the share of fact questions it then answers right.

    .venv/bin/python benchmarks/variants.py [--device cpu] [--threads 1] [--max-steps 6000]

Last lines: `mlm_seconds_to_share: X`, `lm_seconds_to_share: Y` (`inf` if not reached).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from model.data.corpus import best_possible_scores, score_continuations, score_fill_ins  # noqa: E402
from model.io.checkpoints import random_bundle  # noqa: E402
from model.train.trainer import StepEvent, TrainConfig, Trainer  # noqa: E402

SIZES = dict(d_model=64, n_heads=4, d_ff=256, max_len=64, dropout=0.1)


def run(kind: str, args) -> float:
    layers = {"n_decoder_layers": 0, "n_encoder_layers": 2} if kind == "encoder_only" else \
        {"n_encoder_layers": 0, "n_decoder_layers": 2}
    torch.manual_seed(0)
    bundle = random_bundle("facts", kind=kind, **SIZES, **layers)
    trainer = Trainer(bundle, config=TrainConfig(steps=args.max_steps, batch_size=64, warmup=400,
                                                 device=args.device, seed=0))
    texts = [s for s, _ in trainer.eval_pairs(args.eval_size)]
    best = dict(zip(("masked_accuracy", "next_token_accuracy"), best_possible_scores(texts)))[trainer.metric]
    start = time.perf_counter()
    reached = float("inf")
    for event in trainer.events():
        if isinstance(event, StepEvent) and event.step % args.eval_every == 0:
            ev = trainer.evaluate(args.eval_size)
            print(f"{kind} step {ev.step}: {ev.metric} {ev.score:.4f} (best possible {best:.4f}) "
                  f"{time.perf_counter() - start:.1f} s", flush=True)
            if ev.score >= args.share * best:
                reached = time.perf_counter() - start
                break
    bundle = trainer.to_bundle()
    bundle.model.eval()
    if kind == "encoder_only":
        print(f"{kind}: fact fill-ins right {score_fill_ins(bundle):.3f}")
    else:
        nxt, truth = score_continuations(bundle)
        print(f"{kind}: fact prompts right {nxt:.3f}, true facts in continuations {truth:.3f}")
    return reached


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cpu")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--max-steps", type=int, default=6000)
    p.add_argument("--eval-every", type=int, default=250)
    p.add_argument("--eval-size", type=int, default=500)
    p.add_argument("--share", type=float, default=0.97, help="fraction of the best possible score to reach")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    mlm = run("encoder_only", args)
    lm = run("decoder_only", args)
    print(f"mlm_seconds_to_share: {mlm:.1f}")
    print(f"lm_seconds_to_share: {lm:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
