"""Reading a Hugging Face-format folder: config.json and the weights, with errors that name the file.

The folder layout is the one `save_pretrained` writes: config.json, model.safetensors (or
shards listed in model.safetensors.index.json, or an older pytorch_model.bin) and the
tokenizer's files.
"""
from __future__ import annotations

import json
from pathlib import Path

import torch


class PretrainedError(ValueError):
    """A pretrained folder this explorer cannot load faithfully; the message names the file and why."""


def read_json(path: Path) -> dict:
    """A JSON object from `path`, or a `PretrainedError` that says what is wrong with it."""
    if not path.is_file():
        raise PretrainedError(f"{path}: file not found")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PretrainedError(f"{path}: not readable JSON ({exc})") from None
    if not isinstance(data, dict):
        raise PretrainedError(f"{path}: expected a JSON object, got {type(data).__name__}")
    return data


def read_weights(folder: Path) -> tuple[dict[str, torch.Tensor], Path]:
    """Every tensor of the checkpoint as float32 (integer buffers kept), and the file it came from."""
    single, index, legacy = folder / "model.safetensors", folder / "model.safetensors.index.json", folder / "pytorch_model.bin"
    try:
        if single.is_file():
            from safetensors.torch import load_file
            return _as_float32(load_file(str(single))), single
        if index.is_file():
            from safetensors.torch import load_file
            shards = sorted(set(read_json(index).get("weight_map", {}).values()))
            tensors: dict[str, torch.Tensor] = {}
            for shard in shards:
                tensors.update(load_file(str(folder / shard)))
            return _as_float32(tensors), index
        if legacy.is_file():
            # weights_only: a pickle from the internet must not run code.
            return _as_float32(torch.load(legacy, map_location="cpu", weights_only=True)), legacy
    except PretrainedError:
        raise
    except Exception as exc:  # safetensors/torch raise several types for a damaged file
        raise PretrainedError(f"{folder}: the weights could not be read ({type(exc).__name__}: {exc})") from None
    raise PretrainedError(f"{folder}: no model.safetensors (or pytorch_model.bin) with the weights")


def _as_float32(tensors: dict) -> dict[str, torch.Tensor]:
    return {k: v.float() if v.is_floating_point() else v for k, v in tensors.items()}


class Weights:
    """The checkpoint's tensors, handed out by name; whatever is never taken is reported, so a
    weight this explorer would silently drop is an error instead of a quietly different model."""

    def __init__(self, tensors: dict[str, torch.Tensor], file: Path):
        self.tensors, self.file = tensors, file
        self.used: set[str] = set()

    def has(self, name: str) -> bool:
        return name in self.tensors

    def take(self, *names: str) -> torch.Tensor:
        """The first of `names` present (tied weights are often saved under one name only)."""
        for name in names:
            if name in self.tensors:
                self.used.add(name)
                return self.tensors[name]
        raise PretrainedError(f"{self.file}: missing weight {names[0]!r}")

    def ignore(self, *prefixes: str) -> list[str]:
        """Mark tensors this explorer knowingly leaves out (e.g. BERT's pooler); returns their names."""
        names = [k for k in self.tensors if k.startswith(prefixes)]
        self.used.update(names)
        return names

    def check_all_used(self, feature: str) -> None:
        left = sorted(set(self.tensors) - self.used)
        if left:
            shown = ", ".join(left[:5]) + (f" and {len(left) - 5} more" if len(left) > 5 else "")
            raise PretrainedError(f"{self.file}: weights this explorer's {feature} has no place for: {shown}")


def load_into(model: torch.nn.Module, state: dict[str, torch.Tensor], file: Path) -> None:
    """`load_state_dict(strict=True)` with the checkpoint's file named in any error."""
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as exc:
        raise PretrainedError(f"{file}: the weights do not fit the model its config.json describes ({exc})") from None
