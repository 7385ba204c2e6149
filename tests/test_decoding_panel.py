"""Decoding panel: stepping equals greedy decoding, row t of the parallel pass equals step t,
the mask ablation really shows the future, the bars are the model's probabilities, the beam
tree draws every node, and bad input gives a message. Every reference is computed here
directly from the model, not through the panel's helpers."""
from types import SimpleNamespace

import numpy as np
import pyqtgraph as pg
import pytest
import torch
from PySide6.QtCore import Qt

from explorer.panels.decoding.panel import DecodingPanel
from explorer.runner import Runner
from explorer.state import SessionState
from explorer.theme import colour
from model.data.tasks import get_task
from model.data.tokenizers import BOS_ID, EOS_ID, PAD_ID
from model.inference.beam_tree import best_path
from model.inference.bundle import ModelBundle
from model.inference.decoding import beam_search, greedy_decode, sample_decode
from model.inference.teacher_forcing import parallel_pass
from model.interpret.decode_run import DecodeSettings, compute_run
from model.interpret.decode_texts import MAX_DP

TEXT = "attention"


@pytest.fixture
def bundle(make_model):
    """A small random reverse model whose greedy output varies and can end (biased generator)."""
    src_tok, tgt_tok = get_task("reverse").build_tokenizers()
    model = make_model(seed=3, src_vocab_size=len(src_tok), tgt_vocab_size=len(tgt_tok))
    with torch.no_grad():
        model.generator.bias.copy_(torch.randn(len(tgt_tok), generator=torch.Generator().manual_seed(5)) * 1.5)
    return ModelBundle(model, src_tok, tgt_tok, get_task("reverse").to_dict(), name="reverse (random)")


@pytest.fixture
def panel(qtbot, bundle):
    """A panel decoding off the GUI thread (as in the real window), with a result on display."""
    state = SessionState()
    widget = DecodingPanel(state)
    widget.runner = Runner(state)  # the pipeline off the GUI thread, as in the real window
    qtbot.addWidget(widget)
    widget.resize(1280, 720)
    widget.show()
    state.set_bundle(bundle)
    state.set_input(TEXT)
    qtbot.waitUntil(lambda: widget.run is not None, timeout=20000)
    return widget


def src_of(bundle, text=TEXT):
    return bundle.encode_source(text)[0]


def click(qtbot, button):
    qtbot.mouseClick(button, Qt.LeftButton)


# -- stepping ------------------------------------------------------------------------------------
def test_stepping_reproduces_greedy_decode_token_by_token(qtbot, panel, bundle):
    src = src_of(bundle)
    expected = greedy_decode(bundle.model, src, BOS_ID, EOS_ID, bundle.default_max_output(src.size(1)))[0, 1:].tolist()
    controls = panel.controls.transport
    click(qtbot, controls.first)
    shown, grids = [], []
    while True:
        shown.append(panel.bars.chosen)  # the token drawn as chosen (orange) at this step
        grids.append(panel.mask_map.matrix.shape)
        assert panel.mask_map.matrix.shape == panel.self_map.matrix.shape
        if not controls.next.isEnabled():
            break
        click(qtbot, controls.next)
    assert shown == expected
    assert grids == [(t + 1, t + 1) for t in range(len(expected))]  # the mask grows one row per step
    assert all(np.array_equal(np.tril(np.ones((t + 1, t + 1))), panel.run.steps[t].mask.numpy())
               for t in range(len(expected)))
    click(qtbot, controls.back)
    assert panel.t == len(expected) - 2 and panel.bars.chosen == expected[-2]


def test_play_walks_to_the_end(qtbot, panel):
    transport = panel.controls.transport
    click(qtbot, transport.first)
    transport.timer.setInterval(5)
    click(qtbot, transport.play)
    qtbot.waitUntil(lambda: not transport.timer.isActive(), timeout=5000)
    assert panel.t == len(panel.run.steps) - 1 and transport.play.text() == "Play"


# -- masked vs. unmasked -------------------------------------------------------------------------
def test_row_t_of_the_parallel_pass_equals_step_t(qtbot, panel, bundle):
    src = src_of(bundle)
    tgt_in = [BOS_ID] + panel.run.output_ids[:-1]
    with torch.no_grad():
        reference = bundle.model(src, torch.tensor([tgt_in])).softmax(-1)[0]  # (T, V), one parallel forward
    click(qtbot, panel.controls.transport.first)
    for t in range(len(tgt_in)):
        panel.set_step(t)
        step = panel.run.steps[t]
        torch.testing.assert_close(step.model_probs, reference[t], atol=1e-5, rtol=0)
        text = panel.parallel.equality.text()
        # rows (positions) count from 0, steps from 1
        assert text.startswith(f"Row {t} of the parallel pass = step {t + 1}: {MAX_DP} = ")
        assert float(text.rsplit("= ", 1)[1]) < 1e-5


def test_removing_the_causal_mask_shows_the_future(qtbot, panel, bundle):
    view = panel.parallel
    panel.set_step(2)
    masked_shown = view.heatmap.matrix.copy()
    assert np.all(np.triu(masked_shown, k=1) == 0)  # with the mask: nothing above the diagonal
    masked_text = view.equality.text()
    view.remove_mask.click()
    assert view.remove_mask.isChecked()
    unmasked_shown = view.heatmap.matrix
    assert np.triu(unmasked_shown, k=1).sum() > 0.05 * unmasked_shown.shape[0]  # the future is attended
    assert not np.allclose(unmasked_shown, masked_shown)
    assert view.equality.text() != masked_text and "Without the mask" in view.equality.text()
    # the shown matrix is the model's own unmasked attention, and the "no mask" predictions its argmax
    src = src_of(bundle)
    tgt = torch.tensor([panel.run.masked.tgt_in])
    from model.nn.hooks import record
    with torch.no_grad(), record(bundle.model) as trace:
        logits = bundle.model(src, tgt, causal=False)[0]
    att = trace.attention("decoder_self", panel.layer)[0, panel.state.head].numpy()
    np.testing.assert_allclose(unmasked_shown, att, atol=1e-6)
    logits[:, [BOS_ID, PAD_ID]] = float("-inf")
    no_mask_row = [view.table.item(c, 2).text() for c in range(view.table.rowCount())]
    expected = [bundle.tgt_tokenizer.vocab[i] for i in logits.argmax(-1).tolist()]
    assert no_mask_row == expected
    view.remove_mask.click()
    np.testing.assert_array_equal(view.heatmap.matrix, masked_shown)


def test_parallel_pass_without_the_mask_attends_the_future(make_model):
    src_tok, tgt_tok = get_task("reverse").build_tokenizers()
    model = make_model(seed=0, src_vocab_size=len(src_tok), tgt_vocab_size=len(tgt_tok), n_decoder_layers=1)
    src = torch.tensor([src_tok.encode("fedcba").ids])
    tgt_in = [BOS_ID] + tgt_tok.encode("abcdef").ids
    masked = parallel_pass(model, src, tgt_in, causal=True)
    unmasked = parallel_pass(model, src, tgt_in, causal=False)
    assert torch.all(masked.self_attention.triu(diagonal=1) == 0)
    assert torch.all(unmasked.future_mass(0, 0)[:-1] > 0)  # every row but the last has a future
    assert unmasked.future_mass(0, 0)[-1] == 0
    # The last position sees the whole sequence either way: in a one-layer model it is unchanged.
    torch.testing.assert_close(masked.probs[-1], unmasked.probs[-1], atol=1e-5, rtol=0)
    assert not torch.allclose(masked.probs[0], unmasked.probs[0], atol=1e-4)


def test_a_typed_target_is_followed_step_by_step(qtbot, panel, bundle):
    panel.state.set_input(TEXT, "noitnetta")
    qtbot.waitUntil(lambda: panel.run is not None and panel.run.settings.strategy == "target", timeout=20000)
    target = bundle.tgt_tokenizer.encode("noitnetta").ids + [EOS_ID]
    assert panel.controls.settings().strategy == "target"
    assert panel.run.output_ids == target and panel.bars.chosen == EOS_ID
    src = src_of(bundle)
    with torch.no_grad():
        reference = bundle.model(src, torch.tensor([[BOS_ID] + target[:-1]])).softmax(-1)[0]
    for t, step in enumerate(panel.run.steps):
        torch.testing.assert_close(step.model_probs, reference[t], atol=1e-5, rtol=0)
    panel.state.set_input(TEXT, None)
    qtbot.waitUntil(lambda: panel.run is not None and panel.run.settings.strategy == "greedy", timeout=20000)


# -- the next-token bars ---------------------------------------------------------------------------
def test_topk_bars_are_the_models_softmax(qtbot, panel, bundle):
    src = src_of(bundle)
    ids = panel.run.output_ids
    for t in (0, len(ids) // 2, len(ids) - 1):
        panel.set_step(t)
        prefix = torch.tensor([[BOS_ID] + ids[:t]])
        with torch.no_grad():
            probs = bundle.model(src, prefix)[0, -1].softmax(-1)  # the model's own logits → softmax
        k = panel.bars.k
        top = probs.topk(k)
        drawn = np.asarray(panel.bars.bars.opts["width"], dtype=np.float64)[:k]  # (horizontal bars)
        np.testing.assert_allclose(drawn, top.values.numpy(), atol=1e-5)
        assert panel.bars.token_ids[:k] == top.indices.tolist() or np.allclose(
            probs[panel.bars.token_ids[:k]].numpy(), top.values.numpy(), atol=1e-6)  # ties may swap order
        assert panel.bars.chosen == ids[t]
        colours = [pg.mkBrush(b).color().name() for b in panel.bars.bars.opts["brushes"]]
        assert [c == colour("chosen").name() for c in colours] == [i == ids[t] for i in panel.bars.token_ids[:len(colours)]]


def test_sampling_with_a_seed_matches_sample_decode(qtbot, panel, bundle):
    controls = panel.controls
    controls.temperature.setValue(1.5)
    controls.top_k.setValue(5)
    controls.seed.setValue(7)
    controls.set_strategy("sample")
    qtbot.waitUntil(lambda: panel.run is not None and panel.run.settings.strategy == "sample"
                    and panel.run.settings.seed == 7 and panel.run.settings.top_k == 5, timeout=20000)
    src = src_of(bundle)
    gen = torch.Generator().manual_seed(7)
    ref = sample_decode(bundle.model, src, BOS_ID, EOS_ID, bundle.default_max_output(src.size(1)),
                        temperature=1.5, top_k=5, generator=gen)[0, 1:].tolist()
    ref = ref[: ref.index(EOS_ID) + 1] if EOS_ID in ref else ref
    assert panel.run.output_ids == ref
    assert panel.bars.outlines.isVisible()  # the filtered distribution (dashed) is drawn over the model's


# -- beam search -------------------------------------------------------------------------------------
def test_beam_tree_draws_every_node_and_greys_the_pruned(qtbot, panel, bundle):
    panel.controls.beam_size.setValue(3)
    panel.controls.set_strategy("beam")
    qtbot.waitUntil(lambda: panel.run is not None and panel.run.beam is not None
                    and panel.run.settings.beam_size == 3, timeout=20000)
    src = src_of(bundle)
    ref = beam_search(bundle.model, src, BOS_ID, EOS_ID, bundle.default_max_output(src.size(1)), 3, 0.6)
    view = panel.beam_view
    assert len(view.scatter.data) == len(ref.nodes) == len(panel.run.beam.nodes)
    assert panel.run.beam.tokens == ref.tokens
    brushes = [b.color().name() for b in view.scatter.data["brush"]]
    best = best_path(panel.run.beam)
    pruned = [n.id for n in panel.run.beam.nodes if n.pruned]
    assert pruned, "a beam of 3 over a 30-token vocabulary always prunes"
    assert all(brushes[i] == colour("beam_pruned").name() for i in pruned if i not in best)
    assert all(brushes[i] != colour("beam_pruned").name() for i in range(len(brushes)) if i not in pruned)
    # the step-by-step view follows the best hypothesis
    assert [BOS_ID] + panel.run.output_ids == ref.tokens
    assert panel.tabs.currentIndex() == 1


# -- input problems and threading -------------------------------------------------------------------
def test_bad_and_empty_input_give_a_message_not_a_crash(qtbot, panel):
    state = panel.state
    good = panel.run
    state.set_input("")
    qtbot.waitUntil(lambda: panel.banner.isVisible(), timeout=5000)
    assert "empty" in panel.banner.text() and "Still showing 'attention'" in panel.banner.text()
    assert panel.run is good  # nothing lost: the last good run stays on screen
    state.set_input("12345")  # the reverse task knows only lowercase letters
    qtbot.waitUntil(lambda: "knows none" in panel.banner.text(), timeout=20000)
    assert panel.run is good and panel.bars.token_ids
    state.set_input("x" * 500)
    qtbot.waitUntil(lambda: "at most" in panel.banner.text(), timeout=20000)
    state.set_input("transformer")
    qtbot.waitUntil(lambda: panel.run is not good, timeout=20000)
    assert panel.run.source_text == "transformer" and not panel.banner.isVisible()


def test_bad_input_without_a_previous_run_clears_the_views(qtbot, bundle):
    state = SessionState()
    widget = DecodingPanel(state)
    widget.runner = Runner(state, synchronous=True)
    qtbot.addWidget(widget)
    state.set_bundle(bundle)
    state.set_input("12345")
    widget.runner.wait()
    assert "knows none" in widget.banner.text() and widget.run is None and widget.bars.token_ids == []
    click(qtbot, widget.controls.transport.next)  # stepping with nothing to show does nothing


def test_no_model_and_encoder_only_models_explain_themselves(qtbot, make_model):
    state = SessionState()
    widget = DecodingPanel(state)
    widget.runner = Runner(state, synchronous=True)
    qtbot.addWidget(widget)
    assert "Load a model" in widget.banner.text()
    src_tok, tgt_tok = get_task("reverse").build_tokenizers()
    model = make_model(src_vocab_size=len(src_tok), tgt_vocab_size=len(tgt_tok), kind="encoder_only")
    state.set_bundle(ModelBundle(model, src_tok, tgt_tok))
    state.set_input(TEXT)
    widget.runner.wait()
    assert "no decoder" in widget.banner.text() and widget.run is None


def test_decoding_runs_off_the_gui_thread_and_headless_is_synchronous(qtbot, bundle):
    state = SessionState()
    widget = DecodingPanel(state)
    widget.runner = Runner(state, synchronous=True)
    qtbot.addWidget(widget)
    state.set_bundle(bundle)
    state.set_input(TEXT)
    assert widget.run is not None and widget.t == len(widget.run.steps) - 1
    widget.runner.job.synchronous = False
    state.set_input("transformer")
    assert widget.run.source_text == TEXT  # not computed on this thread
    assert widget.runner.wait(20000) and widget.run.source_text == "transformer"


def test_compute_run_is_exact_and_qt_free_in_its_inputs(bundle):
    run = compute_run(bundle, TEXT, DecodeSettings())
    assert run.masked.tgt_in == [BOS_ID] + run.output_ids[:-1]
    assert max(run.difference(t) for t in range(len(run.steps))) < 1e-5
    assert max(run.difference(t, causal=False) for t in range(len(run.steps))) > 1e-3


PALETTE = SimpleNamespace(**dict.fromkeys(("prompt", "muted", "source_bg", "source_text", "prompt_fill", "prompt_text",
                                           "chip_bg", "chip_text"), "#123456"))  # any colours: the chips are Qt-free


def test_a_long_prefix_keeps_its_newest_chips_and_counts_the_rest():
    from model.interpret.token_chips import prefix_chips
    prefix = ["<bos>"] + list("zyxwvutsrqponmlkjihgfedcba")
    keep = 10
    html = prefix_chips(prefix, 0, PALETTE, keep_last=keep)
    assert "… 16 earlier" in html and "&lt;bos&gt;" in html
    shown = [p for p in prefix[1:] if f"&nbsp;{p}&nbsp;" in html]
    assert shown == prefix[-10:]  # the newest ten, in order; the query (last) among them
    assert "earlier" not in prefix_chips(prefix, 0, PALETTE, keep_last=len(prefix))  # room for all: nothing hidden


def test_a_folded_prompt_is_counted_as_prompt_not_called_the_prompt_of_generated_tokens():
    """"prompt: … 4 earlier" labelled two generated words as the prompt (gpt-facts, "the duck",
    on a 1024-px beamer): the hidden prompt tokens are counted apart, and "prompt:" stands only
    before a prompt token on screen."""
    from model.interpret.token_chips import prefix_chips
    from support import plain_text
    prefix = ["<bos>", "the", "duck", "says", "quack", "and", "is", "white"]
    folded = plain_text(prefix_chips(prefix, 2, PALETTE, keep_last=3))  # "and is white" shown
    assert "… 2 prompt + 2 earlier" in folded.replace("\xa0", " ") and "prompt:" not in folded
    partly = plain_text(prefix_chips(prefix, 2, PALETTE, keep_last=6))  # "duck" and on shown: one prompt token hidden
    assert "… 1 prompt" in partly.replace("\xa0", " ") and "prompt:" in partly and "earlier" not in partly
    whole = plain_text(prefix_chips(prefix, 2, PALETTE))
    assert "prompt:" in whole and "…" not in whole


def test_sharpest_selects_the_head_that_aligns_most_clearly(qtbot, panel, bundle):
    """"Sharpest": the cross-attention head whose rows each sit on one source token, different
    tokens for different rows — computed here from a parallel pass of our own."""
    assert panel.controls.sharpest.isEnabled()
    run = panel.run
    ref = parallel_pass(bundle.model, src_of(bundle), [BOS_ID] + run.output_ids[:-1], causal=True)
    cross = ref.cross_attention.numpy()  # (L, h, T, S)
    rows, keys = cross.shape[-2:]
    score = np.array([[cross[i, j].max(-1).mean() * len(set(cross[i, j].argmax(-1).tolist())) / min(rows, keys)
                       for j in range(cross.shape[1])] for i in range(cross.shape[0])])
    want = np.unravel_index(np.argmax(score), score.shape)
    assert want != (0, 0) and (panel.state.layer, panel.state.head) == (0, 0)  # the click must move it
    click(qtbot, panel.controls.sharpest)
    assert (panel.state.kind, panel.state.layer, panel.state.head) == ("cross", *want)
    assert (panel.controls.layer.currentIndex(), panel.controls.head.currentIndex()) == want
    assert panel.cross_map.title.text() == f"Cross L{want[0] + 1} H{want[1] + 1}"


# -- the layout each screen class declares --------------------------------------------------------
def test_each_screen_class_declares_where_the_plots_go(panel, qtbot):
    """NARROW: one tab a plot; PROJECTOR: two tabs of two plots side by side (the two attention
    maps together, then the mask and the bars), each as tall as the tab; WIDE: one page, the
    maps in one row. Folded, the step's tabs come first among the parallel pass's and the beam's."""
    from explorer.screen import ScreenClass
    views = panel.views
    everything = {"mask": panel.mask_map, "self": panel.self_map, "cross": panel.cross_map, "bars": panel.bars}
    panel.set_side_by_side(False)
    panel.apply_screen_class(ScreenClass.NARROW)
    assert [panel.tabs.widget(i).isAncestorOf(w) for i, w in enumerate(everything.values())] == [True] * 4
    assert [panel.tabs.tabText(i) for i in range(4, 6)] == ["Masked vs. unmasked", "Beam tree"]
    panel.tabs.setCurrentIndex(3)  # the next-token tab: the bars shown, no map
    assert panel.bars.isVisibleTo(panel) and not panel.self_map.isVisibleTo(panel)
    assert panel.state.session.view("decoding") == "steps"  # a step's tab is the steps' view
    panel.tabs.setCurrentIndex(5)
    assert panel.state.session.view("decoding") == "beam"
    panel.state.set_view("decoding", "steps")
    panel.set_side_by_side(True)
    panel.apply_screen_class(ScreenClass.PROJECTOR)
    steps = views.step_tabs
    assert steps.count() == 2 and panel.tabs.count() == 2 and steps.isVisibleTo(panel)
    pages = [[w for w in everything.values() if steps.widget(i).isAncestorOf(w)] for i in range(2)]
    assert pages == [[panel.self_map, panel.cross_map], [panel.mask_map, panel.bars]]
    assert panel.tabs.currentWidget() is panel.parallel  # beside the steps: the parallel pass
    steps.setCurrentIndex(0)
    qtbot.waitUntil(lambda: panel.self_map.isVisible() and panel.self_map.height() > 1, timeout=3000)
    self_box, cross_box = panel.self_map.geometry(), panel.cross_map.geometry()
    assert self_box.top() == cross_box.top() and self_box.right() < cross_box.left()  # side by side
    assert self_box.height() == steps.widget(0).widget().height()  # the tab's whole height
    panel.apply_screen_class(ScreenClass.WIDE)
    assert steps.count() == 1 and all(w.isVisibleTo(panel) for w in everything.values())
    tops = {k: w.mapTo(panel, w.rect().topLeft()).y() for k, w in everything.items()}
    assert tops["mask"] == tops["self"] == tops["cross"] < tops["bars"]  # maps in a row


def test_the_parallel_table_keeps_the_steps_position_in_sight(qtbot, panel):
    """A row per position, scrolled so the step's row is whole in the table's view, first and last step alike."""
    from PySide6.QtWidgets import QApplication
    panel.state.set_view("decoding", "parallel")
    panel.resize(900, 420)
    view = panel.parallel
    assert view.table.rowCount() == len(panel.run.masked.predicted)
    for t in (len(panel.run.steps) - 1, 0):
        panel.set_step(t)
        for _ in range(3):
            QApplication.processEvents()
        box = view.table.visualItemRect(view.table.item(panel.run.row(t), 0))
        assert view.table.viewport().rect().contains(box), (t, box)
