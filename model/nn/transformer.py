"""The Transformer of Figure 1, with the encoder-only and decoder-only variants from the same layers."""
from __future__ import annotations

import torch
from torch import nn

from model.nn.config import TransformerConfig
from model.nn.dropout import Dropout
from model.nn.layers import Decoder, Encoder
from model.nn.positional import LearnedPositionalEmbedding, SinusoidalPositionalEncoding, TokenEmbedding
from model.nn.hooks import current_trace, emit


def subsequent_mask(size: int, device: torch.device | str | None = None) -> torch.Tensor:
    """(1, T, T) boolean: position i may attend j only if j <= i (Section 3.2.3)."""
    return torch.ones(size, size, dtype=torch.bool, device=device).tril().unsqueeze(0)


def padding_mask(ids: torch.Tensor, pad_id: int) -> torch.Tensor:
    """(B, 1, 1, T) boolean: True on real tokens, so no query ever attends a pad key."""
    return (ids != pad_id)[:, None, None, :]


def decoder_mask(tgt: torch.Tensor, pad_id: int, causal: bool = True) -> torch.Tensor:
    """(B, 1, T, T): target padding keys blocked and, when `causal`, the future too.

    The first position is the start symbol and never padding, even when its id is pad_id:
    Marian (opus-mt) starts decoding with the pad id itself (decoder_start_token_id).
    """
    mask = padding_mask(tgt, pad_id)  # (B, 1, 1, T), a fresh tensor
    if tgt.size(1):
        mask[..., 0] = True
    if causal:
        mask = mask & subsequent_mask(tgt.size(1), tgt.device).unsqueeze(1)  # (B, 1, T, T)
    else:
        mask = mask.expand(-1, -1, tgt.size(1), -1)
    return mask


class Transformer(nn.Module):
    """Figure 1: embeddings + positions → N encoder layers → N decoder layers → linear → softmax.

    `forward(src, tgt)` returns logits (B, T_tgt, V_tgt) for teacher-forced `tgt` (which
    starts with <bos>); `encode` and `decode` are the two halves, as in the paper.
    """

    def __init__(self, config: TransformerConfig):
        super().__init__()
        config.validate()
        self.config = cfg = config
        if cfg.positional == "sinusoidal":
            self.positional = SinusoidalPositionalEncoding(cfg.d_model, cfg.max_len)
        elif cfg.positional == "sinusoidal_halves":
            self.positional = SinusoidalPositionalEncoding(cfg.d_model, cfg.max_len, layout="halves")
        else:
            self.positional = LearnedPositionalEmbedding(cfg.d_model, cfg.max_len)
        self.embed_dropout = Dropout(cfg.dropout)
        # BERT's additions to the input (Devlin et al. 2019, Fig. 2): a token-type ("segment")
        # embedding (the source is all type 0) and a LayerNorm over the sum, per stack.
        self.token_type = nn.Embedding(cfg.type_vocab_size, cfg.d_model) if cfg.type_vocab_size else None
        kind = cfg.model_kind
        stacks = [s for s, has in (("encoder", kind.has_encoder), ("decoder", kind.has_decoder)) if has]
        self.embed_norm = (nn.ModuleDict({s: nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps) for s in stacks})
                           if cfg.embedding_norm else None)
        out_vocab = cfg.tgt_vocab_size if kind.has_decoder else cfg.src_vocab_size
        if kind.has_encoder:
            self.src_embed = TokenEmbedding(cfg.src_vocab_size, cfg.d_model, cfg.pad_id)
            self.encoder = Encoder(cfg)
        if kind.has_decoder:
            if cfg.share_embeddings and kind.has_encoder:
                self.tgt_embed = self.src_embed  # Section 3.4: one weight matrix for both embeddings
            else:
                self.tgt_embed = TokenEmbedding(cfg.tgt_vocab_size, cfg.d_model, cfg.pad_id)
            self.decoder = Decoder(cfg, cross_attention=kind.has_cross_attention)
        self.generator = nn.Linear(cfg.d_model, out_vocab)
        self._init_weights()
        if cfg.share_embeddings:
            # ... and the pre-softmax linear transformation (Section 3.4).
            self.generator.weight = (self.tgt_embed if kind.has_decoder else self.src_embed).lut.weight

    def _init_weights(self) -> None:
        for name, p in self.named_parameters():
            if p.dim() > 1 and "lut" not in name and "positional" not in name:
                nn.init.xavier_uniform_(p)
            elif name.endswith(".bias"):
                nn.init.zeros_(p)

    # -- Figure 1, bottom: inputs ------------------------------------------------------------
    def embed(self, ids: torch.Tensor, table: TokenEmbedding, stack: str) -> torch.Tensor:
        """Token embedding × √d_model + positional encoding, then dropout (Sections 3.4, 3.5).

        BERT-like configs skip the √d_model (scale_embeddings), add the type-0 token-type
        vector to the source (type_vocab_size) and normalise the sum (embedding_norm).
        """
        axis = "src" if stack == "encoder" else "tgt"
        cfg = self.config
        scale = table.scale if cfg.scale_embeddings else 1.0
        token_type = self.token_type if stack == "encoder" else None
        if current_trace() is None:
            x = table(ids) * scale + self.positional(ids.size(1))
            if token_type is not None:
                x = x + token_type(torch.zeros_like(ids))
            if self.embed_norm is not None:
                x = self.embed_norm[stack](x)
            return self.embed_dropout(x)
        tokens = table(ids)  # (B, T, d_model)
        emit(None, f"{stack}.embedding.tokens", tokens, "E[token]",
             "Each token id looks up its learned vector in the embedding table.", ("batch", axis, "d_model"))
        if cfg.scale_embeddings:
            scaled = tokens * scale
            emit(None, f"{stack}.embedding.scaled", scaled, "E[token] · √d_model",
                 "The embeddings are multiplied by √d_model (Section 3.4) so they are not drowned by the positions.",
                 ("batch", axis, "d_model"))
        else:
            scaled = tokens
            emit(None, f"{stack}.embedding.scaled", scaled, "E[token] (not scaled)",
                 "This model adds its embeddings unscaled (no × √d_model, unlike Section 3.4).",
                 ("batch", axis, "d_model"))
        pe = self.positional(ids.size(1))  # (T, d_model)
        emit(None, f"{stack}.positional", pe, self._positional_formula(),
             "The positional encoding: the only place the model learns where each token is.", (axis, "d_model"))
        x = scaled + pe
        formula = ("E[token] · √d_model" if cfg.scale_embeddings else "E[token]") + " + PE(pos)"
        if token_type is not None:
            types = token_type(torch.zeros_like(ids))  # (B, T, d_model)
            emit(None, f"{stack}.embedding.token_type", types, "T[0]",
                 "BERT's token-type (segment) embedding; a single sentence is all type 0.", ("batch", axis, "d_model"))
            x = x + types
            formula += " + T[0]"
        emit(None, f"{stack}.input", x, formula,
             "What enters the first layer: meaning plus position, one vector per token."
             if self.embed_norm is None else "Meaning plus position, one vector per token, before the LayerNorm.",
             ("batch", axis, "d_model"))
        if self.embed_norm is not None:
            x = self.embed_norm[stack](x)
            emit(None, f"{stack}.input_norm", x, f"LayerNorm({formula})",
                 "BERT normalises the summed embeddings; this is what enters the first layer.", ("batch", axis, "d_model"))
        return self.embed_dropout(x)

    def _positional_formula(self) -> str:
        if self.config.positional == "sinusoidal":
            return "PE(pos, 2i) = sin(pos/10000^(2i/d)), PE(pos, 2i+1) = cos(…)"
        if self.config.positional == "sinusoidal_halves":
            return "PE(pos, i) = sin(pos/10000^(2i/d)), PE(pos, d/2 + i) = cos(…)"
        return "P[pos] (learned)"

    # -- the two halves ------------------------------------------------------------------------
    def encode(self, src: torch.Tensor) -> torch.Tensor:
        """src (B, T_src) token ids → memory (B, T_src, d_model)."""
        return self.encoder(self.embed(src, self.src_embed, "encoder"), padding_mask(src, self.config.pad_id))

    def decode(self, memory: torch.Tensor | None, src: torch.Tensor | None, tgt: torch.Tensor,
               causal: bool = True) -> torch.Tensor:
        """tgt (B, T_tgt) ids → decoder output (B, T_tgt, d_model), attending `memory` of `src`.

        `causal=False` removes the look-ahead mask: an ablation for teaching, never for training.
        """
        src_mask = padding_mask(src, self.config.pad_id) if src is not None else None
        tgt_mask = decoder_mask(tgt, self.config.pad_id, causal)
        return self.decoder(self.embed(tgt, self.tgt_embed, "decoder"), memory, src_mask, tgt_mask)

    def project(self, hidden: torch.Tensor, axis: str = "tgt") -> torch.Tensor:
        """The final linear layer: (B, T, d_model) → logits (B, T, V); softmax recorded for viewers."""
        logits = self.generator(hidden)  # (B, T, V)
        if current_trace() is not None:
            emit(None, "generator.logits", logits, "x Wᵀ + b",
                 "One score per vocabulary entry for the next token.", ("batch", axis, "vocab"))
            emit(None, "generator.probs", logits.float().softmax(-1), "softmax(logits)",
                 "The predicted next-token distribution.", ("batch", axis, "vocab"))
        return logits

    def forward(self, src: torch.Tensor | None, tgt: torch.Tensor | None = None, causal: bool = True) -> torch.Tensor:
        """Teacher-forced logits. encoder_decoder: (B, T_tgt, V_tgt); encoder_only: (B, T_src, V);
        decoder_only: logits over `tgt` (src is ignored and may be None)."""
        kind = self.config.model_kind
        if not kind.has_decoder:
            return self.project(self.encode(src), axis="src")
        if not kind.has_encoder:
            return self.project(self.decode(None, None, tgt, causal))
        memory = self.encode(src)
        return self.project(self.decode(memory, src, tgt, causal))

    def num_parameters(self) -> int:
        """Distinct parameters (tied embeddings counted once)."""
        return sum(p.numel() for p in self.parameters())
