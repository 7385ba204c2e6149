"""Q8_0 and Q4_1 blocks dequantized with torch give exactly what the `gguf` package's own numpy
dequantizer gives for the same bytes; other types are left to it."""
from __future__ import annotations

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")

from model.io.pretrained.gguf_dequant import BLOCK_BYTES, dequantize_blocks  # noqa: E402


def random_blocks(type_name: str, rows: int, blocks_per_row: int, seed: int = 0) -> np.ndarray:
    """Random quantised bytes with finite float16 scales (and minimum, for Q4_1) in each block."""
    rng = np.random.default_rng(seed)
    size = BLOCK_BYTES[type_name]
    raw = rng.integers(0, 256, size=(rows * blocks_per_row, size), dtype=np.uint8)
    scales = 2 if type_name == "Q8_0" else 4
    halves = rng.normal(0, 0.05, size=(rows * blocks_per_row, scales // 2)).astype(np.float16)
    raw[:, :scales] = halves.view(np.uint8).reshape(-1, scales)
    return raw.reshape(rows, blocks_per_row * size)


@pytest.mark.parametrize("type_name", ["Q8_0", "Q4_1"])
def test_torch_dequantization_matches_the_gguf_package(type_name):
    raw = random_blocks(type_name, rows=7, blocks_per_row=3)
    ours = dequantize_blocks(raw, type_name).numpy().reshape(7, 3 * 32)
    reference = np.asarray(gguf.quants.dequantize(raw, gguf.GGMLQuantizationType[type_name]), dtype=np.float32)
    np.testing.assert_array_equal(ours, reference.reshape(7, 3 * 32))


def test_other_types_are_left_to_the_gguf_package():
    assert dequantize_blocks(np.zeros((1, 18), dtype=np.uint8), "Q4_0") is None
