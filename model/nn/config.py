"""`TransformerConfig`: every size of the model in one dataclass, passed whole (nanoGPT style)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from model.nn.kinds import MODEL_KINDS, ModelKind

KINDS = tuple(MODEL_KINDS)  # "encoder_decoder", "encoder_only", "decoder_only"
# halves: Marian's layout; rope: rotary positions applied to q and k inside attention (Llama)
POSITIONAL = ("sinusoidal", "learned", "sinusoidal_halves", "rope")
# Eq. 2 uses ReLU; BERT uses GELU, Marian (opus-mt) swish; Llama a gated SwiGLU (gate/up/down)
ACTIVATIONS = ("relu", "gelu", "swish", "swiglu")
NORMS = ("layer", "rms")  # the paper's LayerNorm; Llama's RMSNorm (no mean, no bias)
# Upper bounds, so a typo or a hostile config.json is refused with the field's name instead of
# hanging in a billion-layer loop or failing in the allocator. Table 3's big model and every
# pretrained model this project loads are far below them.
MAX_SIZES = {"src_vocab_size": 2**24, "tgt_vocab_size": 2**24, "d_model": 2**16, "n_heads": 2**10,
             "d_ff": 2**18, "max_len": 2**20, "n_encoder_layers": 2**10, "n_decoder_layers": 2**10,
             "type_vocab_size": 2**16}
MAX_PARAMETERS = 2_000_000_000  # ~8 GB of float32 weights
MAX_POSITION_TABLE = 2**27  # max_len × d_model entries of the positional table (512 MB)


class ConfigError(ValueError):
    """A configuration that cannot describe a working Transformer."""


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass
class TransformerConfig:
    """Sizes of the paper's model (Table 3 names: N layers, d_model, d_ff, h, P_drop)."""

    src_vocab_size: int
    tgt_vocab_size: int
    d_model: int = 512
    n_heads: int = 8
    d_ff: int = 2048  # 0: no feed-forward sublayer (an attention-only model, as in Olsson et al. 2022)
    n_encoder_layers: int = 6
    n_decoder_layers: int = 6
    dropout: float = 0.1
    max_len: int = 512
    share_embeddings: bool = False
    norm_first: bool = False  # False = post-LN, as in the paper: LayerNorm(x + Sublayer(x))
    positional: str = "sinusoidal"  # Table 3 row (E) compares learned embeddings
    pad_id: int = 0
    kind: str = "encoder_decoder"  # later variants: "encoder_only" (BERT-like), "decoder_only" (GPT-like)
    layer_norm_eps: float = 1e-5
    # Later models built from the same parts (model.io.pretrained loads them); the defaults are the paper's.
    activation: str = "relu"  # the FFN's non-linearity (Eq. 2: max(0, ·))
    scale_embeddings: bool = True  # Section 3.4's × √d_model; BERT does not scale
    embedding_norm: bool = False  # BERT: LayerNorm over embedding + position (+ token type)
    type_vocab_size: int = 0  # BERT's token-type ("segment") table; 0 = none. Type 0 is always used.
    # False: the model has no trained output layer (a sentence encoder such as all-MiniLM-L6-v2,
    # loaded without any language-model head). Its `generator` is then only the tied embedding
    # matrix with a zero bias, kept so the module tree is the same; no view may read it as a prediction.
    output_layer: bool = True
    # Llama-family options (SmolLM2); the defaults keep the paper's model.
    norm: str = "layer"  # "layer" (LayerNorm) | "rms" (RMSNorm)
    rope_base: float = 10000.0  # θ of rotary positions (positional="rope")
    n_kv_heads: int = 0  # key/value heads; 0 = n_heads; fewer = grouped-query attention (GQA)
    bias: bool = True  # False: every projection (attention, FFN, output layer) without bias

    def __post_init__(self) -> None:
        self.validate()

    @property
    def d_k(self) -> int:
        """Per-head width, d_k = d_v = d_model / h (Section 3.2.2)."""
        return self.d_model // self.n_heads

    @property
    def kv_heads(self) -> int:
        """How many key/value heads attention keeps: n_heads (the paper) or fewer, each shared by
        n_heads / kv_heads query heads (grouped-query attention)."""
        return self.n_kv_heads or self.n_heads

    @property
    def model_kind(self) -> ModelKind:
        """The kind as one object (stacks, input fields, axis names): `model.nn.kinds`."""
        return MODEL_KINDS[self.kind]

    @property
    def has_encoder(self) -> bool:
        return self.model_kind.has_encoder

    @property
    def has_decoder(self) -> bool:
        return self.model_kind.has_decoder

    def validate(self) -> None:
        """Raise `ConfigError` naming the field when the sizes cannot work together."""
        for name in ("src_vocab_size", "tgt_vocab_size", "d_model", "n_heads", "max_len"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ConfigError(f"{name} must be a positive integer, got {value!r}")
        for name in ("d_ff", "n_encoder_layers", "n_decoder_layers"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ConfigError(f"{name} must be a non-negative integer, got {value!r}")
        for name, bound in MAX_SIZES.items():
            if getattr(self, name) > bound:
                raise ConfigError(f"{name} is {getattr(self, name):,}; at most {bound:,} is supported")
        rope = self.positional == "rope"  # rotary positions keep one angle per pair of a head's dimensions
        width, name = (self.d_model // self.n_heads, "d_k") if rope else (self.d_model, "d_model")
        if self.max_len * width > MAX_POSITION_TABLE:
            raise ConfigError(f"max_len {self.max_len:,} × {name} {width:,} makes a positional table of "
                              f"{self.max_len * width:,} entries; at most {MAX_POSITION_TABLE:,}: lower max_len")
        if self.d_model % self.n_heads != 0:
            raise ConfigError(
                f"d_model ({self.d_model}) must be divisible by n_heads ({self.n_heads}) "
                "so each head gets d_k = d_model / h dimensions"
            )
        if self.positional in ("sinusoidal", "sinusoidal_halves") and self.d_model % 2 != 0:
            raise ConfigError(f"sinusoidal positional encoding needs an even d_model, got {self.d_model}")
        kv = self.n_kv_heads
        if not isinstance(kv, int) or isinstance(kv, bool) or kv < 0:
            raise ConfigError(f"n_kv_heads must be a non-negative integer (0 = n_heads), got {kv!r}")
        if self.n_heads % self.kv_heads:
            raise ConfigError(f"n_heads ({self.n_heads}) must be divisible by n_kv_heads ({kv}) so each "
                              "key/value head serves the same number of query heads")
        if self.positional == "rope" and self.d_k % 2:
            raise ConfigError(f"rotary positions rotate pairs of dimensions: d_k ({self.d_k}) must be even")
        if not _is_number(self.rope_base) or not self.rope_base > 1:
            raise ConfigError(f"rope_base must be a number above 1, got {self.rope_base!r}")
        if self.norm not in NORMS:
            raise ConfigError(f"norm must be one of {NORMS}, got {self.norm!r}")
        if not _is_number(self.dropout) or not 0.0 <= self.dropout < 1.0:
            raise ConfigError(f"dropout must be a number in [0, 1), got {self.dropout!r}")
        if not _is_number(self.layer_norm_eps) or not self.layer_norm_eps > 0:
            raise ConfigError(f"layer_norm_eps must be a positive number, got {self.layer_norm_eps!r}")
        # a checkpoint's "no" must not read as True
        for name in ("share_embeddings", "norm_first", "scale_embeddings", "embedding_norm", "output_layer",
                     "bias"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"{name} must be true or false, got {getattr(self, name)!r}")
        if not isinstance(self.pad_id, int) or isinstance(self.pad_id, bool):
            raise ConfigError(f"pad_id must be an integer, got {self.pad_id!r}")
        if self.activation not in ACTIVATIONS:
            raise ConfigError(f"activation must be one of {ACTIVATIONS}, got {self.activation!r}")
        types = self.type_vocab_size
        if not isinstance(types, int) or isinstance(types, bool) or types < 0:
            raise ConfigError(f"type_vocab_size must be a non-negative integer, got {self.type_vocab_size!r}")
        if self.positional not in POSITIONAL:
            raise ConfigError(f"positional must be one of {POSITIONAL}, got {self.positional!r}")
        if self.kind not in KINDS:
            raise ConfigError(f"kind must be one of {KINDS}, got {self.kind!r}")
        if self.has_encoder and self.n_encoder_layers < 1:
            raise ConfigError(f"a {self.kind} model needs n_encoder_layers >= 1")
        if self.has_decoder and self.n_decoder_layers < 1:
            raise ConfigError(f"a {self.kind} model needs n_decoder_layers >= 1")
        if self.share_embeddings and self.model_kind.has_cross_attention and self.src_vocab_size != self.tgt_vocab_size:
            raise ConfigError(
                "share_embeddings needs one shared vocabulary: "
                f"src_vocab_size {self.src_vocab_size} != tgt_vocab_size {self.tgt_vocab_size}"
            )
        if not 0 <= self.pad_id < min(self.src_vocab_size, self.tgt_vocab_size):
            raise ConfigError(f"pad_id {self.pad_id} is outside the vocabulary")
        if self.parameter_estimate() > MAX_PARAMETERS:
            raise ConfigError(f"these sizes make a model of about {self.parameter_estimate():,} parameters "
                              f"(d_model {self.d_model}, d_ff {self.d_ff}, layers {self.n_encoder_layers}+"
                              f"{self.n_decoder_layers}); at most {MAX_PARAMETERS:,} are supported")

    def parameter_estimate(self) -> int:
        """Roughly how many weights these sizes make (embeddings, attention, FFN), without building them."""
        d, ff = self.d_model, self.d_ff
        kind = self.model_kind
        src = self.src_vocab_size if kind.has_encoder else 0
        tgt = self.tgt_vocab_size if kind.has_decoder else 0
        tgt_table = 0 if self.share_embeddings and kind.has_cross_attention else tgt  # Section 3.4: one matrix ...
        embed = (src + tgt_table + self.type_vocab_size) * d
        if self.positional == "learned":
            embed += self.max_len * d
        kv = 2 * d * self.kv_heads * self.d_k  # W^K and W^V: one d_k column block per key/value head
        attn = 2 * d * d + kv  # W^Q, W^O, W^K, W^V
        ffn = (3 if self.activation == "swiglu" else 2) * d * ff
        encoder = self.n_encoder_layers * (attn + ffn) if kind.has_encoder else 0
        decoder = self.n_decoder_layers * (attn * (2 if kind.has_cross_attention else 1) + ffn) if kind.has_decoder else 0
        output = 0 if self.share_embeddings else (tgt or self.src_vocab_size) * d  # ... and the output layer
        return embed + encoder + decoder + output

    # -- the paper's Table 3 -------------------------------------------------------------
    @classmethod
    def base(cls, src_vocab_size: int, tgt_vocab_size: int, **overrides) -> TransformerConfig:
        """Table 3 'base': N=6, d_model=512, d_ff=2048, h=8, P_drop=0.1, shared embeddings."""
        params = dict(d_model=512, n_heads=8, d_ff=2048, n_encoder_layers=6, n_decoder_layers=6,
                      dropout=0.1, share_embeddings=src_vocab_size == tgt_vocab_size)
        params.update(overrides)
        return cls(src_vocab_size=src_vocab_size, tgt_vocab_size=tgt_vocab_size, **params)

    @classmethod
    def big(cls, src_vocab_size: int, tgt_vocab_size: int, **overrides) -> TransformerConfig:
        """Table 3 'big': N=6, d_model=1024, d_ff=4096, h=16, P_drop=0.3."""
        params = dict(d_model=1024, n_heads=16, d_ff=4096, dropout=0.3)
        params.update(overrides)
        return cls.base(src_vocab_size, tgt_vocab_size, **params)

    # -- (de)serialisation for checkpoints -----------------------------------------------
    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> TransformerConfig:
        """Build from a checkpoint's dict; unknown keys are an error that names them."""
        if not isinstance(data, dict):
            raise ConfigError(f"model config must be a JSON object, got {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"unknown model config keys: {', '.join(unknown)}")
        try:
            return cls(**data)
        except TypeError as exc:  # a missing required field
            raise ConfigError(f"incomplete model config: {exc}") from None
