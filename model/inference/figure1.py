"""What Figure 1 of the paper says for a given model, apart from drawing it: the name of each
block (from the config: LayerNorm or RMSNorm, multi-head or grouped-query attention, the
positional scheme) and the token lines under the inputs and over the output probabilities
(from a run's result). The explorer's architecture panel only places and draws these."""
from __future__ import annotations


def norm_title(cfg) -> str:
    """The normalisation the model computes: the paper's LayerNorm, or RMSNorm (Llama, SmolLM2)."""
    return "RMSNorm" if getattr(cfg, "norm", "layer") == "rms" else "LayerNorm"


def ffn_title(cfg) -> str:
    return "SwiGLU Feed Forward" if cfg.activation == "swiglu" else "Feed Forward"


def attention_title(cfg, masked: bool) -> str:
    """Multi-head attention, or grouped-query attention when heads share key/value heads."""
    name = "Grouped-Query Attention" if cfg.kv_heads < cfg.n_heads else "Multi-Head Attention"
    return f"Masked {name}" if masked else name


def inputs_title(cfg, stack: str) -> str:
    """The label under a column: the encoder's inputs, or the decoder's shifted targets."""
    if stack == "encoder":
        return "Inputs"
    return "Inputs (shifted right)" if cfg.model_kind.continues_prompt else "Outputs (shifted right)"


def embedding_title(cfg, stack: str) -> str:
    if stack == "encoder":
        return "Input Embedding"
    return "Token Embedding" if cfg.model_kind.continues_prompt else "Output Embedding"


def positional_titles(cfg) -> tuple[str, str]:
    """(full name, short name under the symbol) of the positional scheme: the paper's sinusoids,
    a learned table (Table 3 row E, BERT), or rotary positions (turned into q and k)."""
    if cfg.positional == "learned":
        return "Positional\nEmbedding", "Positional\nemb."
    if cfg.positional == "rope":
        return "Rotary positions:\nq and k turned in\nevery attention", "RoPE\n(in attention)"
    return "Positional\nEncoding", "Positional\nenc."


def block_titles(cfg, stack: str) -> list[str]:
    """Every name a block of this column can carry: each column is as wide as its own longest
    name, so the figure is narrower and a projector draws it larger."""
    common = [ffn_title(cfg), "Add & Norm", norm_title(cfg), "Linear", "Softmax"]
    if cfg.norm_first:
        common.append(f"Final {norm_title(cfg)}")
    if stack == "encoder":
        return [embedding_title(cfg, stack), attention_title(cfg, masked=False)] + common
    titles = ["Output Embedding", "Token Embedding", attention_title(cfg, masked=True)] + common
    if cfg.model_kind.has_cross_attention:
        titles.append("Multi-Head Cross-Attention")
    return titles


def output_pieces(result) -> list[str]:
    """The tokens over "Output Probabilities": what each position predicts, except for a masked
    LM, whose output is its input with each [MASK] replaced by its top guess (the other positions
    are not trained to predict anything, so their argmax would only confuse)."""
    if not result.mask_predictions:
        return list(result.out_pieces)
    out = list(result.source.pieces)
    for m in result.mask_predictions:
        out[m.position] = m.pieces[0]
    return out


def is_special(piece: str) -> bool:
    return len(piece) > 2 and piece.startswith("<") and piece.endswith(">")


def joined_characters(pieces: list[str]) -> str:
    """A character tokenizer's pieces as the text they spell, the specials apart: "<bos> 2026-11-22"."""
    line = ""
    for piece in pieces:
        if is_special(piece):
            line += (" " if line and not line.endswith(" ") else "") + piece + " "
        else:
            line += piece
    return line.strip()


def block_for_step(step: str, keys: list[str]) -> str | None:
    """The block a step lights up: the longest key that is the step's name or a prefix of it
    ("encoder.layers.0.self_attn" for "encoder.layers.0.self_attn.weights")."""
    hits = [key for key in keys if key and (step == key or step.startswith(key + "."))]
    return max(hits, key=len, default=None)
