"""BERT-family encoders (Devlin et al. 2019) in our encoder-only Transformer.

BERT is the paper's encoder with four changes, each a config field here: learned positions
(`positional="learned"`), no × √d_model, a token-type embedding, and a LayerNorm over the
summed embeddings; GELU in the feed-forward layer. The layers themselves are the paper's
post-LN encoder layers, so every weight has a place (transformers' BertModel names → ours):

    embeddings.word_embeddings           → src_embed.lut
    embeddings.position_embeddings       → positional
    embeddings.token_type_embeddings     → token_type
    embeddings.LayerNorm                 → embed_norm.encoder
    encoder.layer.i.attention.self.query/key/value → encoder.layers.i.self_attn.w_q/w_k/w_v
    encoder.layer.i.attention.output.dense         → encoder.layers.i.self_attn.w_o
    encoder.layer.i.attention.output.LayerNorm     → encoder.layers.i.add_norm1.norm
    encoder.layer.i.intermediate.dense / output.dense → encoder.layers.i.ffn.w_1 / w_2
    encoder.layer.i.output.LayerNorm               → encoder.layers.i.add_norm2.norm

Not used: the pooler and any pre-training heads (cls.*), so the model has no output layer
(`output_layer=False`): our generator is only the word embeddings with a zero bias, kept so
the module tree is the usual one, and no view reads it as a prediction. What a sentence
encoder such as all-MiniLM-L6-v2 is for — its sentence embedding — is `model.inference.embedding`.
"""
from __future__ import annotations

from pathlib import Path

import torch

from model.io.pretrained.files import PretrainedError, Weights, load_into, read_json
from model.io.pretrained.hf_tokenizer import HFTokenizer, read_tokenizer_json, read_wordpiece_vocab, special_tokens
from model.nn.config import TransformerConfig
from model.nn.kinds import ENCODER_ONLY
from model.nn.transformer import Transformer

ACTIVATIONS = {"gelu": "gelu", "relu": "relu", "swish": "swish", "silu": "swish"}


def bert_config(hf: dict, file: Path) -> TransformerConfig:
    """config.json of a BertModel → our `TransformerConfig`, or a `PretrainedError` naming what
    this explorer's Transformer cannot do."""
    def unsupported(what: str) -> PretrainedError:
        return PretrainedError(f"{file}: {what} is not supported (this explorer loads plain BERT encoders)")

    if hf.get("position_embedding_type", "absolute") != "absolute":
        raise unsupported(f"position_embedding_type={hf['position_embedding_type']!r}")
    act = hf.get("hidden_act", "gelu")
    if act not in ACTIVATIONS:
        raise unsupported(f"hidden_act={act!r} (known: {', '.join(ACTIVATIONS)})")
    if hf.get("is_decoder") or hf.get("add_cross_attention"):
        raise unsupported("a BERT decoder (is_decoder / add_cross_attention)")
    try:
        vocab = int(hf["vocab_size"])
        return TransformerConfig(
            src_vocab_size=vocab, tgt_vocab_size=vocab, d_model=int(hf["hidden_size"]),
            n_heads=int(hf["num_attention_heads"]), d_ff=int(hf["intermediate_size"]),
            n_encoder_layers=int(hf["num_hidden_layers"]), n_decoder_layers=0,
            dropout=float(hf.get("hidden_dropout_prob", 0.1)), max_len=int(hf.get("max_position_embeddings", 512)),
            share_embeddings=True, norm_first=False, positional="learned", pad_id=int(hf.get("pad_token_id") or 0),
            kind=ENCODER_ONLY.name, layer_norm_eps=float(hf.get("layer_norm_eps", 1e-12)), activation=ACTIVATIONS[act],
            scale_embeddings=False, embedding_norm=True, type_vocab_size=int(hf.get("type_vocab_size", 2)),
            output_layer=False,  # the pre-training heads (cls.*) are not loaded: no LM head
        )
    except KeyError as exc:
        raise PretrainedError(f"{file}: missing {exc.args[0]!r}") from None
    except (TypeError, ValueError) as exc:
        raise PretrainedError(f"{file}: {exc}") from None


def _linear(state: dict, ours: str, weights: Weights, theirs: str) -> None:
    state[f"{ours}.weight"] = weights.take(f"{theirs}.weight")
    state[f"{ours}.bias"] = weights.take(f"{theirs}.bias")


def load_bert_weights(model: Transformer, weights: Weights) -> list[str]:
    """Copy a BertModel checkpoint into `model`; returns notes on what was left out."""
    cfg = model.config
    # BertForMaskedLM & co. keep the encoder under "bert."; BertModel has no prefix.
    if any(k.startswith("bert.") for k in weights.tensors):
        weights.tensors = {k.removeprefix("bert."): v for k, v in weights.tensors.items()}
    notes = []
    if weights.ignore("pooler."):
        notes.append("BERT's pooler (a [CLS] classifier input) is not part of the explorer's model.")
    if weights.ignore("cls."):
        notes.append("The pre-training heads (cls.*) are not loaded; the generator is tied to the embeddings.")
    weights.ignore("embeddings.position_ids")  # a constant arange, not a weight
    word = weights.take("embeddings.word_embeddings.weight")
    state = {
        "src_embed.lut.weight": word,
        "generator.weight": word,
        "generator.bias": torch.zeros(word.size(0)),
        "positional.weight": weights.take("embeddings.position_embeddings.weight"),
        "token_type.weight": weights.take("embeddings.token_type_embeddings.weight"),
    }
    _norm(state, "embed_norm.encoder", weights, "embeddings.LayerNorm")
    for i in range(cfg.n_encoder_layers):
        ours, theirs = f"encoder.layers.{i}", f"encoder.layer.{i}"
        for w, name in (("w_q", "query"), ("w_k", "key"), ("w_v", "value")):
            _linear(state, f"{ours}.self_attn.{w}", weights, f"{theirs}.attention.self.{name}")
        _linear(state, f"{ours}.self_attn.w_o", weights, f"{theirs}.attention.output.dense")
        _norm(state, f"{ours}.add_norm1.norm", weights, f"{theirs}.attention.output.LayerNorm")
        _linear(state, f"{ours}.ffn.w_1", weights, f"{theirs}.intermediate.dense")
        _linear(state, f"{ours}.ffn.w_2", weights, f"{theirs}.output.dense")
        _norm(state, f"{ours}.add_norm2.norm", weights, f"{theirs}.output.LayerNorm")
    weights.check_all_used("BERT encoder")
    load_into(model, state, weights.file)
    return notes


def _norm(state: dict, ours: str, weights: Weights, theirs: str) -> None:
    """LayerNorm weight/bias; checkpoints from the TensorFlow era call them gamma/beta."""
    state[f"{ours}.weight"] = weights.take(f"{theirs}.weight", f"{theirs}.gamma")
    state[f"{ours}.bias"] = weights.take(f"{theirs}.bias", f"{theirs}.beta")


def bert_tokenizer(folder: Path) -> HFTokenizer:
    """tokenizer.json (or vocab.txt) with BERT's input format: [CLS] pieces … [SEP].

    [CLS] plays <bos> and [SEP] <eos> for the explorer's labels and the bundle's checks."""
    tokens = special_tokens(folder, {"cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]",
                                     "unk_token": "[UNK]"})
    if (folder / "tokenizer.json").is_file():
        file = folder / "tokenizer.json"
        tok, kind = read_tokenizer_json(file)
    elif (folder / "vocab.txt").is_file():
        file = folder / "vocab.txt"
        config = read_json(folder / "tokenizer_config.json") if (folder / "tokenizer_config.json").is_file() else {}
        tok, kind = read_wordpiece_vocab(file, lowercase=bool(config.get("do_lower_case", True)))
    else:
        raise PretrainedError(f"{folder}: no tokenizer.json or vocab.txt for this BERT model")
    ids = {}
    for role, key in (("cls", "cls_token"), ("sep", "sep_token"), ("pad", "pad_token"), ("unk", "unk_token")):
        found = tok.token_to_id(tokens[key])
        if found is None:
            raise PretrainedError(f"{file}: the vocabulary has no {tokens[key]!r} ({key})")
        ids[role] = found
    return HFTokenizer(tok, kind, pad_id=ids["pad"], bos_id=ids["cls"], eos_id=ids["sep"], unk_id=ids["unk"],
                       prefix=(ids["cls"],), suffix=(ids["sep"],),
                       source={"folder": str(folder), "file": file.name, "role": "source"})
