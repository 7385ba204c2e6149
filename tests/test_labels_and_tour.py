"""What the lecture shows, as behaviour: one numbering (from 1) and one colour-scale rule
(0–1) in the attention views, the masked key only where something is masked, an input echo
that counts what it leaves out and flags unknown words, a guided first screen, and a tour with
its own controls. (Whether each of these fits its screen is the layout sweep's: test_layout.py.)"""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from PySide6.QtWidgets import QApplication

from support import build_main_window, make_main_window, plain_text

LONG = "abcdefghijklmnopqrstuvwx"  # 24 letters: 24 source tokens for the reverse model


def settle(qtbot) -> None:
    for _ in range(3):
        QApplication.processEvents()
        qtbot.wait(5)


@pytest.fixture(scope="module")
def shared(qapp, tmp_path_factory):
    """One 1280×720 window for the tests that only read it or put back what they change."""
    from explorer import style
    from explorer.launch import close_window
    style.apply_app_style(qapp)  # as the app starts (else what fits depends on the tests run before)
    w = build_main_window(tmp_path_factory.mktemp("labels"), size=(1280, 720))
    yield w
    close_window(qapp, w)


@pytest.fixture
def window(shared, qtbot):
    """The shared window reading LONG, the attention panel in front."""
    shared.runner.run(LONG)
    qtbot.waitUntil(lambda: shared.state.frame is not None and shared.state.frame.source == LONG, timeout=20_000)
    settle(qtbot)
    return shared


def test_single_head_view_numbers_from_1_and_scales_0_to_1(window, qtbot):
    window.focus_panel("attention")
    panel = window.panels["attention"]
    panel.set_view("single")
    window.state.select_attention("encoder", 1, 2)
    settle(qtbot)
    heatmap = panel.single
    assert tuple(heatmap.image.levels) == (0.0, 1.0) and tuple(panel.single.bar.levels()) == (0.0, 1.0)
    assert "0–1" in panel.single.bar.axis.labelText
    # one numbering: index 1 is read "layer 2", index 2 "head 3", in the title and the combo boxes
    assert "layer 2, head 3" in heatmap.title.text()
    assert panel.picker.layer_box.currentText() == "2" and panel.picker.head_box.currentText() == "3"
    assert not panel.mask_legend.isVisible()  # encoder self-attention: nothing is masked


def test_the_stepper_scales_attention_weights_0_to_1(window, qtbot):
    window.focus_panel("step")
    assert window.state.select_step_named("encoder.layers.0.self_attn.weights")
    settle(qtbot)
    assert window.panels["step"].view.bar.levels() == (0.0, 1.0)


def test_grid_names_its_selected_head_and_the_masked_key_follows_the_mask(window, qtbot):
    window.focus_panel("attention")
    panel = window.panels["attention"]
    panel.set_view("grid")
    window.state.select_attention("encoder", 0, 1)
    settle(qtbot)
    heatmap = panel.grid.map_of("encoder", 1)
    assert heatmap.title.text() == "L1 H2"
    assert [m.title.text() for m in panel.grid.maps[0]] == [f"L1 H{h + 1}" for h in range(4)]
    assert heatmap.cols_axis.tokens == panel.data.labels["encoder"][1]
    assert not panel.mask_legend.isVisible()
    # a target (teacher forcing) gives the decoder 25 positions whatever this untrained model
    # outputs (with some seeds it stopped at once: a 1 × 1 map, where nothing is masked)
    window.runner.run(LONG, LONG[::-1])
    qtbot.waitUntil(lambda: window.state.frame is not None and window.state.frame.target == LONG[::-1], timeout=20_000)
    window.state.select_attention("decoder_self", 0, 0)
    settle(qtbot)
    assert not panel.data.allowed["decoder_self"].all()
    assert not panel.mask_legend.isHidden()  # the decoder's causal mask: the key is shown
    # the key follows the view on screen, redrawn or not: every kind in the grid (the decoder's
    # masked maps among them), one encoder head alone, the grid again without a redraw
    window.state.select_attention("encoder", 0, 0)
    panel.all_kinds.setChecked(True)
    settle(qtbot)
    assert not panel.mask_legend.isHidden()
    panel.set_view("single")
    settle(qtbot)
    assert panel.mask_legend.isHidden()
    panel.set_view("grid")
    settle(qtbot)
    assert not panel.mask_legend.isHidden()
    panel.all_kinds.setChecked(False)
    panel.set_view("single")


def test_input_bar_echo_counts_what_it_leaves_out_and_the_output_is_plain(window, qtbot):
    from explorer import style
    bar = window.input_bar
    bar.source.setText("abcdefghijklmnopqrstuvwxyz" * 3)  # 78 tokens: more than the line holds at 1280
    settle(qtbot)
    plain = plain_text(bar.echo.shown_text())  # (what is drawn; `text()` is the whole echo)
    assert plain.startswith("78 tokens") and plain.endswith(("more", "…"))  # shortened, saying how many
    limit = window.state.bundle.config.max_len
    assert f"over the limit of {limit}" in plain  # and why the model cannot take it
    assert style.OK.name() not in bar.status.text()  # nobody checked the output: not "success" green
    assert "Output" in bar.status.text()
    bar.source.setText(LONG)


def test_the_echo_gives_its_tokens_back_when_a_shown_model_goes(window, qtbot):
    """During a run "Showing: training run, step N" and its Back button narrow the echo; once
    they go, the echo names as many tokens as before."""
    from explorer.session import ShownModel
    from model.io.checkpoints import random_bundle

    def echoed() -> str:
        return plain_text(window.input_bar.echo.shown_text())

    bar = window.input_bar
    bar.source.setText("abcdefghijklmnopqrstuvwxyz" + "abcdefghijklmn")  # 40 tokens: more than fit beside it
    settle(qtbot)
    qtbot.wait(150)  # the row laid out for the new text before the echo is read
    before = echoed()
    session = window.state.session
    session.show_model(ShownModel(random_bundle("reverse"), "training run, step 1,234"))
    qtbot.waitUntil(bar.shown_label.isVisible, timeout=20_000)
    qtbot.waitUntil(lambda: len(echoed()) < len(before), timeout=3_000)  # fewer tokens beside the shown model's name
    assert "reverse" in bar.back_button.toolTip()
    session.show_model(None)
    qtbot.waitUntil(lambda: not bar.shown_label.isVisible(), timeout=20_000)
    qtbot.waitUntil(lambda: echoed() == before, timeout=3_000)  # (the row is laid out again a moment later)
    bar.source.setText(LONG)


def test_the_echo_width_depends_on_the_row_not_on_the_output_lines_text(window, qtbot):
    """The echo and the output line share their row by its width alone: a long output does not
    take the echo's room (what an earlier test ran must not change what the echo shows)."""
    bar = window.input_bar
    bar.source.setText("abcdefghijklmnopqrstuvwxyz" * 3)
    settle(qtbot)
    widths = []
    for output in ("Output: x", "Output: " + "a much longer output line " * 8):
        bar.status.setText(output)
        settle(qtbot)
        widths.append(bar.echo.width())
    assert widths[0] == widths[1] > 0
    bar.source.setText(LONG)


def test_the_output_line_counts_tokens_in_and_out_as_the_panels_do(window, qtbot):
    """Teacher-forced on a 3-letter target, the character model reads 24 tokens and writes 3;
    the decoder's rows are those 3 after <bos>."""
    window.runner.run(LONG, "cba")
    qtbot.waitUntil(lambda: window.state.frame is not None and window.state.frame.target == "cba", timeout=20_000)
    settle(qtbot)
    assert f"({len(LONG)} in + 3 out)" in plain_text(window.input_bar.status.text())
    assert len(window.state.result.tgt_pieces) == 1 + 3
    window.runner.run(LONG)


def test_presenting_a_lab_names_its_own_model_not_the_sessions(window, qtbot):
    """The mask-leak lab trains its own model: while it alone is presented, the bar names that
    model and hides the session's chooser, fields and output; leaving brings them back."""
    bar, presentation = window.input_bar, window.lecture.presentation
    try:
        presentation.enter(full_screen=False, panel="leak")
        settle(qtbot)
        assert not bar.own_model.isHidden() and "layer" in bar.own_model.text()
        assert all(w.isHidden() for w in (bar.model_combo, bar.source, bar.target, bar.echo, bar.status))
        assert window.panels["leak"].lab_model.isHidden()  # the lab's own row does not say it again
        window.focus_panel("attention")  # a panel of the session's model: its name back
        settle(qtbot)
        assert bar.own_model.isHidden() and not bar.model_combo.isHidden() and not bar.status.isHidden()
    finally:
        presentation.leave()
    settle(qtbot)
    assert bar.own_model.isHidden() and not bar.source.isHidden()
    assert not window.panels["leak"].lab_model.isHidden()  # not presenting: the lab's row names its model


def test_first_screen_hint_and_model_chooser_descriptions(qtbot, tmp_path):
    from explorer.input_bar import FIRST_HINT, InputBar
    from explorer.runner import bundled_checkpoints
    w = make_main_window(qtbot, tmp_path, size=(1280, 720))
    bar: InputBar = w.input_bar
    assert bar.hint.isVisible() and "press Enter" in FIRST_HINT and "PageDown" in FIRST_HINT
    texts = [bar.model_combo.itemText(i) for i in range(bar.model_combo.count())]
    for name in bundled_checkpoints():
        entry = next(t for t in texts if t.startswith(name + " — "))
        assert "(encoder" in entry or "(decoder" in entry
    assert any("reverse a string" in t for t in texts if t.startswith("reverse"))
    bar.run()
    assert not bar.hint.isVisible()
    menus = {m.title().replace("&", ""): m for m in w.menuBar().findChildren(type(w.menuBar().addMenu("x")))}
    help_texts = [a.text().replace("&", "") for a in menus["Help"].actions()]
    assert "The paper, section by section" in help_texts and "Start the paper tour" in help_texts
    from explorer.lecture import PAPER_HELP
    assert all(f"§{s}" in PAPER_HELP for s in ("3.1", "3.2", "3.3", "3.4", "3.5", "5"))

    # the tour: PageDown with no tour opens it, with its own controls and caption; exiting hides them
    lecture = w.lecture
    assert not any(c.isVisible() for c in lecture.tour_controls)  # no tour: no Previous / Next
    lecture.next_scene()
    settle(qtbot)
    assert lecture.deck.tour is not None
    assert all(c.isVisible() for c in lecture.tour_controls)
    assert lecture.caption_bar.isVisible() and lecture.caption.text()
    lecture.exit_tour_action.trigger()
    settle(qtbot)
    assert lecture.deck.tour is None
    assert not any(c.isVisible() for c in lecture.tour_controls) and not lecture.caption_bar.isVisible()


def test_unknown_words_are_flagged_in_the_echo_in_the_themes_colour(shared, qtbot):
    """The translation model on "the cat sat on the mat": the echo says how many words are
    unknown, the tooltip names them, and a theme change redraws it in the new theme's red."""
    from explorer import presentation, style
    from explorer.runner import load_bundle

    w = shared  # (another model: the last tests of this module)
    try:
        w.lecture.set_theme("dark")
        text = "the cat sat on the mat"
        w.runner.set_bundle(load_bundle("translation"), then_run=text)
        qtbot.waitUntil(lambda: w.state.frame is not None and w.state.frame.source == text, timeout=20_000)
        settle(qtbot)
        echo = w.input_bar.echo
        assert "unknown" in plain_text(echo.text())
        assert "mat" in echo.toolTip() and "sat" in echo.toolTip()
        w.lecture.set_theme("light")
        settle(qtbot)
        assert style.ERROR.name() in echo.text()  # redrawn in the new theme's red
    finally:
        presentation.apply_theme(QApplication.instance(), "light")


def test_a_filled_in_sentence_keeps_each_blanks_candidates(shared, qtbot):
    """bert-facts fills both blanks; the top bar starts with the filled sentence and its tooltip
    names each blank's candidates."""
    from explorer.runner import load_bundle

    w = shared
    text = "the [MASK] says moo and lives in the [MASK] ."
    w.runner.set_bundle(load_bundle("bert-facts"), then_run=text)
    qtbot.waitUntil(lambda: w.state.frame is not None and w.state.frame.source == text, timeout=20_000)
    settle(qtbot)
    status = w.input_bar.status
    whole = "Filled (2 masks): the cow says moo and lives in the barn ."
    shown = plain_text(status.shown_text())
    assert shown == whole or (shown.endswith("…") and whole.startswith(shown[:-1].rstrip())), shown
    assert status.toolTip().startswith(whole) or shown == whole
    assert "position 1: cow" in status.toolTip()
