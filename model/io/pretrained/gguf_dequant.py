"""Q8_0 and Q4_1 GGUF blocks dequantized with torch: a few whole-tensor operations that run
without holding the interpreter, where `gguf.quants` runs numpy over groups of rows (seconds
for a small model's embedding, with the interpreter held between its many steps).

ggml's layouts: Q8_0 = a float16 scale d, then 32 int8 values (value = d·q); Q4_1 = a float16
scale d and minimum m, then 16 bytes whose low nibbles are the block's values 0–15 and high
nibbles its values 16–31 (value = d·q + m).
"""
from __future__ import annotations

import numpy as np
import torch

BLOCK = 32
BLOCK_BYTES = {"Q8_0": 2 + BLOCK, "Q4_1": 4 + BLOCK // 2}


def dequantize_blocks(raw: np.ndarray, type_name: str) -> torch.Tensor | None:
    """`raw` (uint8, whole blocks of `type_name`) as float32 values in a flat tensor; None for
    a type this module does not decode (the caller uses `gguf.quants` then)."""
    size = BLOCK_BYTES.get(type_name)
    if size is None:
        return None
    blocks = torch.from_numpy(np.array(raw, dtype=np.uint8, copy=True).reshape(-1, size))
    d = blocks[:, :2].contiguous().view(torch.float16).float()
    if type_name == "Q8_0":
        return (blocks[:, 2:].view(torch.int8).float() * d).reshape(-1)
    m = blocks[:, 2:4].contiguous().view(torch.float16).float()
    qs = blocks[:, 4:]
    q = torch.cat([qs & 0x0F, qs >> 4], dim=1).float()
    return (q * d + m).reshape(-1)


__all__ = ["dequantize_blocks"]
