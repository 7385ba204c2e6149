"""What a checkpoint folder holds and how it fails: the file names, the format tag and version,
the size limits, the two error kinds, and the weights' layout (tied tensors stored once).
Shared by saving (`model.io.checkpoint_saving`) and loading (`model.io.checkpoints`)."""
from __future__ import annotations

import torch

FORMAT = "transformer-explorer-checkpoint"
FORMAT_VERSION = 1
WEIGHTS, CONFIG = "model.safetensors", "config.json"
PICKLE_SUFFIXES = (".pt", ".pth", ".bin", ".ckpt", ".pkl", ".pickle")
MAX_CONFIG_BYTES = 50_000_000  # a config.json with a word-level vocabulary is well under 1 MB
CHEAP_TO_BUILD = 5_000_000  # parameters: a model this small is checked by building it (~20 MB, ms)


class CheckpointError(ValueError):
    """A checkpoint that cannot be saved or loaded; the message names the file and the problem."""


class CheckpointWarning(UserWarning):
    """A checkpoint that loads but cannot work as it should (e.g. weights that are NaN)."""


def unique_state(model: torch.nn.Module) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    """The state dict with tied tensors stored once (safetensors refuses shared memory).

    Returns (tensors to save, alias → saved name), e.g. {"generator.weight": "src_embed.lut.weight"}.
    """
    tensors, aliases, seen = {}, {}, {}
    for name, t in model.state_dict().items():
        key = (t.untyped_storage().data_ptr(), t.storage_offset(), tuple(t.shape), t.dtype)
        if key in seen:
            aliases[name] = seen[key]
            continue
        seen[key] = name
        tensors[name] = t.detach().to("cpu").contiguous()
    return tensors, aliases
