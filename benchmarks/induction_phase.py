"""The induction-head phase change (Olsson et al. 2022) timed end to end on this machine.

Trains the induction lab's attention-only decoder (model.train.induction) for its full run and
prints when the phase change came: the step (where the ICL score is half-way from its start to
its end, and stays there) and the wall-clock seconds to it, counting the evaluations the panel
also runs; then the final ICL score and the best head's induction score.

    .venv/bin/python benchmarks/induction_phase.py [--seed 0] [--steps 3000] [--threads 1]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from model.train.induction import InductionConfig, InductionLab, InductionMeasure, phase_measure  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=InductionConfig.steps)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (the GUI's worker uses one of two cores)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    lab = InductionLab(InductionConfig(steps=args.steps, seed=args.seed))
    began, wall = time.perf_counter(), {}
    for event in lab.events():
        if isinstance(event, InductionMeasure):
            wall[event.step] = time.perf_counter() - began
    total = time.perf_counter() - began
    phase, last = phase_measure(lab.measures), lab.measures[-1]
    layer, head = last.best_head()
    print(f"seed: {args.seed}")
    print(f"steps: {lab.step_count}")
    print(f"phase_step: {phase.step if phase else 'none'}")
    print(f"phase_wall_s: {wall[phase.step]:.1f}" if phase else "phase_wall_s: none")
    print(f"final_icl: {last.icl:.3f}")
    print(f"final_induction_score: {last.scores.max():.3f} (layer {layer + 1} head {head + 1})")
    print(f"total_wall_s: {total:.1f}")


if __name__ == "__main__":
    main()
