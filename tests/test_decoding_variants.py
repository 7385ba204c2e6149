"""Decoding panel for the other two variants: a decoder-only (GPT-like) model continues the
typed prompt — step t is row n_prompt + t of the parallel pass, the prompt is a fixed stem of
the beam tree — and an encoder-only masked LM (BERT-like) shows its top-5 guesses per [MASK].
References come straight from the model's forward, not through the panel's helpers."""
import numpy as np
import pytest
import torch
from PySide6.QtCore import Qt

from explorer.panels.decoding.mask_predictions_view import MaskPredictionsView
from explorer.panels.decoding.panel import DecodingPanel
from explorer.runner import Runner
from explorer.state import SessionState
from explorer.theme import colour
from model.inference.beam_tree import tree_layout
from model.inference.decoding import beam_search
from model.interpret.decode_run import DecodeSettings, compute_run
from model.interpret.decode_texts import MAX_DP
from model.io.checkpoints import random_bundle
from support import small_bundle

PROMPT = colour("prompt")  # the light theme (tests run in it)

PROMPT_TEXT = "the duck"
MASKED = "the [MASK] says moo and the [MASK] says quack"


def _seeded(seed: int, **config):
    torch.manual_seed(seed)
    bundle = random_bundle("facts", d_model=32, n_heads=4, d_ff=64, dropout=0.0, **config)
    bundle.model.eval()
    return bundle


@pytest.fixture(scope="module")
def gpt():
    """A small random decoder-only model whose generator is biased so that its output varies."""
    bundle = _seeded(11, kind="decoder_only", n_encoder_layers=0, n_decoder_layers=2)
    with torch.no_grad():
        v = bundle.config.tgt_vocab_size
        bundle.model.generator.bias.copy_(torch.randn(v, generator=torch.Generator().manual_seed(4)) * 1.5)
    return bundle


@pytest.fixture(scope="module")
def bert():
    return _seeded(12, kind="encoder_only", n_decoder_layers=0, n_encoder_layers=2)


def make_panel(qtbot, bundle, text=PROMPT_TEXT, target=None):
    state = SessionState()
    panel = DecodingPanel(state)  # offscreen: decodes synchronously
    panel.runner = Runner(state, synchronous=True)  # the pipeline that computes its frames
    qtbot.addWidget(panel)
    panel.resize(1400, 800)
    panel.show()
    state.set_bundle(bundle)
    state.set_input(text, target)
    return panel


def prompt_ids(bundle, text=PROMPT_TEXT):
    return bundle.encode_source(text)[1].ids


def lm_probs(bundle, seq):
    """(T, V) softmax of one decoder-only forward over `seq` (the independent reference)."""
    with torch.no_grad():
        return bundle.model(None, torch.tensor([seq])).softmax(-1)[0]


# -- decoder-only: continuing a prompt ---------------------------------------------------------
def test_decoder_only_run_continues_the_prompt(gpt):
    prompt = prompt_ids(gpt)
    bos = gpt.tgt_tokenizer.bos_id
    run = compute_run(gpt, PROMPT_TEXT, DecodeSettings())
    assert run.n_prompt == len(prompt) == 2
    assert run.steps[0].prefix == [bos] + prompt  # step 0 reads <bos> + the prompt
    assert all(s.prefix[: 1 + len(prompt)] == [bos] + prompt for s in run.steps)
    assert run.steps[0].self_attention.shape[-1] == 1 + len(prompt)
    # the prompt really conditions the model: step 0's distribution is the one after the prompt,
    # not the one after <bos> alone
    after_prompt, after_bos = lm_probs(gpt, [bos] + prompt)[-1], lm_probs(gpt, [bos])[-1]
    torch.testing.assert_close(run.steps[0].model_probs, after_prompt, atol=1e-5, rtol=0)
    assert (after_prompt - after_bos).abs().max() > 1e-3
    # greedy: each chosen token is the argmax after the growing prefix (bos/pad never emitted)
    for step in run.steps:
        p = lm_probs(gpt, step.prefix)[-1].clone()
        p[[bos, gpt.config.pad_id]] = -1
        assert step.chosen == int(p.argmax())
    # the same ids the model's own generate_ids gives for this prompt
    generated = gpt.generate_ids(torch.tensor([prompt]))
    assert [i for i in run.output_ids if i != run.eos_id] == generated


def test_step_t_equals_parallel_row_n_prompt_plus_t(qtbot, gpt):
    panel = make_panel(qtbot, gpt)
    run = panel.run
    assert run is not None and run.n_prompt == 2
    n_prompt = run.n_prompt
    seq = run.steps[-1].prefix
    assert seq == [gpt.tgt_tokenizer.bos_id] + prompt_ids(gpt) + run.output_ids[:-1]
    reference = lm_probs(gpt, seq)  # one parallel forward, row n_prompt + t = step t
    assert reference.shape[0] == n_prompt + len(run.steps)
    qtbot.mouseClick(panel.controls.transport.first, Qt.LeftButton)
    for t, step in enumerate(run.steps):
        panel.set_step(t)
        torch.testing.assert_close(step.model_probs, reference[n_prompt + t], atol=1e-5, rtol=0)
        text = panel.parallel.equality.text()
        assert text.startswith(f"Row {n_prompt + t} of the parallel pass = step {t + 1}: {MAX_DP} = ")  # steps from 1
        assert float(text.rsplit("= ", 1)[1]) < 1e-5
        # the mask grows one row per step, from 1 + n_prompt rows; the query row is framed
        size = n_prompt + 1 + t
        assert panel.mask_map.matrix.shape == panel.self_map.matrix.shape == (size, size)
        assert np.array_equal(panel.mask_map.matrix, np.tril(np.ones((size, size))))
        assert panel.self_map.highlight_row == panel.parallel.heatmap.highlight_row == n_prompt + t
        assert panel.self_map.separator_at == panel.parallel.heatmap.separator_at == 1 + n_prompt
    assert not panel.cross_map.isVisible()  # a decoder-only model has no cross-attention
    # the ablation is measured at the same row
    panel.parallel.remove_mask.click()
    t = 0
    panel.set_step(t)
    with torch.no_grad():
        unmasked = gpt.model(None, torch.tensor([seq]), causal=False).softmax(-1)[0]
    diff = float((run.steps[t].model_probs - unmasked[n_prompt + t]).abs().max())
    assert abs(run.difference(t, causal=False) - diff) < 1e-6 and diff > 1e-3
    assert f"row {n_prompt + t} ≠ step {t + 1}" in panel.parallel.equality.text()
    assert panel.controls.transport.counter.text().strip() == f"1 / {len(run.steps)}"  # as the beam axis counts


def test_prefix_chips_mark_the_prompt(qtbot, gpt):
    panel = make_panel(qtbot, gpt)
    panel.set_step(1)
    html_text = panel.prefix.text()
    assert "prompt:" in html_text
    assert html_text.count(PROMPT.name()) >= 1  # the prompt label / separator in the prompt colour
    # the input row of the parallel table shows prompt tokens in the prompt colour
    colours = [panel.parallel.table.item(c, 0).foreground().color().name() for c in range(panel.parallel.table.rowCount())]
    assert colours[1:3] == [PROMPT.name()] * 2 and PROMPT.name() not in (colours[0], *colours[3:])


def test_given_continuation_is_teacher_forced(qtbot, gpt):
    panel = make_panel(qtbot, gpt, target="eats bread")
    run = panel.run
    eos = gpt.tgt_tokenizer.eos_id
    forced = gpt.tgt_tokenizer.encode("eats bread").ids
    assert run.settings.strategy == "target" and run.output_ids == forced + [eos]
    reference = lm_probs(gpt, [gpt.tgt_tokenizer.bos_id] + prompt_ids(gpt) + forced)
    for t, step in enumerate(run.steps):
        torch.testing.assert_close(step.model_probs, reference[run.n_prompt + t], atol=1e-5, rtol=0)
    assert "given continuation" in panel.bars.getPlotItem().titleLabel.text


def test_beam_search_draws_the_prompt_as_a_fixed_stem(qtbot, gpt):
    panel = make_panel(qtbot, gpt)
    panel.controls.beam_size.setValue(3)
    panel.controls.set_strategy("beam")
    run = panel.run
    assert run.beam is not None and run.settings.beam_size == 3
    prompt = prompt_ids(gpt)
    bos, eos = gpt.tgt_tokenizer.bos_id, gpt.tgt_tokenizer.eos_id
    ref = beam_search(gpt.model, None, bos, eos, gpt.default_max_output(len(prompt)), 3, 0.6, prompt=prompt)
    assert run.beam.tokens == ref.tokens and ref.tokens[: 1 + len(prompt)] == [bos] + prompt
    assert [bos] + prompt + run.output_ids == ref.tokens  # the step-by-step view follows the best
    stem = [n for n in run.beam.nodes if n.prompt]
    assert [n.token for n in stem] == prompt and not any(n.pruned for n in stem)
    view = panel.beam_view
    pos = tree_layout(run.beam.nodes)
    brushes = [b.color().name() for b in view.scatter.data["brush"]]
    for n in stem:
        assert brushes[n.id] == PROMPT.name()
        assert pos[n.id][1] == 0.0 and pos[n.id][0] < 0  # one straight line left of step 0
    assert sorted(pos[n.id][0] for n in stem) == [float(x) for x in range(-len(prompt), 0)]
    assert pos[0] == (-1.0 - len(prompt), 0.0)  # <bos> opens the stem
    searched = [n for n in run.beam.nodes if not n.prompt and n.parent is not None]
    assert all(brushes[n.id] != PROMPT.name() for n in searched)
    assert all(pos[n.id][0] == n.step - 1 for n in searched)  # decoding step t at x = t
    assert "prompt" in [label for _x, label in view.getPlotItem().getAxis("bottom")._tickLevels[0]]
    steps = [(x, label) for x, label in view.getPlotItem().getAxis("bottom")._tickLevels[0] if x >= 0]
    assert steps and all(label == str(int(x) + 1) for x, label in steps)  # the step counter's numbers, from 1
    best = gpt.tgt_tokenizer.decode([t for t in ref.tokens[1 + len(prompt):] if t != eos])
    assert " " in best  # words, not glued pieces
    assert f"Best {best!r}" in panel.beam_summary.text()


def test_eos_caption_is_not_swallowed_as_a_tag(qtbot, gpt):
    panel = make_panel(qtbot, gpt, target="eats bread")
    panel.set_step(len(panel.run.steps) - 1)  # the forced <eos>
    assert "&lt;eos&gt;" in panel.bars.getPlotItem().titleLabel.text


# -- encoder-only masked LM: its guesses per [MASK] ----------------------------------------------
def mlm_reference(bundle, text):
    """{position: (top-5 pieces, top-5 probs)} from the model's own logits at each [MASK]."""
    src, enc = bundle.encode_source(text)
    with torch.no_grad():
        probs = bundle.model(src)[0].softmax(-1)  # (S, V)
    mask_id = bundle.src_tokenizer.encode(bundle.mask_token).ids[0]
    out = {}
    for pos, i in enumerate(enc.ids):
        if i == mask_id:
            top = probs[pos].topk(5)
            out[pos] = (bundle.src_tokenizer.pieces(top.indices.tolist()), top.values.numpy())
    return out


def test_masked_lm_shows_one_bar_group_per_mask(qtbot, bert):
    assert bert.fills_masks
    panel = make_panel(qtbot, bert, text=MASKED)
    assert panel.pages.currentWidget() is panel.mask_view
    panel.state.set_result(bert.run(MASKED))
    view = panel.mask_view
    reference = mlm_reference(bert, MASKED)
    assert len(reference) == 2 and len(view.shown_groups) == 2
    assert all(g.isVisible() for g in view.shown_groups)
    for group, (pos, (pieces, probs)) in zip(view.shown_groups, sorted(reference.items())):
        assert group.position == pos
        assert group.token_ids == list(range(5)) and group.chosen == 0  # the model's top-5, best first
        np.testing.assert_allclose(group.heights, probs, atol=1e-5)
        np.testing.assert_allclose(np.asarray(group.bars.opts["width"], dtype=float), probs, atol=1e-5)
        assert f"“{pieces[0]}”" in group.caption[1] and "____" in group.caption[2]
    assert not view.hint.isVisible()
    assert panel.run is None  # nothing was decoded


def test_masked_lm_without_mask_gives_a_hint(qtbot, bert):
    panel = make_panel(qtbot, bert, text="the cow says moo")
    panel.state.set_result(bert.run("the cow says moo"))
    view = panel.mask_view
    assert view.shown_groups == [] and view.hint.isVisible()
    assert "[MASK]" in view.hint.text() and "missing" in view.hint.text()
    panel.state.set_result(bert.run(MASKED))  # two masks: two groups, the hint goes
    assert len(view.shown_groups) == 2 and not view.hint.isVisible()
    panel.state.set_result(bert.run("the [MASK] says moo"))  # then one
    assert len(view.shown_groups) == 1 and view.shown_groups[0].isVisible()
    assert view.grid.count() == 1  # the second group is gone, not shown stale


def test_switching_models_switches_the_page(qtbot, bert, gpt):
    panel = make_panel(qtbot, bert, text="the [MASK] says moo")
    panel.state.set_result(bert.run("the [MASK] says moo"))
    assert panel.pages.currentWidget() is panel.mask_view and len(panel.mask_view.shown_groups) == 1
    panel.state.set_bundle(small_bundle())  # the paper's encoder-decoder (reverse task)
    panel.state.set_input("attention")
    assert panel.pages.currentWidget() is panel.decode_page
    assert panel.run is not None and panel.run.n_prompt == 0 and panel.mask_view.shown_groups == []
    box = panel.controls.strategy
    assert box.itemText(box.findData("target")) == "Follow the target"
    panel.state.set_bundle(gpt)
    panel.state.set_input(PROMPT_TEXT)
    assert panel.pages.currentWidget() is panel.decode_page and panel.run.n_prompt == 2
    assert box.itemText(box.findData("target")) == "Follow the continuation"  # as the input bar names it
    panel.state.set_bundle(bert)
    assert panel.pages.currentWidget() is panel.mask_view and panel.run is None


def test_an_encoder_without_a_mask_head_keeps_the_no_decoder_message(qtbot, bert):
    pretrained = random_bundle("facts", kind="encoder_only", n_decoder_layers=0, d_model=32, n_heads=4, d_ff=64)
    pretrained.task = dict(pretrained.task, pretrained=True)  # e.g. MiniLM: its output layer is no MLM head
    assert not pretrained.fills_masks
    panel = make_panel(qtbot, pretrained, text="the cow says moo")
    assert panel.pages.currentWidget() is panel.decode_page
    assert "no decoder" in panel.banner.text() and panel.run is None


def test_mask_view_alone_without_a_result_shows_the_hint(qtbot):
    view = MaskPredictionsView()
    qtbot.addWidget(view)
    view.set_mask_token("[MASK]", "a [MASK] lives in the pond")
    view.set_result(None)
    view.show()
    assert view.hint.isVisible() and "a [MASK] lives in the pond" in view.hint.text()


def test_a_decoder_only_model_has_no_cross_attention_tab_when_narrow(qtbot, gpt):
    from explorer.screen import ScreenClass
    panel = make_panel(qtbot, gpt)
    panel.apply_screen_class(ScreenClass.NARROW)
    panel.set_side_by_side(False)
    tabs = panel.tabs
    shown = [tabs.tabText(i) for i in range(tabs.count()) if tabs.isTabVisible(i)]
    assert shown == ["Mask", "Self-attention", "Next token", "Masked vs. unmasked", "Beam tree"]
    panel.apply_screen_class(ScreenClass.PROJECTOR)  # the self | cross page, left with self: named after it
    shown = [tabs.tabText(i) for i in range(tabs.count()) if tabs.isTabVisible(i)]
    assert shown == ["Self-attention", "Mask | next token", "Masked vs. unmasked", "Beam tree"]
    panel.apply_screen_class(ScreenClass.WIDE)
    assert not panel.cross_map.isVisibleTo(panel) and panel.self_map.isVisibleTo(panel)


def test_the_step_pages_hold_only_the_maps_the_model_has(qtbot, gpt):
    """No empty slot: every step view a page holds is drawn; a decoder-only model's pages hold no
    cross map from the moment it is loaded, and its self map, alone, takes the cross map's room."""
    from PySide6.QtWidgets import QApplication

    from explorer.screen import ScreenClass

    def in_pages(view) -> bool:
        return any(page.isAncestorOf(view) and not view.isHidden() for page, _keys in panel.views.step_pages)

    def settled_width(view) -> int:
        for _ in range(3):
            QApplication.processEvents()
        return view.width()

    panel = make_panel(qtbot, small_bundle(), text="abc")  # encoder-decoder: self and cross maps
    panel.set_side_by_side(False)
    panel.apply_screen_class(ScreenClass.PROJECTOR)
    with_cross = settled_width(panel.self_map)
    assert in_pages(panel.cross_map)
    panel.state.set_bundle(gpt)  # no input run on it yet
    assert not in_pages(panel.cross_map)
    panel.state.set_input(PROMPT_TEXT)
    assert panel.run is not None
    drawn = {"mask": panel.mask_map.matrix.size, "self": panel.self_map.matrix.size, "bars": len(panel.bars.token_ids)}
    views = {"mask": panel.mask_map, "self": panel.self_map, "cross": panel.cross_map, "bars": panel.bars}
    for cls in ScreenClass:
        for side_by_side in (False, True):
            panel.apply_screen_class(cls)
            panel.set_side_by_side(side_by_side)
            held = {key for key, view in views.items() if in_pages(view)}
            assert held == set(drawn) and all(drawn.values()), (cls, side_by_side, held)
    panel.set_side_by_side(False)
    panel.apply_screen_class(ScreenClass.PROJECTOR)
    panel.tabs.setCurrentWidget(panel.step_page)
    assert settled_width(panel.self_map) > 1.5 * with_cross
