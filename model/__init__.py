"""The paper's Transformer in pure PyTorch (no Qt): model, recorder, decoding, tasks, training."""
from .config import ConfigError, TransformerConfig
from .decoding import BeamResult, DecodeStep, beam_search, decode_steps, greedy_decode, sample_decode
from .positional import get_positional_encoding
from .recorder import Step, Trace, record
from .transformer import Transformer, decoder_mask, padding_mask, subsequent_mask

__version__ = "0.1.0"

__all__ = [
    "TransformerConfig", "ConfigError", "Transformer", "record", "Trace", "Step",
    "greedy_decode", "sample_decode", "beam_search", "decode_steps", "DecodeStep", "BeamResult",
    "get_positional_encoding", "subsequent_mask", "padding_mask", "decoder_mask", "__version__",
]
