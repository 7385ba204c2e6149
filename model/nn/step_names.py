"""A recorded step's name as a lecturer reads it aloud, layers counted from 1.

The recorder's names are PyTorch module paths ("encoder.layers.0.self_attn.weights"): stable,
greppable, and what an engineer matches against the code, so they stay the steps' identity.
A student reads "Encoder layer 1 · self-attention · weights" instead; every numbered part
(layers, heads, add & norm) is counted from 1 there, as everywhere else on screen.
"""
from __future__ import annotations

STACKS = {"encoder": "Encoder", "decoder": "Decoder", "generator": "Output layer"}
MODULES = {"self_attn": "self-attention", "cross_attn": "cross-attention", "ffn": "feed-forward",
           "embedding": "embedding", "positional": "positional encoding", "input": "input (embedding + PE)",
           "final_norm": "final layer norm", "norm": "layer norm", "q": "Q", "k": "K", "v": "V",
           "probs": "probabilities", "residual": "residual sum", "concat": "heads concatenated",
           "context": "context (weights × V)", "tokens": "token lookup"}
DECODER_MODULES = {"self_attn": "masked self-attention"}  # the decoder's own attention is causal
NUMBERED = {"add_norm": "add & norm"}  # "add_norm2" → "add & norm 2"


def _part(part: str, stack: str) -> str:
    if stack == "decoder" and part in DECODER_MODULES:
        return DECODER_MODULES[part]
    if part in MODULES:
        return MODULES[part]
    for prefix, words in NUMBERED.items():
        if part.startswith(prefix) and part[len(prefix):].isdigit():
            return f"{words} {part[len(prefix):]}"
    return part.replace("_", " ")


def readable_step_name(name: str) -> str:
    """"encoder.layers.0.self_attn.weights" → "Encoder layer 1 · self-attention · weights";
    a name it does not know the parts of is still shown whole, its layer numbers from 1."""
    parts = name.split(".")
    stack = parts[0]
    words: list[str] = [STACKS.get(stack, stack)]
    i = 1
    while i < len(parts):
        part = parts[i]
        if part == "layers" and i + 1 < len(parts) and parts[i + 1].isdigit():
            words[-1] += f" layer {int(parts[i + 1]) + 1}"
            i += 2
            continue
        words.append(_part(part, stack))
        i += 1
    return " · ".join(words)
