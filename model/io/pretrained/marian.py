"""Marian translation models (opus-mt, Junczys-Dowmunt et al. 2018) in our encoder-decoder.

Marian is the paper's model almost exactly: post-LN layers, sinusoidal positions, embeddings
× √d_model, one vocabulary shared by both embeddings and the output layer. Its differences
are config fields here: the sines and cosines sit in two halves of the vector
(`positional="sinusoidal_halves"`), the FFN uses swish, the output layer has a bias
(`final_logits_bias` → generator.bias), and decoding starts from the pad id, not a <bos>.
transformers' MarianMTModel names → ours:

    model.shared / model.encoder.embed_tokens / model.decoder.embed_tokens → src_embed / tgt_embed
    lm_head, final_logits_bias                       → generator.weight, generator.bias
    model.{en,de}coder.layers.i.self_attn.{q,k,v,out}_proj → {en,de}coder.layers.i.self_attn.w_{q,k,v,o}
    model.decoder.layers.i.encoder_attn.*             → decoder.layers.i.cross_attn.*
    self_attn_layer_norm / encoder_attn_layer_norm / final_layer_norm → add_norm1 / add_norm2 / last add_norm
    fc1 / fc2                                         → ffn.w_1 / ffn.w_2
"""
from __future__ import annotations

from pathlib import Path

import torch

from model.io.pretrained.files import PretrainedError, Weights, load_into, read_json
from model.io.pretrained.hf_tokenizer import HFTokenizer, PretrainedTokenizer, read_tokenizer_json, special_tokens
from model.io.pretrained.spm_tokenizer import MarianSentencePieceTokenizer
from model.nn.config import TransformerConfig
from model.nn.kinds import ENCODER_DECODER
from model.nn.positional import get_positional_encoding
from model.nn.transformer import Transformer

ACTIVATIONS = {"swish": "swish", "silu": "swish", "gelu": "gelu", "relu": "relu"}
# BART-era switches some Marian config.json files still carry; true means a different model.
UNSUPPORTED_SWITCHES = {
    "normalize_before": "pre-LN layers (normalize_before)",
    "add_final_layer_norm": "a final LayerNorm after the stacks (add_final_layer_norm)",
    "normalize_embedding": "a LayerNorm on the embeddings (normalize_embedding)",
    "add_bias_logits": "add_bias_logits",
}


def marian_config(hf: dict, file: Path) -> TransformerConfig:
    """config.json of a MarianMTModel → our `TransformerConfig` (or a `PretrainedError` naming
    the feature this explorer's Transformer does not have)."""
    def unsupported(what: str) -> PretrainedError:
        return PretrainedError(f"{file}: {what} is not supported (this explorer loads post-LN Marian models)")

    for key, what in UNSUPPORTED_SWITCHES.items():
        if hf.get(key):
            raise unsupported(what)
    act = hf.get("activation_function", "gelu")
    if act not in ACTIVATIONS:
        raise unsupported(f"activation_function={act!r} (known: {', '.join(ACTIVATIONS)})")
    for enc, dec in (("encoder_attention_heads", "decoder_attention_heads"), ("encoder_ffn_dim", "decoder_ffn_dim")):
        if hf.get(enc) != hf.get(dec):
            raise unsupported(f"different {enc} ({hf.get(enc)}) and {dec} ({hf.get(dec)})")
    try:
        vocab = int(hf["vocab_size"])
        shared = bool(hf.get("share_encoder_decoder_embeddings", True))
        tgt_vocab = vocab if shared else int(hf.get("decoder_vocab_size") or vocab)
        return TransformerConfig(
            src_vocab_size=vocab, tgt_vocab_size=tgt_vocab, d_model=int(hf["d_model"]),
            n_heads=int(hf["encoder_attention_heads"]), d_ff=int(hf["encoder_ffn_dim"]),
            n_encoder_layers=int(hf["encoder_layers"]), n_decoder_layers=int(hf["decoder_layers"]),
            dropout=float(hf.get("dropout", 0.1)), max_len=int(hf.get("max_position_embeddings", 512)),
            share_embeddings=shared, norm_first=False, positional="sinusoidal_halves",
            pad_id=int(hf["pad_token_id"]), kind=ENCODER_DECODER.name, layer_norm_eps=1e-5,  # nn.LayerNorm's default
            activation=ACTIVATIONS[act], scale_embeddings=bool(hf.get("scale_embedding", False)),
        )
    except KeyError as exc:
        raise PretrainedError(f"{file}: missing {exc.args[0]!r}") from None
    except (TypeError, ValueError) as exc:  # ConfigError is a ValueError
        raise PretrainedError(f"{file}: {exc}") from None


def marian_max_output(folder: Path, hf: dict, cfg: TransformerConfig) -> int:
    """The most tokens the model may write, from its own files: generation_config.json's (or
    config.json's) max_length, else max_position_embeddings (opus-mt: 512), within the decoder's
    positions. HF's max_length counts the start symbol, so 512 allows 511 written tokens."""
    generation = folder / "generation_config.json"
    limit = read_json(generation).get("max_length") if generation.is_file() else None
    limit = limit or hf.get("max_length") or cfg.max_len
    try:
        limit = int(limit)
    except (TypeError, ValueError):
        raise PretrainedError(f"{folder}: max_length must be a whole number, got {limit!r}") from None
    return max(1, min(limit, cfg.max_len) - 1)


def load_marian_weights(model: Transformer, weights: Weights) -> list[str]:
    """Copy a MarianMTModel checkpoint into `model`; returns notes."""
    cfg = model.config
    # MarianModel (no LM head) saves without the "model." prefix.
    weights.tensors = {k.removeprefix("model."): v for k, v in weights.tensors.items()}
    _check_positions(model, weights)
    src = weights.take("encoder.embed_tokens.weight", "shared.weight")
    tgt = weights.take("decoder.embed_tokens.weight", "shared.weight")
    if weights.has("shared.weight"):
        weights.take("shared.weight")  # the tied original of the two above
    head = weights.take("lm_head.weight") if weights.has("lm_head.weight") else tgt  # tied: saved once
    if cfg.share_embeddings and not (torch.equal(src, tgt) and torch.equal(tgt, head)):
        raise PretrainedError(f"{weights.file}: share_encoder_decoder_embeddings is true but the saved "
                              "encoder/decoder/output embeddings differ")
    bias = weights.take("final_logits_bias") if weights.has("final_logits_bias") else torch.zeros(1, head.size(0))
    state = {"src_embed.lut.weight": src, "tgt_embed.lut.weight": tgt,
             "generator.weight": head, "generator.bias": bias.reshape(-1)}
    for stack, n in (("encoder", cfg.n_encoder_layers), ("decoder", cfg.n_decoder_layers)):
        sublayers = [("self_attn", "self_attn", "self_attn_layer_norm")]
        if stack == "decoder":
            sublayers.append(("cross_attn", "encoder_attn", "encoder_attn_layer_norm"))
        for i in range(n):
            ours, theirs = f"{stack}.layers.{i}", f"{stack}.layers.{i}"
            for k, (attn, their_attn, norm) in enumerate(sublayers, start=1):
                for w, proj in (("w_q", "q_proj"), ("w_k", "k_proj"), ("w_v", "v_proj"), ("w_o", "out_proj")):
                    _linear(state, f"{ours}.{attn}.{w}", weights, f"{theirs}.{their_attn}.{proj}")
                _linear(state, f"{ours}.add_norm{k}.norm", weights, f"{theirs}.{norm}")
            _linear(state, f"{ours}.ffn.w_1", weights, f"{theirs}.fc1")
            _linear(state, f"{ours}.ffn.w_2", weights, f"{theirs}.fc2")
            _linear(state, f"{ours}.add_norm{len(sublayers) + 1}.norm", weights, f"{theirs}.final_layer_norm")
    weights.check_all_used("Marian encoder-decoder")
    load_into(model, state, weights.file)
    return []


def _linear(state: dict, ours: str, weights: Weights, theirs: str) -> None:
    state[f"{ours}.weight"] = weights.take(f"{theirs}.weight")
    state[f"{ours}.bias"] = weights.take(f"{theirs}.bias")


def _check_positions(model: Transformer, weights: Weights) -> None:
    """Older files save the (fixed) sinusoid tables; they must be the layout we compute."""
    ours = get_positional_encoding(model.config.d_model, model.config.max_len, layout="halves")
    for name in ("encoder.embed_positions.weight", "decoder.embed_positions.weight"):
        if weights.has(name):
            saved = weights.take(name)
            n = min(saved.size(0), ours.size(0))
            if saved.shape[1:] != ours.shape[1:] or (saved[:n] - ours[:n]).abs().max() > 1e-4:
                raise PretrainedError(f"{weights.file}: {name} is not Marian's sinusoidal table "
                                      "(learned positions are not supported)")


# -- tokenizers ---------------------------------------------------------------------------------
def marian_tokenizers(folder: Path, hf: dict) -> tuple[PretrainedTokenizer, PretrainedTokenizer]:
    """(source, target) tokenizers: tokenizer.json if the folder has one, else the opus-mt files
    (source.spm, target.spm, vocab.json) through `sentencepiece`."""
    tokens = special_tokens(folder, {"eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>"})
    ids = dict(pad_id=int(hf["pad_token_id"]), eos_id=int(hf.get("eos_token_id", 0)),
               bos_id=int(hf.get("decoder_start_token_id", hf["pad_token_id"])))
    json_path = folder / "tokenizer.json"
    if json_path.is_file():
        # One file, two roles: the source ends with </s> (MarianTokenizer appends it), the target
        # gets its start symbol and </s> from the bundle.
        def side(role: str, suffix: tuple[int, ...]) -> HFTokenizer:
            tok, kind = read_tokenizer_json(json_path)
            unk = _unk_id(tok.token_to_id(tokens["unk_token"]), json_path, tokens)
            return HFTokenizer(tok, kind, unk_id=unk, suffix=suffix, **ids,
                               source={"folder": str(folder), "file": json_path.name, "role": role})
        return side("source", (ids["eos_id"],)), side("target", ())
    src_spm, vocab = folder / "source.spm", folder / "vocab.json"
    if not (src_spm.is_file() and vocab.is_file()):
        raise PretrainedError(f"{folder}: no tokenizer.json and no source.spm + vocab.json: "
                              "nothing to turn text into this model's ids")
    tgt_spm = folder / "target.spm" if (folder / "target.spm").is_file() else src_spm
    config = read_json(folder / "tokenizer_config.json") if (folder / "tokenizer_config.json").is_file() else {}
    tgt_vocab = folder / "target_vocab.json" if config.get("separate_vocabs") else vocab
    unk = _unk_id(read_json(vocab).get(tokens["unk_token"]), vocab, tokens)
    source = MarianSentencePieceTokenizer(src_spm, vocab, unk_id=unk, suffix=(ids["eos_id"],), **ids,
                                          source={"folder": str(folder), "file": src_spm.name, "role": "source"})
    target = MarianSentencePieceTokenizer(tgt_spm, tgt_vocab, unk_id=unk, **ids,
                                          source={"folder": str(folder), "file": tgt_spm.name, "role": "target"})
    return source, target


def _unk_id(found: int | None, file: Path, tokens: dict) -> int:
    if not isinstance(found, int):
        raise PretrainedError(f"{file}: the vocabulary has no {tokens['unk_token']!r} token")
    return found

