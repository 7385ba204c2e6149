"""The paper's Transformer in pure PyTorch (no Qt), and everything the explorer computes with it.

This file is the one public face: `from model import load_checkpoint, compute_frame, …`.
The code lives in layers, each importing only the ones below it:

    nn         the network: config, attention, layers, positional encodings, hook sites
    data       tokenizers, built-in tasks, the facts corpus, a user's files, batching
    inference  a loaded model (ModelBundle), decoding, the teacher-forced pass, evaluation
    train      the Trainer (one process or many), optimiser, presets, BLEU
    interpret  head surgery, logit lens, attribution, importance, comparison, activation patching,
               direct logit attribution, the Frame
    io         checkpoints (safetensors + JSON), resume state, snapshots, pretrained importers
    cli        `transformer-explorer train | average | bleu`

The network's names are imported at once; the rest on first use, so `import model` stays
light (no captum, no tokenizers) for a training script that needs only the network.
"""
from importlib import import_module

from model.inference.decoding import BeamResult, DecodeStep, beam_search, decode_steps, greedy_decode, sample_decode
from model.nn.config import ConfigError, TransformerConfig
from model.nn.hooks import Step, Trace, hooks, patch, record
from model.nn.kinds import AttentionKind
from model.nn.positional import apply_rope, get_positional_encoding, rope_angles
from model.nn.transformer import Transformer, decoder_mask, padding_mask, subsequent_mask

__version__ = "0.1.0"

# name → the module that defines it, imported when the name is first read
_LAZY = {
    "ModelBundle": "model.inference.bundle",
    "load_checkpoint": "model.io.checkpoints", "save_checkpoint": "model.io.checkpoints",
    "bundled_checkpoints": "model.io.checkpoints", "CheckpointError": "model.io.checkpoints",
    "load_pretrained": "model.io.pretrained", "average_checkpoints": "model.io.averaging",
    "load_model": "model.io.open_model",
    "Trainer": "model.train.trainer", "TrainConfig": "model.train.config",
    "intervene": "model.interpret.interventions", "logit_lens": "model.interpret.lens",
    "attribute": "model.interpret.attribution", "head_importance": "model.interpret.importance",
    "compare": "model.interpret.comparison", "head_scores": "model.interpret.head_scores",
    "HeadAtlas": "model.interpret.head_scores",
    "activation_patching": "model.interpret.patching", "direct_logit_attribution": "model.interpret.logit_attribution",
    "compute_frame": "model.interpret.frame", "Frame": "model.interpret.frame",
    "DecodeSettings": "model.interpret.decode_run",
    "get_task": "model.data.tasks",
    "generate": "model.inference.generation", "KVCache": "model.inference.kv_cache",
    "cache_bytes_per_token": "model.inference.kv_cache", "render_chat": "model.inference.chat",
    "load_gguf": "model.io.pretrained.gguf_llama", "requantize_gguf": "model.io.pretrained.gguf_requantize",
}


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'model' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "TransformerConfig", "ConfigError", "Transformer", "record", "Trace", "Step", "hooks", "patch", "AttentionKind",
    "greedy_decode", "sample_decode", "beam_search", "decode_steps", "DecodeStep", "BeamResult",
    "get_positional_encoding", "rope_angles", "apply_rope", "subsequent_mask", "padding_mask", "decoder_mask", "__version__",
    *_LAZY,
]
