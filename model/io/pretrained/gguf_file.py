"""Reading a GGUF file (llama.cpp's single-file format): its metadata and its tensors as float32.

The header (metadata, then each tensor's name, sizes, storage type and offset) is parsed here
with `struct`: `gguf.GGUFReader` makes a numpy view per value, seconds for a vocabulary of
~50,000 strings and as many merges, while this reads it in a fraction of one. The layout is the
GGUF specification's (versions 2 and 3, little-endian); the `gguf` package supplies the types'
names and block sizes, and `gguf.quants.dequantize` turns each tensor into float32 (F32, F16,
BF16, Q4_0, Q5_*, the K-quants …; Q8_0 and Q4_1 with torch: `gguf_dequant`). GGUF lists a tensor's sizes innermost first
(ggml's ne[0] is a row's length), so a (out, in) weight is listed as [in, out].
"""
from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from model.io.pretrained.files import PretrainedError
from model.io.pretrained.gguf_dequant import dequantize_blocks

MAGIC = b"GGUF"
VERSIONS = (2, 3)
DEFAULT_ALIGNMENT = 32
# GGUF value types → struct format of one scalar (8: string, 9: array are read apart)
SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
NUMPY = {0: np.uint8, 1: np.int8, 2: np.uint16, 3: np.int16, 4: np.uint32, 5: np.int32, 6: np.float32,
         7: np.bool_, 10: np.uint64, 11: np.int64, 12: np.float64}
STRING, ARRAY = 8, 9
SIZE = struct.Struct("<Q")  # a string's length in bytes, before its bytes


@dataclass(frozen=True)
class TensorInfo:
    """Where one tensor lies in the file: its sizes as GGUF lists them (innermost first), its
    storage type (`gguf.GGMLQuantizationType`) and the offset of its bytes."""

    name: str
    shape: tuple[int, ...]
    tensor_type: object
    offset: int

    @property
    def n_elements(self) -> int:
        """How many numbers the tensor holds (the product of its sizes)."""
        return math.prod(self.shape)


class _Header:
    """A cursor over the file's bytes that reads GGUF's little-endian values."""

    def __init__(self, data: memoryview, path: Path):
        self.data, self.pos, self.path = data, 0, path

    def scalar(self, fmt: str):
        value = struct.unpack_from(fmt, self.data, self.pos)[0]
        self.pos += struct.calcsize(fmt)
        return value

    def string(self) -> str:
        size = self.scalar("<Q")
        raw = bytes(self.data[self.pos:self.pos + size])
        if len(raw) != size:
            raise struct.error("a string runs past the end of the file")
        self.pos += size
        return raw.decode("utf-8", errors="replace")

    def strings(self, count: int) -> list[str]:
        """`count` strings in a row (a vocabulary, its merges) in one tight loop: ~100,000 of them
        while the GUI thread shares the interpreter."""
        data, pos, end_of_file, read_size = self.data, self.pos, len(self.data), SIZE.unpack_from
        out = []
        for _ in range(count):
            start = pos + 8
            pos = start + read_size(data, pos)[0]
            if pos > end_of_file:
                raise struct.error("a string runs past the end of the file")
            out.append(str(data[start:pos], "utf-8", "replace"))
        self.pos = pos
        return out

    def value(self, kind: int):
        if kind == STRING:
            return self.string()
        if kind == ARRAY:
            item, count = self.scalar("<I"), self.scalar("<Q")
            if item == STRING:
                return self.strings(count)
            if item not in NUMPY:
                raise struct.error(f"an array of value type {item}")
            dtype = np.dtype(NUMPY[item]).newbyteorder("<")
            values = np.frombuffer(self.data, dtype=dtype, count=count, offset=self.pos)
            self.pos += count * dtype.itemsize
            return values.tolist()
        if kind not in SCALARS:
            raise struct.error(f"value type {kind}")
        return self.scalar(SCALARS[kind])


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
            self.data = np.memmap(self.path, mode="r")
            self.metadata, self.tensors = self._read_header()
        except (struct.error, ValueError, OSError) as exc:  # a short, damaged or foreign file
            raise PretrainedError(f"{self.path}: not a GGUF file this explorer can read ({exc})") from None

    def _read_header(self) -> tuple[dict, dict[str, TensorInfo]]:
        head = _Header(memoryview(self.data), self.path)
        if bytes(head.data[:4]) != MAGIC:
            raise ValueError("it does not start with 'GGUF'")
        head.pos = 4
        version = head.scalar("<I")
        if version not in VERSIONS:
            raise ValueError(f"GGUF version {version}; versions {VERSIONS} are supported")
        n_tensors, n_values = head.scalar("<Q"), head.scalar("<Q")
        metadata = {}
        for _ in range(n_values):
            key = head.string()
            metadata[key] = head.value(head.scalar("<I"))
        infos = []
        for _ in range(n_tensors):
            name = head.string()
            shape = tuple(head.scalar("<Q") for _ in range(head.scalar("<I")))
            infos.append((name, shape, head.scalar("<I"), head.scalar("<Q")))
        alignment = int(metadata.get("general.alignment", DEFAULT_ALIGNMENT))
        start = -(-head.pos // alignment) * alignment  # the tensors' bytes begin at the next multiple
        types = self.gguf.GGMLQuantizationType
        tensors = {}
        for name, shape, kind, offset in infos:
            try:
                tensor_type = types(kind)
            except ValueError:
                raise ValueError(f"tensor {name!r} has unknown storage type {kind}") from None
            tensors[name] = TensorInfo(name, shape, tensor_type, start + offset)
        return metadata, tensors

    def meta(self, key: str, default=None):
        """A metadata value (number, string, or list), or `default` when the file lacks it."""
        return self.metadata.get(key, default)

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
        info = self.tensors[name]
        shape = tuple(int(n) for n in reversed(info.shape))  # outermost first
        block, size = self.gguf.GGML_QUANT_SIZES[info.tensor_type]
        if shape and shape[-1] % block:
            raise PretrainedError(f"{self.path}: tensor {name!r} has rows of {shape[-1]}, not whole "
                                  f"{info.tensor_type.name} blocks of {block}")
        n_bytes = int(np.prod(shape, dtype=np.int64)) // block * size
        if info.offset + n_bytes > self.data.size:
            raise PretrainedError(f"{self.path}: tensor {name!r} runs past the end of the file (a cut download?)")
        raw = self.data[info.offset:info.offset + n_bytes].reshape(*shape[:-1], shape[-1] // block * size)
        fast = dequantize_blocks(raw, info.tensor_type.name)
        if fast is not None:
            return fast.reshape(shape)
        try:
            values = self.gguf.quants.dequantize(raw, info.tensor_type)
        except NotImplementedError:
            raise PretrainedError(f"{self.path}: tensor {name!r} is stored as {info.tensor_type.name}, "
                                  "which the `gguf` package cannot dequantize") from None
        values = np.ascontiguousarray(values, dtype=np.float32).reshape(shape)
        if not values.flags.writeable:  # a float32 tensor is a view of the read-only file
            values = values.copy()
        return torch.from_numpy(values)


__all__ = ["GGUFFile", "TensorInfo"]
