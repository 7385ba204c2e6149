"""A Marian (opus-mt) translation model loaded into our encoder-decoder, checked against `transformers`.

A tiny randomly initialised MarianMTModel (every weight, LayerNorms and final_logits_bias
included, perturbed away from its init) is saved by `transformers` and loaded both ways:
encoder and decoder hidden states after every layer, the logits, and all three kinds of
attention must agree. The tokenizers (a tokenizer.json, or opus-mt's SentencePiece files)
are checked against transformers' MarianTokenizer.
"""
import io
import json
import math
import os
import sys
from pathlib import Path

import pytest
import torch

from model.inference.decoding import decode_steps
from model.io.pretrained import PretrainedError, load_pretrained
from model.nn.hooks import record
from model.nn.positional import get_positional_encoding
from model.nn.transformer import decoder_mask

try:
    import tokenizers
    import transformers
except ImportError:  # the tests that need them skip (`require_hf`); the layout tests still run
    transformers = tokenizers = None


def require_hf() -> None:
    pytest.importorskip("transformers")
    pytest.importorskip("tokenizers")

TOL = 1e-4
VOCAB, PAD, EOS, UNK = 100, 99, 0, 1
WORDS = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran", "home", "die", "katze", "saß", "auf", "der", "matte",
         "ein", "hund", "lief", "nach", "hause", "is", "all", "you", "need", "attention"]


# -- Marian's pieces, without optional packages ------------------------------------------------------
def test_halves_layout_is_marians_table():
    """transformers' MarianSinusoidalPositionalEmbedding.create_weight, written out: sin of
    pos/10000^(2(j//2)/d) for even j in the first half, cos for odd j in the second."""
    d, n = 10, 7
    ours = get_positional_encoding(d, n, layout="halves")
    for pos in range(n):
        angles = [pos / 10000 ** (2 * (j // 2) / d) for j in range(d)]
        expected = [math.sin(a) for a in angles[0::2]] + [math.cos(a) for a in angles[1::2]]
        assert torch.allclose(ours[pos], torch.tensor(expected), atol=1e-6)
    paper = get_positional_encoding(d, n)
    assert torch.equal(ours[:, : d // 2], paper[:, 0::2]) and torch.equal(ours[:, d // 2:], paper[:, 1::2])
    with pytest.raises(ValueError, match="layout"):
        get_positional_encoding(d, n, layout="spiral")


def test_a_start_symbol_equal_to_pad_is_not_masked():
    """Marian starts decoding from <pad>: position 0 stays visible, later pads are blocked."""
    mask = decoder_mask(torch.tensor([[PAD, 5, 6, PAD]]), PAD)[0, 0]
    assert mask[:, 0].all()
    assert mask[3].tolist() == [True, True, True, False]
    assert decoder_mask(torch.tensor([[1, 5, 0, 0]]), 0)[0, 0, 3].tolist() == [True, True, False, False]


def tiny_marian(folder, seed=0, **overrides):
    """Save a random MarianMTModel (d_model 32, 2+2 layers, 4 heads) with transformers."""
    require_hf()
    torch.manual_seed(seed)
    params = dict(vocab_size=VOCAB, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                  decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=64,
                  pad_token_id=PAD, decoder_start_token_id=PAD, eos_token_id=EOS, activation_function="swish",
                  scale_embedding=True)
    params.update(overrides)
    model = transformers.MarianMTModel(transformers.MarianConfig(**params))
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "embed_positions" not in name:  # the fixed sinusoids stay as they are
                p.add_(torch.randn_like(p) * 0.1)  # LayerNorm gains/biases away from 1/0 too
        model.final_logits_bias.normal_()
    model.save_pretrained(folder)
    # The reference is what transformers itself loads back from the folder, with eager
    # attention so that it returns every head's weights.
    return transformers.MarianMTModel.from_pretrained(folder, attn_implementation="eager").eval()


def word_vocab() -> dict:
    vocab = {"</s>": EOS, "<unk>": UNK}
    vocab.update({w: i + 2 for i, w in enumerate(WORDS)})
    vocab.update({f"w{i}": i for i in range(len(vocab), PAD)})
    vocab["<pad>"] = PAD
    return vocab


def write_tokenizer_json(folder):
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(word_vocab(), unk_token="<unk>"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tok.add_special_tokens(["</s>", "<unk>", "<pad>"])
    tok.save(str(folder / "tokenizer.json"))


@pytest.fixture(scope="module")
def marian(tmp_path_factory):
    torch.set_num_threads(1)
    folder = tmp_path_factory.mktemp("opus-mt-tiny")
    reference = tiny_marian(folder)
    write_tokenizer_json(folder)
    return load_pretrained(folder), reference


def _compare(bundle, reference, src, tgt_in, attention_mask=None):
    """Run both models teacher-forced; assert every hidden state, attention and logit agrees."""
    model = bundle.model
    with torch.no_grad():
        with record(model) as trace:
            ours = model(src, tgt_in)
        theirs = reference(input_ids=src, attention_mask=attention_mask, decoder_input_ids=tgt_in,
                           output_hidden_states=True, output_attentions=True)
        fast = model(src, tgt_in)
    rows = attention_mask.bool() if attention_mask is not None else torch.ones_like(src, dtype=torch.bool)

    def close(a, b, what, keep=None):
        diff = (a - b).abs()
        if keep is not None:
            diff = diff * keep
        assert diff.max() <= TOL, f"{what}: max |diff| {diff.max():.2e}"

    close(ours, theirs.logits, "logits")
    close(fast, theirs.logits, "logits (fast path)")
    close(trace["encoder.input"].tensor, theirs.encoder_hidden_states[0], "encoder input", rows[..., None])
    close(trace["decoder.input"].tensor, theirs.decoder_hidden_states[0], "decoder input")
    for i in range(model.config.n_encoder_layers):
        close(trace[f"encoder.layers.{i}.add_norm2.norm"].tensor, theirs.encoder_hidden_states[i + 1],
              f"encoder layer {i}", rows[..., None])
        close(trace.attention("encoder", i), theirs.encoder_attentions[i], f"encoder attention {i}",
              rows[:, None, :, None])
    for i in range(model.config.n_decoder_layers):
        close(trace[f"decoder.layers.{i}.add_norm3.norm"].tensor, theirs.decoder_hidden_states[i + 1], f"decoder layer {i}")
        close(trace.attention("decoder_self", i), theirs.decoder_attentions[i], f"decoder self-attention {i}")
        assert trace.attention("cross", i).shape == theirs.cross_attentions[i].shape
        close(trace.attention("cross", i), theirs.cross_attentions[i], f"cross-attention {i}")


def test_config_maps_marians_differences_to_fields(marian):
    bundle, _ = marian
    cfg = bundle.config
    assert (cfg.kind, cfg.d_model, cfg.n_heads, cfg.n_encoder_layers, cfg.n_decoder_layers) == ("encoder_decoder", 32, 4, 2, 2)
    assert (cfg.positional, cfg.activation, cfg.scale_embeddings, cfg.share_embeddings) == (
        "sinusoidal_halves", "swish", True, True)
    assert bundle.model.generator.weight is bundle.model.src_embed.weight  # one matrix, as Section 3.4
    tok = bundle.tgt_tokenizer
    assert (tok.bos_id, tok.eos_id, tok.pad_id, tok.unk_id) == (PAD, EOS, PAD, UNK)  # decoding starts from <pad>


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_hidden_state_attention_and_logit_matches_transformers(marian, seed):
    bundle, reference = marian
    gen = torch.Generator().manual_seed(seed)
    src = torch.cat([torch.randint(2, PAD, (1, 7 + seed), generator=gen), torch.tensor([[EOS]])], dim=1)
    tgt_in = torch.cat([torch.tensor([[PAD]]), torch.randint(2, PAD, (1, 5 + seed), generator=gen)], dim=1)
    _compare(bundle, reference, src, tgt_in)


def test_a_padded_source_batch_matches(marian):
    bundle, reference = marian
    src = torch.tensor([[5, 6, 7, 8, 9, EOS], [10, 11, EOS, PAD, PAD, PAD]])
    tgt_in = torch.tensor([[PAD, 12, 13, 14], [PAD, 15, 16, 17]])
    _compare(bundle, reference, src, tgt_in, attention_mask=(src != PAD).long())


def test_text_in_text_out_and_greedy_decoding_match(marian):
    bundle, reference = marian
    src, enc = bundle.encode_source("the cat sat on the mat")
    assert enc.ids == [word_vocab()[w] for w in ["the", "cat", "sat", "on", "the", "mat"]] + [EOS]
    assert enc.pieces[-1] == "</s>"
    ours = bundle.generate_ids(src, max_len=10)
    with torch.no_grad():
        theirs = reference.generate(src, attention_mask=torch.ones_like(src), num_beams=1, do_sample=False,
                                    max_new_tokens=10, bad_words_ids=[[PAD]], forced_eos_token_id=None)[0, 1:].tolist()
    if EOS in theirs:
        theirs = theirs[:theirs.index(EOS)]
    assert ours == theirs

    result = bundle.run("the cat sat on the mat", target="die katze saß")
    assert result.tgt_pieces == ["<pad>", "die", "katze", "saß"]  # Marian's start symbol is <pad>
    assert result.out_pieces == ["die", "katze", "saß", "</s>"]
    assert result.trace.attention("cross", 1).shape == (1, 4, 4, 7)
    tgt_in = torch.tensor([[PAD] + bundle.encode_target("die katze saß")])
    _compare(bundle, reference, src, tgt_in)
    assert bundle.translate("the cat sat on the mat", max_len=10) == bundle.tgt_tokenizer.decode(ours)


def test_step_by_step_decoding_runs_from_the_pad_start(marian):
    """The decoder's first position is <pad> = the start symbol: it must not be masked as padding."""
    bundle, _ = marian
    src, _ = bundle.encode_source("a dog ran home")
    tok = bundle.tgt_tokenizer
    steps = list(decode_steps(bundle.model, src, tok.bos_id, tok.eos_id, 4))
    assert steps and steps[0].prefix == [PAD]
    for step in steps:
        assert torch.isfinite(step.self_attention).all()
        assert torch.allclose(step.self_attention.sum(-1), torch.ones(()))
    chosen = [s.chosen for s in steps]
    if chosen[-1] == tok.eos_id:
        chosen.pop()
    assert chosen == bundle.generate_ids(src, max_len=4)  # the same greedy choices as the bundle's decoder


def test_separate_vocabularies(tmp_path):
    """share_encoder_decoder_embeddings=false: two embeddings, the output layer tied to the decoder's."""
    reference = tiny_marian(tmp_path, seed=3, share_encoder_decoder_embeddings=False, decoder_vocab_size=90,
                            pad_token_id=89, decoder_start_token_id=89)
    vocab = {"</s>": 0, "<unk>": 1, **{f"w{i}": i for i in range(2, 89)}, "<pad>": 89}
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tok.save(str(tmp_path / "tokenizer.json"))
    bundle = load_pretrained(tmp_path)
    assert (bundle.config.src_vocab_size, bundle.config.tgt_vocab_size, bundle.config.share_embeddings) == (100, 90, False)
    _compare(bundle, reference, torch.tensor([[3, 50, 95, 7, 0]]), torch.tensor([[89, 4, 60, 2]]))


# -- opus-mt's own files: SentencePiece + vocab.json ------------------------------------------------
CORPUS = ["the cat sat on the mat", "a dog ran home", "attention is all you need", "the dog sat on a cat",
          "you need a mat", "home is where the cat is", "all cats need attention"] * 20


@pytest.fixture(scope="module")
def spm_folder(tmp_path_factory):
    spm = pytest.importorskip("sentencepiece")
    folder = tmp_path_factory.mktemp("opus-mt-spm")
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(CORPUS), model_writer=buf, vocab_size=30,
                                   model_type="unigram", character_coverage=1.0)
    for name in ("source.spm", "target.spm"):
        (folder / name).write_bytes(buf.getvalue())
    proc = spm.SentencePieceProcessor(model_proto=buf.getvalue())
    pieces = [proc.id_to_piece(i) for i in range(proc.get_piece_size())]
    pieces = [p for p in pieces if p not in ("<unk>", "<s>", "</s>")]
    # Marian's vocab.json is not aligned with the SentencePiece ids; leave one piece out so it is <unk>.
    dropped = max(proc.encode("the cat sat", out_type=str), key=len)
    vocab = {"</s>": EOS, "<unk>": UNK}
    for p in pieces:
        if p != dropped:
            vocab[p] = len(vocab)
    vocab.update({f"<fill{i}>": i for i in range(len(vocab), PAD)})
    vocab["<pad>"] = PAD
    (folder / "vocab.json").write_text(json.dumps(vocab))
    (folder / "tokenizer_config.json").write_text(json.dumps({"source_lang": "en", "target_lang": "de"}))
    tiny_marian(folder, seed=4)
    return folder, dropped


@pytest.mark.filterwarnings("ignore:Recommended. pip install sacremoses")  # MarianTokenizer's, not ours
def test_sentencepiece_files_tokenize_like_marian_tokenizer(spm_folder):
    folder, dropped = spm_folder
    bundle = load_pretrained(folder)
    ref = transformers.MarianTokenizer(str(folder / "source.spm"), str(folder / "target.spm"), str(folder / "vocab.json"))
    for text in ["the cat sat on the mat", "a dog ran home", "attention is all you need, dog!"]:
        enc = bundle.src_tokenizer.encode(text)
        assert enc.ids == ref(text)["input_ids"], text
        assert enc.pieces == ref.convert_ids_to_tokens(enc.ids)
        labels = ref(text_target=text)["input_ids"]
        assert bundle.tgt_tokenizer.encode(text).ids == labels[:-1]  # the bundle appends </s> itself
        reference = ref.decode(labels, skip_special_tokens=False).replace(" </s>", "").replace("</s>", "")
        assert bundle.tgt_tokenizer.decode(labels) == reference
    raw = ref.spm_source.encode("the cat sat", out_type=str)
    enc = bundle.src_tokenizer.encode("the cat sat")
    expected = [(i, p.replace("▁", " ").strip()) for i, p in enumerate(raw) if p == dropped]
    assert expected and enc.unknown == expected and all(enc.ids[i] == UNK for i, _ in expected)
    assert bundle.src_tokenizer.kind == "sentencepiece"
    result = bundle.run("the cat sat on the mat")  # the full path: text → our model → every step recorded
    assert result.src_pieces[-1] == "</s>" and result.tgt_pieces[0] == "<pad>"


def test_sentencepiece_missing_is_a_clear_error(spm_folder, monkeypatch):
    folder, _ = spm_folder
    monkeypatch.setitem(sys.modules, "sentencepiece", None)  # import fails as if not installed
    with pytest.raises(PretrainedError, match=r"no\s+tokenizer.json.*pip install sentencepiece"):
        load_pretrained(folder)


# -- unsupported Marian variants -----------------------------------------------------------------
@pytest.mark.parametrize("change, words", [
    (dict(normalize_before=True), "normalize_before"),
    (dict(add_final_layer_norm=True), "add_final_layer_norm"),
    (dict(activation_function="tanh"), "activation_function='tanh'"),
    (dict(decoder_attention_heads=8), "decoder_attention_heads"),
])
def test_unsupported_variants_name_the_feature_and_file(marian, tmp_path, change, words):
    bundle, _ = marian
    source = json.loads(Path(bundle.path, "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({**source, **change}))
    with pytest.raises(PretrainedError) as info:
        load_pretrained(tmp_path)
    assert words in str(info.value) and "config.json" in str(info.value)


def test_no_tokenizer_files_is_a_clear_error(tmp_path):
    tiny_marian(tmp_path, seed=5)
    with pytest.raises(PretrainedError, match="no tokenizer.json and no source.spm"):
        load_pretrained(tmp_path)


# -- older files, folders offered to the GUI, tokenizers saved in a checkpoint ----------------------
def test_a_legacy_bin_with_saved_position_tables_loads_the_same(marian, tmp_path):
    """pytorch_model.bin files of older opus-mt models keep every tied copy and the sinusoid
    tables; the tables must be Marian's layout or the load is refused."""
    bundle, reference = marian
    state = {k: v.clone() for k, v in reference.state_dict().items()}
    assert "model.encoder.embed_positions.weight" in state
    for name in ("config.json", "tokenizer.json"):
        (tmp_path / name).write_bytes(Path(bundle.path, name).read_bytes())
    torch.save(state, tmp_path / "pytorch_model.bin")
    again = load_pretrained(tmp_path)
    for (name, ours), theirs in zip(again.model.state_dict().items(), bundle.model.state_dict().values()):
        assert torch.equal(ours, theirs), name
    state["model.decoder.embed_positions.weight"][3] += 1.0
    torch.save(state, tmp_path / "pytorch_model.bin")
    with pytest.raises(PretrainedError, match="decoder.embed_positions.weight is not Marian's sinusoidal table"):
        load_pretrained(tmp_path)


def test_folders_in_the_environment_are_offered(marian, monkeypatch):
    from model.io.pretrained import ENV_FOLDERS, available_pretrained
    bundle, _ = marian
    monkeypatch.setenv(ENV_FOLDERS, f"{bundle.path}{os.pathsep}/no/such/folder")
    found = available_pretrained()
    assert found[Path(bundle.path).name] == Path(bundle.path)
    assert load_pretrained(Path(bundle.path).name).config == bundle.config  # by its offered name


def test_tokenizers_round_trip_through_to_dict(marian):
    from model.io.pretrained import tokenizer_from_dict
    bundle, _ = marian
    for tok in (bundle.src_tokenizer, bundle.tgt_tokenizer):
        data = json.loads(json.dumps(tok.to_dict()))  # what a checkpoint's config.json would hold
        again = tokenizer_from_dict(data)
        assert again == tok and again.encode("the cat sat").ids == tok.encode("the cat sat").ids
    assert bundle.src_tokenizer.encode("the cat").ids[-1] == EOS and bundle.tgt_tokenizer.encode("the cat").ids[-1] != EOS


def test_the_output_length_is_the_models_own_not_a_cap(tmp_path):
    """opus-mt's files allow 512 tokens (max_length counts the start symbol); the explorer used to
    stop at about 72. A model that never says </s> writes exactly as many as its files allow."""
    tiny_marian(tmp_path, max_position_embeddings=128)
    write_tokenizer_json(tmp_path)
    (tmp_path / "generation_config.json").write_text(json.dumps({"max_length": 100}))
    bundle = load_pretrained(tmp_path)
    assert bundle.default_max_output(5) == 99
    with torch.no_grad():
        bundle.model.generator.bias[EOS] = -1e9  # never end: the length limit alone stops it
    src, _ = bundle.encode_source("the cat sat on the mat")
    assert len(bundle.generate_ids(src)) == 99  # well past the old cap of ~72
    (tmp_path / "generation_config.json").unlink()
    config = json.loads((tmp_path / "config.json").read_text())
    config.pop("max_length", None)
    (tmp_path / "config.json").write_text(json.dumps(config))
    assert load_pretrained(tmp_path).default_max_output(5) == 127  # max_position_embeddings, less the start
    config["max_length"] = 512  # more than the positions: the positions win
    (tmp_path / "config.json").write_text(json.dumps(config))
    assert load_pretrained(tmp_path).default_max_output(5) == 127
