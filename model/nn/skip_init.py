"""Build a module without initialising its weights, for a loader that overwrites every weight.

While `without_init()` is active (on this thread only), `torch.nn.init`'s functions and the
in-place fills they use return the tensor untouched: parameters keep torch.empty's memory and
nothing is computed for ~10⁸ numbers about to be overwritten. On the CPU this also avoids the
meta device, whose first initialisation imports torch._dynamo (~1–2 s holding the GIL).
"""
from __future__ import annotations

import torch
from torch.overrides import TorchFunctionMode

_FILLS = {torch.Tensor.uniform_, torch.Tensor.normal_, torch.Tensor.fill_, torch.Tensor.zero_}


class without_init(TorchFunctionMode):  # noqa: N801 (used as a context manager, like torch.no_grad)
    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func in _FILLS or getattr(func, "__module__", None) == "torch.nn.init":
            return args[0] if args else next(iter((kwargs or {}).values()))
        return func(*args, **(kwargs or {}))
