"""Llama-architecture GGUF files (SmolLM2, TinyLlama, Llama …) loaded into *our* Transformer.

A Llama is the paper's decoder with later parts, each an option of `TransformerConfig`:
pre-norm RMSNorm (`norm="rms"`, `norm_first`), rotary positions (`positional="rope"`),
grouped-query attention (`n_kv_heads`), a SwiGLU feed-forward (`activation="swiglu"`), no
biases, no √d_model, and usually one matrix for the input and output embeddings. Names:

    token_embd / output            → tgt_embed.lut / generator (tied when the file has no output)
    blk.i.attn_norm / ffn_norm     → decoder.layers.i.add_norm1.norm / add_norm3.norm
    blk.i.attn_q / k / v / output  → decoder.layers.i.self_attn.w_q / w_k / w_v / w_o
    blk.i.ffn_gate / up / down     → decoder.layers.i.ffn.w_1 / w_3 / w_2
    output_norm                    → decoder.norm

llama.cpp rotates adjacent pairs (q₂ᵢ, q₂ᵢ₊₁) — the RoFormer paper's form and `apply_rope`'s —
so the file's W^Q and W^K rows are used as they are. (Hugging Face checkpoints rotate the two
halves of a head instead; converting one to GGUF permutes those rows, and transformers' GGUF
loader permutes them back. Either way each score q·k is the same.)
"""
from __future__ import annotations

from pathlib import Path

import torch

from model.inference.bundle import ModelBundle
from model.io.pretrained.files import PretrainedError
from model.io.pretrained.gguf_file import GGUFFile
from model.io.pretrained.gguf_tokenizer import gguf_tokenizer, special_ids
from model.nn.config import ConfigError, TransformerConfig
from model.nn.kinds import DECODER_ONLY
from model.nn.transformer import Transformer
from model.nn.weight_layout import store_weights_transposed

SUPPORTED = ("llama",)
EXAMPLES = ["The capital of France is", "Once upon a time, there was a little robot who",
            "def fibonacci(n):"]
CHAT_EXAMPLES = ["What is the capital of France?", "Explain attention in one sentence.",
                 "Write a haiku about the sea."]


def llama_config(file: GGUFFile) -> TransformerConfig:
    """Our config from the file's `llama.*` metadata; refuses what our Transformer lacks."""
    arch = file.architecture
    if arch not in SUPPORTED:
        raise PretrainedError(f"{file.path}: architecture {arch!r} is not supported; this explorer opens GGUF files "
                              f"of the {', '.join(map(repr, SUPPORTED))} architecture (Llama, SmolLM2, TinyLlama …)")

    def meta(key: str, default=None):
        return file.meta(f"{arch}.{key}", default)

    if meta("expert_count"):
        raise PretrainedError(f"{file.path}: a mixture of experts ({meta('expert_count')} experts) is not supported")
    scaling = meta("rope.scaling.type", "none")
    if scaling not in ("none", None) or "rope_freqs.weight" in file.tensors:
        raise PretrainedError(f"{file.path}: rotary scaling ({scaling}) is not supported; only plain RoPE is")
    d_model, n_heads = int(file.require(f"{arch}.embedding_length")), int(file.require(f"{arch}.attention.head_count"))
    vocab = file.meta(f"{arch}.vocab_size") or len(file.require("tokenizer.ggml.tokens"))
    d_k = d_model // n_heads
    for key in ("rope.dimension_count", "attention.key_length", "attention.value_length"):
        if meta(key) not in (None, d_k):
            raise PretrainedError(f"{file.path}: {arch}.{key} is {meta(key)}, not d_model / heads = {d_k}; "
                                  "only heads of that width (rotated whole) are supported")
    try:
        return TransformerConfig(
            src_vocab_size=int(vocab), tgt_vocab_size=int(vocab), d_model=d_model, n_heads=n_heads,
            n_kv_heads=int(meta("attention.head_count_kv", n_heads)), d_ff=int(file.require(f"{arch}.feed_forward_length")),
            n_encoder_layers=0, n_decoder_layers=int(file.require(f"{arch}.block_count")), dropout=0.0,
            max_len=int(meta("context_length", 2048)), share_embeddings="output.weight" not in file.tensors,
            norm_first=True, positional="rope", rope_base=float(meta("rope.freq_base", 10000.0)),
            pad_id=special_ids(file)["pad_id"], kind=DECODER_ONLY.name,
            layer_norm_eps=float(meta("attention.layer_norm_rms_epsilon", 1e-5)), activation="swiglu",
            scale_embeddings=False, norm="rms", bias=False)
    except ConfigError as exc:
        raise PretrainedError(f"{file.path}: {exc}") from None


def gguf_config(path: str | Path) -> tuple[TransformerConfig, int]:
    """(config, parameter count) from a GGUF file's header and tensor sizes, without reading the weights."""
    file = GGUFFile(path)
    return llama_config(file), sum(int(t.n_elements) for t in file.tensors.values())


def gguf_names(config: TransformerConfig) -> dict[str, str]:
    """Our parameter name → the GGUF tensor that holds it (tied weights: once, under the embedding)."""
    names = {"tgt_embed.lut.weight": "token_embd.weight", "decoder.norm.weight": "output_norm.weight"}
    if not config.share_embeddings:
        names["generator.weight"] = "output.weight"
    parts = {"add_norm1.norm": "attn_norm", "add_norm3.norm": "ffn_norm", "self_attn.w_q": "attn_q",
             "self_attn.w_k": "attn_k", "self_attn.w_v": "attn_v", "self_attn.w_o": "attn_output",
             "ffn.w_1": "ffn_gate", "ffn.w_3": "ffn_up", "ffn.w_2": "ffn_down"}
    for i in range(config.n_decoder_layers):
        for ours, theirs in parts.items():
            names[f"decoder.layers.{i}.{ours}.weight"] = f"blk.{i}.{theirs}.weight"
    return names


@torch.no_grad()
def load_llama_weights(model: Transformer, file: GGUFFile) -> list[str]:
    """Dequantize each tensor straight into the model's parameter (one tensor in memory at a
    time); every tensor of the file must find its place. Returns notes on the storage types."""
    names = gguf_names(model.config)
    params = dict(model.named_parameters())  # tied weights appear once
    if set(params) != set(names):  # a config the mapping does not cover: a bug here, said plainly
        raise PretrainedError(f"{file.path}: no GGUF name for {sorted(set(params) ^ set(names))[:4]}")
    left = sorted(set(file.tensors) - set(names.values()))
    if left:
        raise PretrainedError(f"{file.path}: tensors this explorer's Llama has no place for: {', '.join(left[:5])}"
                              + (f" and {len(left) - 5} more" if len(left) > 5 else ""))
    for ours, theirs in names.items():
        weight = file.tensor(theirs)
        if tuple(weight.shape) != tuple(params[ours].shape):
            raise PretrainedError(f"{file.path}: tensor {theirs!r} has shape {tuple(weight.shape)}; the sizes in its "
                                  f"metadata need {tuple(params[ours].shape)}")
        params[ours].copy_(weight)
    types = sorted({file.type_name(n) for n in names.values()})
    return [f"weights stored as {', '.join(types)}, dequantized to float32"]


def check_vocabulary_size(file: GGUFFile, n_tokens: int, config: TransformerConfig) -> None:
    if n_tokens != config.tgt_vocab_size:
        raise PretrainedError(f"{file.path}: the tokenizer has {n_tokens:,} tokens but the model "
                              f"{config.tgt_vocab_size:,} embeddings")


def load_gguf(path: str | Path, name: str | None = None) -> ModelBundle:
    """A llama-architecture GGUF file → a decoder-only `ModelBundle` on the CPU in eval mode."""
    file = GGUFFile(path)
    config = llama_config(file)
    check_vocabulary_size(file, len(file.require("tokenizer.ggml.tokens")), config)
    model = store_weights_transposed(Transformer.empty(config), keep_values=False)  # faster decoding steps
    notes = load_llama_weights(model, file)
    # The tokenizer is built last: its build is Python that holds the interpreter lock, and the first
    # moments of a load are when the window repaints for the change; dequantizing the weights lets go of it.
    tokenizer, tokenizer_notes = gguf_tokenizer(file)
    check_vocabulary_size(file, len(tokenizer), config)
    notes += tokenizer_notes
    model.eval()
    template = file.meta("tokenizer.chat_template")
    task = {"name": "pretrained:llama", "pretrained": str(file.path), "model_type": "llama", "format": "gguf",
            "examples": EXAMPLES, "notes": notes, "chat_template": template or "",
            "chat_examples": CHAT_EXAMPLES if template else []}
    shown = name or str(file.meta("general.name") or file.path.stem)
    return ModelBundle(model, tokenizer, tokenizer, task=task, name=shown, path=str(file.path))


__all__ = ["load_gguf", "gguf_config", "llama_config", "gguf_names", "load_llama_weights", "SUPPORTED"]
