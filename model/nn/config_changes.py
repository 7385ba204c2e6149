"""What changed between the paper's Transformer and a 2024 small language model, read from the
two configs: one row per aspect (the 2017 vs 2024 panel's table).

The paper's side is its base model (Table 3: N = 6, d_model 512, d_ff 2048, h = 8, a shared
source–target BPE vocabulary of about 37000 tokens); the other side is whatever config is
given (SmolLM2-135M when it loads).
"""
from __future__ import annotations

from dataclasses import dataclass

from model.nn.config import TransformerConfig

PAPER_VOCAB = 37000  # Section 5.1: shared source-target byte-pair encoding, ~37000 tokens


def paper_config() -> TransformerConfig:
    """The paper's base model (Table 3), with its shared 37000-token vocabulary."""
    return TransformerConfig(src_vocab_size=PAPER_VOCAB, tgt_vocab_size=PAPER_VOCAB, share_embeddings=True)


def is_modern(config: TransformerConfig) -> bool:
    """A Llama-family config (what 2024's small models are built from)."""
    return config.norm == "rms" or config.positional == "rope" or config.activation == "swiglu"


@dataclass(frozen=True)
class Row:
    aspect: str
    old: str
    new: str


def _stacks(c: TransformerConfig) -> str:
    kind = c.model_kind
    if kind.has_encoder and kind.has_decoder:
        return f"encoder {c.n_encoder_layers} + decoder {c.n_decoder_layers} layers"
    if kind.has_encoder:
        return f"encoder only, {c.n_encoder_layers} layers"
    return f"decoder only, {c.n_decoder_layers} layers"


def _norm(c: TransformerConfig) -> str:
    name = "RMSNorm" if c.norm == "rms" else "LayerNorm"
    return f"{name}, before each sublayer (pre-norm) + a final one" if c.norm_first else \
        f"{name} after each residual sum (post-norm)"


def _positions(c: TransformerConfig) -> str:
    if c.positional == "rope":
        return f"rotary (RoPE), θ base {c.rope_base:,.0f}: q and k turned in every layer"
    if c.positional == "learned":
        return "learned table, added to the embeddings"
    return "sinusoids added to the embeddings"


def _ffn(c: TransformerConfig) -> str:
    if c.activation == "swiglu":
        return f"SwiGLU: (SiLU(x W_gate) ⊙ x W_up) W_down, d_ff {c.d_ff:,} (3 matrices)"
    name = {"relu": "ReLU", "gelu": "GELU"}.get(c.activation, c.activation)
    return f"{name}(x W₁) W₂, d_ff {c.d_ff:,} (2 matrices)"


def _heads(c: TransformerConfig) -> str:
    shared = (f"{c.kv_heads} KV heads, each shared by {c.n_heads // c.kv_heads} (GQA)" if c.kv_heads < c.n_heads
              else f"{c.kv_heads} KV heads (one per head)")
    return f"{c.n_heads} heads of d_k {c.d_k}; {shared}"


def _vocabulary(c: TransformerConfig) -> str:
    shared = " (shared source–target)" if c.share_embeddings and c.model_kind.has_encoder else ""
    return f"{c.tgt_vocab_size if c.model_kind.has_decoder else c.src_vocab_size:,} tokens{shared}"


def _parameters(c: TransformerConfig, counted: int | None) -> str:
    if counted:
        return f"{counted / 1e6:,.1f} M (counted)" if counted >= 1e6 else f"{counted:,} (counted)"
    return f"≈ {c.parameter_estimate() / 1e6:,.0f} M from the sizes"


def config_changes(old: TransformerConfig, new: TransformerConfig, new_parameters: int | None = None) -> list[Row]:
    """Each aspect of the two models, in words and numbers."""
    return [
        Row("Stacks", _stacks(old), _stacks(new)),
        Row("Width", f"d_model {old.d_model}", f"d_model {new.d_model}"),
        Row("Norm", _norm(old), _norm(new)),
        Row("Positions", _positions(old), _positions(new)),
        Row("FFN", _ffn(old), _ffn(new)),
        Row("Heads", _heads(old), _heads(new)),
        Row("Biases", "in every projection" if old.bias else "none", "in every projection" if new.bias else "none"),
        Row("Parameters", _parameters(old, None) + " (Table 3: 65 M)", _parameters(new, new_parameters)),
        Row("Vocabulary", _vocabulary(old), _vocabulary(new)),
        Row("Context", f"{old.max_len:,} positions (this project's table; the sinusoids extend)",
            f"{new.max_len:,} tokens"),
    ]


__all__ = ["PAPER_VOCAB", "Row", "config_changes", "is_modern", "paper_config"]
