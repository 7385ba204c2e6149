"""Checkpoints as a folder: `model.safetensors` (weights, never pickle) + `config.json`.

config.json holds everything needed to rebuild the bundle: the model config, both
tokenizers with their vocabularies, the task and its parameters, training metrics, the
project version and a format version. This module loads checkpoints, finds the bundled ones
and builds untrained models; it is also where every checkpoint name is imported from. The
atomic save lives in `model.io.checkpoint_saving`, the file layout in `model.io.checkpoint_format`.
"""
from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import torch

from model.data.tokenizers import TokenizerError, tokenizer_from_dict
from model.inference.bundle import ModelBundle
from model.io.assets import asset_path
from model.io.checkpoint_format import (
    CHEAP_TO_BUILD,
    CONFIG,
    FORMAT,
    FORMAT_VERSION,
    MAX_CONFIG_BYTES,
    PICKLE_SUFFIXES,
    WEIGHTS,
    CheckpointError,
    CheckpointWarning,
    unique_state,
)
from model.io.checkpoint_saving import check_save_target, recover_interrupted_save, save_checkpoint
from model.nn.config import ConfigError, TransformerConfig
from model.nn.skip_init import without_init
from model.nn.transformer import Transformer


def assets_dir() -> Path:
    """The bundled checkpoints' folder (assets/checkpoints/; see `model.io.assets` for how it is found)."""
    return asset_path("checkpoints")


def bundled_checkpoints() -> dict[str, Path]:
    """name → folder for every checkpoint shipped in assets/checkpoints/."""
    root = assets_dir()
    if not root.is_dir():
        return {}
    return {p.name: p for p in sorted(root.iterdir()) if p.is_dir() and (p / CONFIG).is_file()}


def random_bundle(task_name: str = "reverse", **config_overrides) -> ModelBundle:
    """An untrained small model for a built-in task (what the GUI shows before any training)."""
    from model.data.tasks import get_task

    task = get_task(task_name)
    src_tok, tgt_tok = task.build_tokenizers()
    params = dict(d_model=64, n_heads=4, n_encoder_layers=2, n_decoder_layers=2, d_ff=256, max_len=64, dropout=0.1)
    params.update(config_overrides)
    config = TransformerConfig(src_vocab_size=len(src_tok), tgt_vocab_size=len(tgt_tok), **params)
    return ModelBundle(Transformer(config), src_tok, tgt_tok, task.to_dict(), {}, name=f"{task_name} (untrained)")


UNTRAINED = "untrained"  # a compare reference: the model A itself, before training


def untrained_like(bundle: ModelBundle, seed: int = 0) -> ModelBundle:
    """`bundle`'s architecture and tokenizers with freshly initialised weights (seeded, and the
    caller's random state left as it was): what its training started from, in kind — the B of
    "what did training change?" in the compare panel, with no second checkpoint to find."""
    # Only the CPU generator (the model is built on the CPU): `torch.manual_seed` would also
    # reseed every GPU's, which fork_rng(devices=[]) does not put back. (A training run on another
    # thread draws from the same CPU generator meanwhile: a few of its dropout draws may come
    # from this seed for the milliseconds the build takes.)
    with torch.random.fork_rng(devices=[]):
        torch.random.default_generator.manual_seed(seed)
        model = Transformer(bundle.config)
    model.to(bundle.device).eval()
    return ModelBundle(model, bundle.src_tokenizer, bundle.tgt_tokenizer, dict(bundle.task), {},
                       name=f"{bundle.name} (untrained)")


# -- loading ------------------------------------------------------------------------------------
def _note(notes: list[str] | None, text: str, stacklevel: int = 3) -> None:
    """Warn (for scripts and tests) and keep the text (for the GUI, which shows a bundle's notes:
    `warnings.catch_warnings` is process-wide, so a loading thread cannot use it)."""
    warnings.warn(text, CheckpointWarning, stacklevel=stacklevel + 1)
    if notes is not None:
        notes.append(text)


def _locate(path: Path, notes: list[str] | None = None) -> Path:
    """The checkpoint folder for `path` (a folder, or its config.json / model.safetensors)."""
    try:
        return _locate_folder(path, notes)
    except OSError as exc:  # an unreadable folder: say which, not a bare PermissionError
        raise CheckpointError(f"{exc.filename or path}: cannot read it ({exc.strerror or exc})") from None


def _locate_folder(path: Path, notes: list[str] | None = None) -> Path:
    if not path.exists() and recover_interrupted_save(path):
        _note(notes, f"{path}: restored the previous checkpoint, which a save that was killed midway had "
                     "moved aside", stacklevel=4)
    if not path.exists():
        raise CheckpointError(f"{path}: no such file or folder")
    if path.is_file():
        if path.suffix.lower() in PICKLE_SUFFIXES:
            raise CheckpointError(f"{path}: a PyTorch pickle file; it is never loaded, because unpickling can run "
                                  "arbitrary code. Checkpoints are folders with model.safetensors + config.json.")
        if path.name in (WEIGHTS, CONFIG):
            return path.parent
        raise CheckpointError(f"{path}: not a checkpoint (expected a folder with {WEIGHTS} and {CONFIG})")
    if not (path / CONFIG).is_file():
        pickles = sorted(p.name for p in path.iterdir() if p.suffix.lower() in PICKLE_SUFFIXES)
        hint = f"; it holds PyTorch pickle files ({', '.join(pickles[:3])}), which are never loaded" if pickles else ""
        raise CheckpointError(f"{path}: not a checkpoint folder, {CONFIG} is missing{hint}")
    return path


def _read_bytes(file: Path, limit: int | None = None) -> bytes:
    """The file's bytes; OSError (permission, I/O) is left to the caller to name the file."""
    with open(file, "rb") as f:
        if limit is not None and os.fstat(f.fileno()).st_size > limit:
            raise CheckpointError(f"{file}: {os.fstat(f.fileno()).st_size:,} bytes is too large for a config file")
        return f.read()


def read_config(folder: str | Path) -> dict:
    """Parse and check config.json (format, version); errors name the file."""
    folder = _locate(Path(folder))
    cfg_path = folder / CONFIG
    try:
        data = json.loads(_read_bytes(cfg_path, MAX_CONFIG_BYTES).decode("utf-8"))
    except UnicodeDecodeError:
        raise CheckpointError(f"{cfg_path}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise CheckpointError(f"{cfg_path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except RecursionError:
        raise CheckpointError(f"{cfg_path}: nested too deeply to be a checkpoint config") from None
    except OSError as exc:
        raise CheckpointError(f"{cfg_path}: cannot read it ({exc.strerror or exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CheckpointError(f"{cfg_path}: not a Transformer Explorer checkpoint config (no \"format\": \"{FORMAT}\")")
    version = data.get("format_version")
    if not isinstance(version, int):
        raise CheckpointError(f"{cfg_path}: format_version is missing or not an integer")
    if version > FORMAT_VERSION:
        raise CheckpointError(f"{cfg_path}: written by a newer version (checkpoint format {version}, project "
                              f"{data.get('project_version', '?')}); this version reads format {FORMAT_VERSION} "
                              "at most — upgrade transformer-explorer")
    for key in ("model", "src_tokenizer", "tgt_tokenizer"):
        if key not in data:
            raise CheckpointError(f"{cfg_path}: the \"{key}\" entry is missing")
    return data


def load_checkpoint(path: str | Path, device: str | torch.device = "cpu") -> ModelBundle:
    """Rebuild the bundle saved in `path` (weights mapped to `device`, CPU by default).

    A llama-architecture .gguf file is opened by `model.io.pretrained.load_pretrained` (on the CPU)."""
    from safetensors import SafetensorError
    from safetensors.torch import load as load_bytes

    if Path(path).suffix.lower() == ".gguf" and Path(path).expanduser().is_file():
        from model.io.pretrained import load_pretrained  # lazy: needs `gguf` and `tokenizers`
        return load_pretrained(path)

    notes: list[str] = []
    folder = _locate(Path(path), notes)
    data = read_config(folder)
    cfg_path, w_path = folder / CONFIG, folder / WEIGHTS
    try:
        config = TransformerConfig.from_dict(data["model"])
        src_tok = _tokenizer(data["src_tokenizer"])
        tgt_tok = _tokenizer(data["tgt_tokenizer"])
    except (ConfigError, TokenizerError) as exc:
        raise CheckpointError(f"{cfg_path}: {exc}") from None
    except ValueError as exc:  # PretrainedError: the pretrained tokenizer's folder is gone or unreadable
        raise CheckpointError(f"{cfg_path}: the pretrained tokenizer could not be rebuilt: {exc}") from None
    for side, tok, size in (("source", src_tok, config.src_vocab_size), ("target", tgt_tok, config.tgt_vocab_size)):
        if len(tok) != size:
            raise CheckpointError(f"{cfg_path}: the {side} vocabulary has {len(tok)} entries but the model config "
                                  f"says {size}")
    if not w_path.is_file():
        raise CheckpointError(f"{w_path}: missing (the weights of this checkpoint)")
    try:
        raw = _read_bytes(w_path)
    except OSError as exc:
        raise CheckpointError(f"{w_path}: cannot read it ({exc.strerror or exc})") from None
    try:
        tensors = load_bytes(raw)
    except (SafetensorError, ValueError, RuntimeError) as exc:
        raise CheckpointError(f"{w_path}: not a readable safetensors file, truncated or corrupt ({exc})") from None
    del raw
    aliases = data.get("tied_weights") if isinstance(data.get("tied_weights"), dict) else {}
    _check_shapes(config, tensors, aliases, w_path)  # on the meta device: a wrong config allocates nothing
    model = Transformer(config)
    _load_weights(model, tensors, w_path)
    _warn_if_not_finite(tensors, w_path, notes)
    task = data.get("task") if isinstance(data.get("task"), dict) else {}
    metrics = data.get("metrics") if isinstance(data.get("metrics"), dict) else {}
    bundle = ModelBundle(model, src_tok, tgt_tok, task, metrics, name=str(data.get("name") or folder.name),
                         path=str(folder), load_notes=tuple(notes))
    try:
        from model.nn.devices import resolve_device

        model.to(resolve_device(device))
    except ValueError as exc:
        raise CheckpointError(str(exc)) from None
    model.eval()
    return bundle


def _check_shapes(config: TransformerConfig, tensors: dict[str, torch.Tensor], aliases: dict, w_path: Path) -> None:
    """Compare the weights' names and shapes with the model config.json describes, built on the
    meta device (no memory) before the real model is allocated — or, for a model small enough
    that building it twice costs less than the meta device's first use, on the CPU. Tied tensors (`aliases`) are
    stored once, under another name."""
    if config.parameter_estimate() <= CHEAP_TO_BUILD:  # (the meta device's first use costs ~1 s)
        expected = {name: tuple(t.shape) for name, t in Transformer(config).state_dict().items()}
    else:
        with torch.device("meta"), without_init():
            expected = {name: tuple(t.shape) for name, t in Transformer(config).state_dict().items()}
    missing = sorted(set(expected) - set(tensors) - set(aliases))
    unexpected = sorted(set(tensors) - set(expected))
    _refuse_other_names(w_path, missing, unexpected)
    for name, shape in expected.items():  # in the model's order, so the first layer's mismatch is named
        if name in tensors and tuple(tensors[name].shape) != shape:
            raise CheckpointError(f"{w_path}: tensor {name!r} has shape {tuple(tensors[name].shape)} but config.json "
                                  f"describes {shape}; the weights and the config do not belong together")


def _warn_if_not_finite(tensors: dict[str, torch.Tensor], w_path: Path, notes: list[str] | None = None) -> None:
    bad = [name for name, t in tensors.items() if t.is_floating_point() and not bool(torch.isfinite(t).all())]
    if bad:
        _note(notes, f"{w_path}: {len(bad)} of {len(tensors)} weight tensors hold NaN or infinite values "
                     f"({', '.join(bad[:3])}{' …' if len(bad) > 3 else ''}); the model's outputs are meaningless")


def _refuse_other_names(w_path: Path, missing: list[str], unexpected: list[str]) -> None:
    """CheckpointError naming (the first few) tensors the weights lack or have beyond the model's."""
    if missing or unexpected:
        parts = []
        if missing:
            parts.append(f"missing tensors {missing[:4]}{' …' if len(missing) > 4 else ''}")
        if unexpected:
            parts.append(f"unexpected tensors {unexpected[:4]}{' …' if len(unexpected) > 4 else ''}")
        raise CheckpointError(f"{w_path}: does not match the model in config.json: {'; '.join(parts)}")


def _tokenizer(data):
    """Our own tokenizers, or a pretrained model's (it names the Hugging Face folder its files are in)."""
    if isinstance(data, dict) and data.get("kind") == "pretrained":
        from model.io.pretrained import tokenizer_from_dict as pretrained_tokenizer  # lazy: needs `tokenizers`
        return pretrained_tokenizer(data)
    if isinstance(data, dict) and data.get("kind") == "bpe":  # a BPE vocabulary trained on the user's corpus
        from model.data.bpe import BPETokenizer  # lazy: needs `tokenizers`
        return BPETokenizer.from_dict(data)
    return tokenizer_from_dict(data)


def _load_weights(model: Transformer, tensors: dict[str, torch.Tensor], w_path: Path) -> None:
    """Copy tensors in after checking names and shapes, so a mismatch is a clear message."""
    expected, aliases = unique_state(model)
    missing = sorted(set(expected) - set(tensors))
    unexpected = sorted(set(tensors) - set(expected))
    _refuse_other_names(w_path, missing, unexpected)
    for name, want in expected.items():
        got = tensors[name]
        if tuple(got.shape) != tuple(want.shape):
            raise CheckpointError(f"{w_path}: tensor {name!r} has shape {tuple(got.shape)} but config.json "
                                  f"describes {tuple(want.shape)}; the weights and the config do not belong together")
        if got.dtype != want.dtype and not got.is_floating_point():
            raise CheckpointError(f"{w_path}: tensor {name!r} has dtype {got.dtype}, expected {want.dtype}")
    model.load_state_dict({**tensors, **{a: tensors[n] for a, n in aliases.items()}}, strict=True)


__all__ = ["save_checkpoint", "load_checkpoint", "bundled_checkpoints", "random_bundle", "untrained_like", "UNTRAINED",
           "read_config", "recover_interrupted_save", "check_save_target", "CheckpointError", "CheckpointWarning",
           "FORMAT_VERSION"]
