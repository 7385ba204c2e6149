"""`load_model`: any model by what a user types: a bundled checkpoint's name, an installed pretrained
model's name or alias, one of our checkpoint folders, a Hugging Face folder or a llama .gguf file."""
from __future__ import annotations

import json
from pathlib import Path

from model.inference.bundle import ModelBundle
from model.io.checkpoints import bundled_checkpoints, load_checkpoint
from model.io.folders import leftovers


def installed_pretrained() -> dict[str, Path]:
    """Installed pretrained models by display name (cheap: nothing is loaded); none when the
    optional importers cannot be imported, so a broken optional install never stops a caller."""
    try:
        from model.io.pretrained import available_pretrained
    except ImportError:
        return {}
    return dict(available_pretrained())


def pretrained_alias(key: str) -> str:
    """The installed pretrained model a short name stands for ("smollm2" → "SmolLM2-135M-Instruct")."""
    try:
        from model.io.pretrained import ALIASES
    except ImportError:
        return key
    return ALIASES.get(key, key)


def is_pretrained_folder(path: str | Path) -> bool:
    """A Hugging Face-format folder (config.json with a "model_type") rather than one of our
    checkpoints (config.json with "format": "transformer-explorer-checkpoint")."""
    config = Path(path) / "config.json"
    if not config.is_file():
        return False
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False  # load_checkpoint names the problem with the file
    return isinstance(data, dict) and "model_type" in data and "format" not in data


def load_model(path_or_name: str | Path) -> ModelBundle:
    """The model `path_or_name` names, on the CPU. An installed model's folder or file keeps its
    proper name. Raises ValueError (CheckpointError and PretrainedError are ones) naming the problem."""
    bundled = bundled_checkpoints()
    key = str(path_or_name)
    if key in bundled:
        return load_checkpoint(bundled[key])
    installed = installed_pretrained()
    if pretrained_alias(key) in installed:
        from model.io.pretrained import load_pretrained
        return load_pretrained(pretrained_alias(key))
    path = Path(path_or_name).expanduser()
    if not path.exists() and not leftovers(path, "old"):  # (a save killed mid-way: loading restores it)
        names = ", ".join(sorted(bundled)) or "none bundled"
        extra = f"; pretrained: {', '.join(sorted(installed))}" if installed else ""
        raise ValueError(f"checkpoint {path} does not exist (bundled checkpoints: {names}{extra})")
    if path.is_file() and path.name == "config.json":
        path = path.parent
    if (path.is_file() and path.suffix.lower() == ".gguf") or is_pretrained_folder(path):
        from model.io.pretrained import load_pretrained
        named = [name for name, where in installed.items() if Path(where).resolve() == path.resolve()]
        return load_pretrained(named[0] if named else path)
    return load_checkpoint(path)


__all__ = ["installed_pretrained", "is_pretrained_folder", "load_model", "pretrained_alias"]
