"""Choosing where to run: "auto" means CUDA, then Apple's MPS, then the CPU."""
from __future__ import annotations

import torch

DEVICES = ("auto", "cpu", "cuda", "mps")


class DeviceError(ValueError):
    """A device that was asked for but is not available on this machine."""


def mps_available() -> bool:
    backend = getattr(torch.backends, "mps", None)
    return bool(backend is not None and backend.is_available())


def resolve_device(name: str | torch.device = "auto") -> torch.device:
    """"auto" → the fastest available device; an explicit name must exist or `DeviceError` says why."""
    if isinstance(name, torch.device):
        name = str(name)
    base = str(name).split(":")[0]
    if base not in DEVICES:
        raise DeviceError(f"unknown device {name!r}; use one of {', '.join(DEVICES)}")
    if base == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        return torch.device("mps") if mps_available() else torch.device("cpu")
    if base == "cuda" and not torch.cuda.is_available():
        raise DeviceError("device 'cuda' was requested but PyTorch sees no CUDA GPU "
                          f"(torch {torch.__version__}; a CPU-only build cannot use one)")
    if base == "mps" and not mps_available():
        raise DeviceError("device 'mps' was requested but Apple's Metal backend is not available here")
    return torch.device(name)


def describe(device: torch.device) -> str:
    """A short human description, e.g. 'cuda (NVIDIA H100)' or 'cpu (2 threads)'."""
    if device.type == "cuda":
        return f"cuda ({torch.cuda.get_device_name(device)})"
    if device.type == "cpu":
        return f"cpu ({torch.get_num_threads()} threads)"
    return device.type
