"""Everything needed to carry on after a crash, in one folder beside the checkpoint: `OUT.resume/`.

    model.safetensors      the weights at the saved step
    optimizer.safetensors  Adam's moments (`state.<param index>.exp_avg` …) and each rank's RNG
    training.json          the step, the learning-rate schedule's state, each data slot's position,
                           Adam's hyper-parameters and the run's settings

Tensors in safetensors and the rest in JSON: nothing is pickled. The folder is replaced
atomically (model.io.folders), so a crash mid-save leaves the previous state whole; it holds its
own copy of the weights, so it never disagrees with itself about the step.
"""
from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import torch

from model.io.folders import check_ours_or_empty, fsync_dir, is_json_of_format, swap_into_place, write_synced

STATE_FORMAT = "transformer-explorer-training-state"
WEIGHTS, OPTIMIZER, STATE = "model.safetensors", "optimizer.safetensors", "training.json"


class ResumeError(ValueError):
    """A training state that cannot be used to resume (missing, other settings); says why."""


def resume_dir(out: str | Path) -> Path:
    out = Path(out)
    return out.parent / f"{out.name}.resume"


def check_state_target(out: str | Path) -> None:
    """Refuse to write OUT.resume/ over a folder the app did not write (a save replaces it whole)."""
    check_ours_or_empty(resume_dir(out), STATE, lambda f: is_json_of_format(f, STATE_FORMAT),
                        (WEIGHTS, OPTIMIZER, STATE), "training state", ResumeError)


def optimizer_tensors(optimizer: torch.optim.Optimizer) -> tuple[dict[str, torch.Tensor], dict]:
    """Adam's per-parameter tensors by name, and the rest of its state_dict (JSON-able)."""
    sd = optimizer.state_dict()
    tensors = {}
    for index, state in sd["state"].items():
        for key, value in state.items():
            tensors[f"state.{index}.{key}"] = torch.as_tensor(value).detach().to("cpu").contiguous()
    return tensors, {"param_groups": sd["param_groups"]}


def load_optimizer(optimizer: torch.optim.Optimizer, tensors: dict[str, torch.Tensor], rest: dict) -> None:
    state: dict[int, dict] = {}
    for name, value in tensors.items():
        if name.startswith("state."):
            _, index, key = name.split(".", 2)
            state.setdefault(int(index), {})[key] = value
    optimizer.load_state_dict({"state": state, "param_groups": rest["param_groups"]})


def save_state(out: str | Path, model: torch.nn.Module, optimizer, scheduler, info: dict,
               rng: list[torch.Tensor]) -> Path:
    """Write OUT.resume/ atomically. `info` holds JSON-able run facts (step, data positions …);
    `rng` is each rank's CPU RNG state, in rank order."""
    from safetensors.torch import save as to_bytes

    from model.io.checkpoint_format import unique_state

    path = resume_dir(out)
    check_state_target(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.saving-", dir=path.parent))
    try:
        weights, aliases = unique_state(model)
        write_synced(tmp / WEIGHTS, to_bytes(weights))
        opt_tensors, opt_rest = optimizer_tensors(optimizer)
        opt_tensors.update({f"rng.{r}": t.to(torch.uint8) for r, t in enumerate(rng)})
        write_synced(tmp / OPTIMIZER, to_bytes(opt_tensors))
        sched = {k: v for k, v in scheduler.state_dict().items() if k != "lr_lambdas"}
        doc = {"format": STATE_FORMAT, **info, "tied_weights": aliases, "optimizer": opt_rest, "scheduler": sched}
        write_synced(tmp / STATE, (json.dumps(doc, indent=1) + "\n").encode("utf-8"))
        fsync_dir(tmp)
        swap_into_place(tmp, path)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return path


def read_state(out: str | Path) -> tuple[dict, dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """(training.json, weights, optimizer tensors) of OUT.resume/; ResumeError when absent or foreign."""
    from model.io.checkpoint_saving import recover_interrupted_save

    path = resume_dir(out)
    recover_interrupted_save(path)  # a save killed between its two renames
    if not (path / STATE).is_file():
        raise ResumeError(f"{path}: no training state to resume from (a run saves it with each checkpoint)")
    try:
        info = json.loads((path / STATE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ResumeError(f"{path / STATE}: unreadable ({exc})") from None
    if not isinstance(info, dict) or info.get("format") != STATE_FORMAT:
        raise ResumeError(f"{path / STATE}: not a training state written by Transformer Explorer")
    weights, opt_tensors = _tensors(path / WEIGHTS), _tensors(path / OPTIMIZER)
    aliases = info.get("tied_weights") or {}
    if not isinstance(aliases, dict) or any(name not in weights for name in aliases.values()):
        raise ResumeError(f"{path / STATE}: its tied weights do not match {path / WEIGHTS}")
    for alias, name in aliases.items():
        weights[alias] = weights[name]
    return info, weights, opt_tensors


def _tensors(file: Path) -> dict[str, torch.Tensor]:
    """A safetensors file of the training state; ResumeError when missing, truncated or corrupt."""
    from safetensors import SafetensorError
    from safetensors.torch import load

    try:
        return load(file.read_bytes())
    except OSError as exc:
        raise ResumeError(f"{file}: cannot read it ({exc.strerror or exc}); the training state is incomplete") from None
    except (SafetensorError, ValueError, RuntimeError) as exc:
        raise ResumeError(f"{file}: not a readable safetensors file, truncated or corrupt ({exc}); the training "
                          "state cannot be resumed (train afresh, or restore the folder from a backup)") from None


def restore(info: dict, weights: dict, opt_tensors: dict, model: torch.nn.Module, optimizer, scheduler,
            rank: int) -> None:
    """Put the weights, Adam's state, the schedule and this rank's RNG back; ResumeError when the
    saved state does not fit the model (another size, a damaged training.json)."""
    try:
        model.load_state_dict(weights, strict=True)
        load_optimizer(optimizer, opt_tensors, info["optimizer"])
        scheduler.load_state_dict({**info["scheduler"], "lr_lambdas": [None] * len(optimizer.param_groups)})
    except (KeyError, TypeError, ValueError, RuntimeError) as exc:
        raise ResumeError(f"the training state does not fit the model it resumes ({str(exc).splitlines()[0]})") from None
    for group, lr in zip(optimizer.param_groups, scheduler.get_last_lr()):
        group["lr"] = lr
    rng = opt_tensors.get(f"rng.{rank}")
    if rng is not None:
        torch.set_rng_state(rng)


__all__ = ["save_state", "read_state", "restore", "resume_dir", "check_state_target", "ResumeError"]
