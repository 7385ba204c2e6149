"""Checkpoint averaging (Section 6.1: "a single model obtained by averaging the last 5
checkpoints, which were written at 10-minute intervals"; the last 20 for the big models).

Every floating-point tensor of the result is the element-wise mean of the same tensor in the
given checkpoints, computed in float64 and cast back; the checkpoints must share one config and
one vocabulary. A run keeps its numbered checkpoints in `OUT.steps/step-<N>/` (`--keep-last`).
"""
from __future__ import annotations

import re
from pathlib import Path

import torch

from model.inference.bundle import ModelBundle
from model.io.checkpoints import CONFIG, CheckpointError, load_checkpoint

STEP_NAME = re.compile(r"^step-(\d+)$")


def steps_dir(out: str | Path) -> Path:
    """Where a run writing checkpoint OUT keeps its numbered checkpoints."""
    out = Path(out)
    return out.parent / f"{out.name}.steps"


def step_folder(out: str | Path, step: int) -> Path:
    return steps_dir(out) / f"step-{step:08d}"


def numbered_checkpoints(folder: str | Path) -> list[Path]:
    """The `step-<N>` checkpoints in a folder, oldest (smallest N) first."""
    folder = Path(folder)
    if not folder.is_dir():
        raise CheckpointError(f"{folder}: no such folder of numbered checkpoints")
    found = [(int(m.group(1)), p) for p in folder.iterdir()
             if (m := STEP_NAME.match(p.name)) and (p / CONFIG).is_file()]
    return [p for _, p in sorted(found)]


def last_checkpoints(folder: str | Path, k: int) -> list[Path]:
    found = numbered_checkpoints(folder)
    if k < 1 or len(found) < k:
        raise CheckpointError(f"{folder}: asked for the last {k} checkpoints, found {len(found)}")
    return found[-k:]


def prune_steps(out: str | Path, keep: int) -> list[Path]:
    """Delete all but the last `keep` numbered checkpoints of OUT.steps/; a folder the app did not
    write whole (not our checkpoint, or holding other files) is left alone. Returns those deleted."""
    import shutil

    from model.io.checkpoints import check_save_target

    if not isinstance(keep, int) or keep < 1:
        raise CheckpointError(f"keep must be a positive number of checkpoints, got {keep!r}")
    deleted = []
    for old in numbered_checkpoints(steps_dir(out))[:-keep]:
        try:
            check_save_target(old)
        except CheckpointError:
            continue
        shutil.rmtree(old, ignore_errors=True)
        deleted.append(old)
    return deleted


def average_state(states: list[dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """The element-wise mean of same-named tensors (integer tensors must agree and are kept)."""
    if not states:
        raise CheckpointError("nothing to average: no checkpoints given")
    out = {}
    for name, first in states[0].items():
        if not first.is_floating_point():
            out[name] = first.clone()
            continue
        total = torch.zeros_like(first, dtype=torch.float64)
        for state in states:
            total += state[name].to(torch.float64)
        out[name] = (total / len(states)).to(first.dtype)
    return out


def average_checkpoints(paths: list[str | Path]) -> ModelBundle:
    """A bundle whose weights are the mean of the checkpoints' (config, tokenizers and task from the last)."""
    bundles = [load_checkpoint(p, device="cpu") for p in paths]
    last = bundles[-1]
    for p, b in zip(paths, bundles):
        if b.config.to_dict() != last.config.to_dict() or b.src_tokenizer != last.src_tokenizer \
                or b.tgt_tokenizer != last.tgt_tokenizer:
            raise CheckpointError(f"{p}: another model or vocabulary than {paths[-1]}; only checkpoints of one run "
                                  "can be averaged")
    last.model.load_state_dict(average_state([b.model.state_dict() for b in bundles]))
    last.metrics = {**last.metrics, "averaged_checkpoints": [str(p) for p in paths]}
    last.name = f"{last.name} (average of {len(paths)})"
    return last


__all__ = ["average_checkpoints", "average_state", "last_checkpoints", "numbered_checkpoints", "prune_steps",
           "steps_dir", "step_folder"]
