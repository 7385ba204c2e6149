"""Saving a checkpoint folder atomically: the new checkpoint is written into a temporary folder
beside the target, fsynced, and renamed into place, so an interrupted save leaves the previous
checkpoint as it was (and the next save or load finishes what it left behind)."""
from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import tempfile
from pathlib import Path

import torch

from model.inference.bundle import ModelBundle
from model.io.checkpoint_format import (
    CONFIG,
    FORMAT,
    FORMAT_VERSION,
    MAX_CONFIG_BYTES,
    WEIGHTS,
    CheckpointError,
    unique_state,
)
from model.io.folders import (
    check_ours_or_empty,
    fsync_dir,
    is_json_of_format,
    leftovers,
    os_reason,
    swap_into_place,
    umask,
    write_synced,
)


def _config_dict(bundle: ModelBundle, metrics: dict | None, aliases: dict[str, str]) -> dict:
    from model import __version__

    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "project_version": __version__,
        "saved_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "name": bundle.name,
        "model": bundle.config.to_dict(),
        "src_tokenizer": bundle.src_tokenizer.to_dict(),
        "tgt_tokenizer": bundle.tgt_tokenizer.to_dict(),
        "task": bundle.task,
        "metrics": dict(metrics if metrics is not None else bundle.metrics),
        "tied_weights": aliases,
    }


def save_checkpoint(bundle: ModelBundle, path: str | Path, metrics: dict | None = None) -> Path:
    """Write the bundle to the folder `path` atomically; returns the folder.

    Refuses to replace a folder that is not one of our checkpoints (it would delete it). The
    weights, the config and the folders are fsynced before the swap, and a save killed midway
    is finished by the next save or load (`recover_interrupted_save`).
    """
    from safetensors.torch import save as safetensors_bytes

    path = Path(path)
    try:
        recover_interrupted_save(path)
    except OSError as exc:
        raise CheckpointError(f"{path}: cannot tidy up an earlier interrupted save ({exc.strerror or exc})") from None
    check_save_target(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.saving-", dir=path.parent))
        os.chmod(tmp, 0o777 & ~umask())  # mkdtemp makes it private; a checkpoint is an ordinary folder
    except OSError as exc:
        raise CheckpointError(f"{path}: cannot create the checkpoint folder ({exc.strerror or exc})") from None
    writing = WEIGHTS
    try:
        tensors, aliases = unique_state(bundle.model)
        data = safetensors_bytes(tensors, metadata={"format": FORMAT, "format_version": str(FORMAT_VERSION)})
        write_synced(tmp / WEIGHTS, data)
        del data
        writing = CONFIG
        text = json.dumps(_config_dict(bundle, metrics, aliases), indent=2, ensure_ascii=False, default=_json_default)
        write_synced(tmp / CONFIG, (text + "\n").encode("utf-8"))
        writing = "the folder"
        fsync_dir(tmp)
        swap_into_place(tmp, path)
    except OSError as exc:
        raise CheckpointError(f"{path}: could not save the checkpoint, writing {writing} failed: "
                              f"{os_reason(exc)}; the previous checkpoint, if any, is unchanged") from None
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    bundle.path = str(path)
    return path


def check_save_target(path: str | Path) -> None:
    """Refuse to replace anything but one of our own checkpoints: a save deletes the old folder.
    (`train` calls it before training, so a refused --out costs no training time.)"""
    check_ours_or_empty(path, CONFIG, lambda f: is_json_of_format(f, FORMAT, MAX_CONFIG_BYTES), (WEIGHTS, CONFIG),
                        "checkpoint", CheckpointError)


def recover_interrupted_save(path: str | Path) -> bool:
    """Finish what a save killed between its two renames left behind; True when a checkpoint was restored.

    The swap moves the previous checkpoint to `.NAME.old-*`, then the new one (`.NAME.saving-*`)
    to NAME. Killed in between, NAME is gone: the previous checkpoint is renamed back. Once NAME
    exists, leftover `.old-*` and `.saving-*` folders are deleted.
    """
    path = Path(path)
    restored = False
    if not path.exists():
        for old in leftovers(path, "old"):
            if (old / CONFIG).is_file() and (old / WEIGHTS).is_file():
                os.replace(old, path)
                fsync_dir(path.parent)
                restored = True
                break
    if path.is_dir():
        for leftover in leftovers(path, "old") + leftovers(path, "saving"):
            shutil.rmtree(leftover, ignore_errors=True)
    return restored


def _json_default(obj):
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, torch.Tensor) and obj.numel() == 1:
        return obj.item()
    if isinstance(obj, tuple):
        return list(obj)
    raise TypeError(f"cannot store {type(obj).__name__} in config.json")

