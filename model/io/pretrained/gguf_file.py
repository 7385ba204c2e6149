"""Reading a GGUF file (llama.cpp's single-file format): its metadata and its tensors as float32.

`gguf.GGUFReader` maps the file and parses the header; each tensor is turned into float32 by
`gguf.quants.dequantize`, which knows every block format the `gguf` package does (F32, F16,
BF16, Q8_0, Q4_0, Q4_1, Q5_*, the K-quants …). GGUF lists a tensor's sizes innermost first
(ggml's ne[0] is a row's length), so a (out, in) weight is listed as [in, out].
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from model.io.pretrained.files import PretrainedError


def _gguf_package(path: Path):
    try:
        import gguf
    except ImportError:
        raise PretrainedError(f"{path}: reading a GGUF file needs the `gguf` package "
                              "(pip install 'transformer-explorer[llm]')") from None
    return gguf


class GGUFFile:
    """One opened GGUF file: `meta(key)` reads the header, `tensor(name)` a weight as float32."""

    def __init__(self, path: str | Path):
        self.path = Path(path).expanduser()
        if not self.path.is_file():
            raise PretrainedError(f"{self.path}: file not found")
        self.gguf = _gguf_package(self.path)
        try:
            self.reader = self.gguf.GGUFReader(str(self.path))
        except Exception as exc:  # the reader raises ValueError, struct and numpy errors for a damaged file
            raise PretrainedError(f"{self.path}: not a GGUF file the `gguf` package can read "
                                  f"({type(exc).__name__}: {exc})") from None
        self.tensors = {t.name: t for t in self.reader.tensors}

    def meta(self, key: str, default=None):
        """A metadata value (number, string, or list), or `default` when the file lacks it."""
        field = self.reader.fields.get(key)
        if field is None:
            return default
        return field.contents()

    def require(self, key: str):
        value = self.meta(key)
        if value is None:
            raise PretrainedError(f"{self.path}: the metadata lacks {key!r}")
        return value

    @property
    def architecture(self) -> str:
        return str(self.meta("general.architecture", "unknown"))

    def type_name(self, name: str) -> str:
        return self.tensors[name].tensor_type.name

    def tensor(self, name: str) -> torch.Tensor:
        """Weight `name` dequantized to float32, shaped as PyTorch lists it (outermost first)."""
        if name not in self.tensors:
            raise PretrainedError(f"{self.path}: missing tensor {name!r}")
        t = self.tensors[name]
        try:
            values = self.gguf.quants.dequantize(t.data, t.tensor_type)
        except NotImplementedError:
            raise PretrainedError(f"{self.path}: tensor {name!r} is stored as {t.tensor_type.name}, "
                                  "which the `gguf` package cannot dequantize") from None
        shape = tuple(int(n) for n in reversed(t.shape))
        values = np.ascontiguousarray(values, dtype=np.float32).reshape(shape)
        if not values.flags.writeable:  # a float32 tensor is a view of the read-only file
            values = values.copy()
        return torch.from_numpy(values)


__all__ = ["GGUFFile"]
