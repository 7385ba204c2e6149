"""The Transformer of Figure 1, with the encoder-only and decoder-only variants from the same layers."""
from __future__ import annotations

import torch
from torch import nn

from model.nn.config import TransformerConfig
from model.nn.dropout import Dropout
from model.nn.hooks import any_active, site, wants
from model.nn.layers import Decoder, Encoder
from model.nn.positional import (
    LearnedPositionalEmbedding,
    RotaryPositions,
    SinusoidalPositionalEncoding,
    TokenEmbedding,
)
from model.nn.skip_init import without_init


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
    steps = tgt.size(1)
    return mask & subsequent_mask(steps, tgt.device).unsqueeze(1) if causal else mask.expand(-1, -1, steps, -1)


class Transformer(nn.Module):
    """Figure 1: embeddings + positions → N encoder layers → N decoder layers → linear → softmax.

    `forward(src, tgt)` returns logits (B, T_tgt, V_tgt) for teacher-forced `tgt` (which
    starts with <bos>); `encode` and `decode` are the two halves, as in the paper.
    """

    STEP_GROUP = "model"

    def __init__(self, config: TransformerConfig):
        super().__init__()
        config.validate()
        self.config = cfg = config
        self.positional = self._positional(cfg)
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
        self.generator = nn.Linear(cfg.d_model, out_vocab, bias=cfg.bias)
        self._init_weights()
        self._tie()

    @staticmethod
    def _positional(cfg: TransformerConfig) -> nn.Module:
        if cfg.positional == "sinusoidal":
            return SinusoidalPositionalEncoding(cfg.d_model, cfg.max_len)
        if cfg.positional == "sinusoidal_halves":
            return SinusoidalPositionalEncoding(cfg.d_model, cfg.max_len, layout="halves")
        if cfg.positional == "rope":  # nothing added to the embeddings; attention rotates q and k
            return RotaryPositions(cfg.d_k, cfg.max_len, cfg.rope_base)
        return LearnedPositionalEmbedding(cfg.d_model, cfg.max_len)

    def _tie(self) -> None:
        if self.config.share_embeddings:
            # ... and the pre-softmax linear transformation (Section 3.4).
            table = self.tgt_embed if self.config.model_kind.has_decoder else self.src_embed
            self.generator.weight = table.lut.weight

    @classmethod
    def empty(cls, config: TransformerConfig) -> Transformer:
        """The model with uninitialised weights, for a loader that overwrites every weight: it
        skips initialising ~10⁸ numbers for nothing. The fixed positional tables are computed as
        usual; tied weights stay tied."""
        with without_init():
            return cls(config)

    def _init_weights(self) -> None:
        for name, p in self.named_parameters():
            if p.dim() > 1 and "lut" not in name and "positional" not in name:
                nn.init.xavier_uniform_(p)
            elif name.endswith(".bias"):
                nn.init.zeros_(p)

    # -- Figure 1, bottom: inputs ------------------------------------------------------------
    def embed(self, ids: torch.Tensor, table: TokenEmbedding, stack: str, start: int = 0) -> torch.Tensor:
        """Token embedding × √d_model + positional encoding, then dropout (Sections 3.4, 3.5).

        BERT-like configs skip the √d_model (scale_embeddings), add the type-0 token-type
        vector to the source (type_vocab_size) and normalise the sum (embedding_norm).
        Hook sites: `<stack>.embedding.tokens`, `.embedding.scaled`, `<stack>.positional`,
        `.embedding.token_type`, `<stack>.input`, `<stack>.input_norm`. `start`: the position of
        ids[:, 0] (a decoder continuing from a key/value cache). Rotary positions add nothing here.
        """
        cfg = self.config
        scale = table.scale if cfg.scale_embeddings else 1.0
        tokens = site(self, f"{stack}.embedding.tokens", table(ids))  # (B, T, d_model)
        scaled = site(self, f"{stack}.embedding.scaled", tokens * scale)
        if isinstance(self.positional, RotaryPositions):
            x = scaled
        else:
            x = scaled + site(self, f"{stack}.positional", self.positional(start + ids.size(1))[start:])  # (T, d)
        if self.token_type is not None and stack == "encoder":
            x = x + site(self, f"{stack}.embedding.token_type", self.token_type(torch.zeros_like(ids)))
        x = site(self, f"{stack}.input", x)
        if self.embed_norm is not None:
            x = site(self, f"{stack}.input_norm", self.embed_norm[stack](x))
        return self.embed_dropout(x)

    # -- the two halves ------------------------------------------------------------------------
    def rotary(self, start: int, length: int, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor] | None:
        """(cos, sin) of positions start … start + length − 1 for RoPE attention; None otherwise."""
        if not isinstance(self.positional, RotaryPositions):
            return None
        return self.positional.cos_sin(start, length, dtype)

    def encode(self, src: torch.Tensor) -> torch.Tensor:
        """src (B, T_src) token ids → memory (B, T_src, d_model)."""
        x = self.embed(src, self.src_embed, "encoder")
        return self.encoder(x, padding_mask(src, self.config.pad_id), self.rotary(0, src.size(1), x.dtype))

    def decode(self, memory: torch.Tensor | None, src: torch.Tensor | None, tgt: torch.Tensor,
               causal: bool = True, cache=None) -> torch.Tensor:
        """tgt (B, T_tgt) ids → decoder output (B, T_tgt, d_model), attending `memory` of `src`.

        `causal=False` removes the look-ahead mask: an ablation for teaching, never for training.
        `cache` (`model.inference.kv_cache.KVCache`): `tgt` holds only the new tokens; their keys
        and values are appended to the cache and they attend every cached position as well.
        """
        src_mask = padding_mask(src, self.config.pad_id) if src is not None else None
        start = 0
        if cache is None:
            tgt_mask = decoder_mask(tgt, self.config.pad_id, causal)
        else:
            start = cache.length
            seen = tgt if cache.ids is None else torch.cat([cache.ids, tgt], dim=1)  # (B, start + T_tgt)
            if tgt.size(1) == 1 and not any_active() and not (seen[:, 1:] == self.config.pad_id).any():
                tgt_mask = None  # one new token and no padding: it may attend every key, nothing to mask
            else:
                tgt_mask = decoder_mask(seen, self.config.pad_id, causal)[:, :, start:]  # (B, 1, T_tgt, start + T_tgt)
            cache.ids = seen
        x = self.embed(tgt, self.tgt_embed, "decoder", start)
        return self.decoder(x, memory, src_mask, tgt_mask, self.rotary(start, tgt.size(1), x.dtype), cache)

    def project(self, hidden: torch.Tensor) -> torch.Tensor:
        """The final linear layer: (B, T, d_model) → logits (B, T, V). Hook sites
        `generator.logits` and `generator.probs` (the softmax, computed only for a hook)."""
        logits = site(self, "generator.logits", self.generator(hidden))  # (B, T, V)
        if wants(self, "generator.probs"):
            site(self, "generator.probs", logits.float().softmax(-1))
        return logits

    def forward(self, src: torch.Tensor | None, tgt: torch.Tensor | None = None, causal: bool = True) -> torch.Tensor:
        """Teacher-forced logits. encoder_decoder: (B, T_tgt, V_tgt); encoder_only: (B, T_src, V);
        decoder_only: logits over `tgt` (src is ignored and may be None)."""
        kind = self.config.model_kind
        if not kind.has_decoder:
            return self.project(self.encode(src))
        if not kind.has_encoder:
            return self.project(self.decode(None, None, tgt, causal))
        memory = self.encode(src)
        return self.project(self.decode(memory, src, tgt, causal))

    def num_parameters(self) -> int:
        """Distinct parameters (tied embeddings counted once)."""
        return sum(p.numel() for p in self.parameters())
