"""Lecture legibility: every token label drawn at 1280×720, square query × key cells, one
numbering (from 1), one colour-scale rule (0–1), the masked key only where something is
masked, a guided first screen and a tour with its own controls. Measured, not pixel-compared."""
from __future__ import annotations

import os
import re
from contextlib import contextmanager

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import QPointF  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from support import make_main_window, plain_text  # noqa: E402

LONG = "abcdefghijklmnopqrstuvwx"  # 24 letters: 24 source tokens for the reverse model


def settle(qtbot, ms: int = 60) -> None:
    for _ in range(3):
        QApplication.processEvents()
        qtbot.wait(ms // 3)


@contextmanager
def presenting_window(qtbot, tmp_path, size, theme: str, bundle, text: str):
    """A main window presenting at `size` (its stylesheet set first, as the app starts) on
    `bundle` and `text`; presentation left and the light theme back afterwards."""
    from explorer import presentation
    presentation.apply_theme(QApplication.instance(), theme)
    w = make_main_window(qtbot, tmp_path, size=size)
    w.lecture.presentation.enter(full_screen=False)
    try:
        w.resize(*size)
        w.runner.set_bundle(bundle, then_run=text)
        qtbot.waitUntil(lambda: w.state.frame is not None and w.state.frame.source == text, timeout=20_000)
        settle(qtbot)
        yield w
    finally:
        w.lecture.presentation.leave()
        # the panels' own workers (attribution's flows, on the global pool; its refresh waits for
        # the queued events) end before the application re-polishes every widget: one still
        # running into a re-polish crashed it
        from PySide6.QtCore import QThreadPool
        QApplication.processEvents()
        QThreadPool.globalInstance().waitForDone(30_000)
        presentation.apply_theme(QApplication.instance(), "light")


def drawn_labels(axis) -> list[str]:
    """The labels an axis draws now (its picture regenerated, as a paint would)."""
    axis.picture = None
    from PySide6.QtGui import QImage, QPainter
    image = QImage(4, 4, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return axis.shown()


def cell_px(plot_item) -> tuple[float, float]:
    vb = plot_item.vb if hasattr(plot_item, "vb") else plot_item.getViewBox()
    a, b = vb.mapViewToScene(QPointF(0, 0)), vb.mapViewToScene(QPointF(1, 1))
    return abs(b.x() - a.x()), abs(b.y() - a.y())


@pytest.fixture
def window(qtbot, tmp_path):
    w = make_main_window(qtbot, tmp_path, size=(1280, 720))
    w.runner.run(LONG)
    # the frame is computed on a worker thread: on a loaded machine it takes more than a settle
    qtbot.waitUntil(lambda: w.state.frame is not None and w.state.frame.source == LONG, timeout=20_000)
    settle(qtbot)
    return w


def test_stepper_names_the_24_tokens_in_square_cells(window, qtbot):
    window.focus_panel("step")
    assert window.state.select_step_named("encoder.layers.0.self_attn.weights")
    settle(qtbot, 150)
    view = window.panels["step"].view
    pieces = window.state.axis_labels("src")
    assert len(pieces) >= 24
    for axis in (view.bottom, view.left):  # every token named, or every k-th of them
        drawn = drawn_labels(axis)
        step = pieces.index(drawn[1]) - pieces.index(drawn[0]) if len(drawn) > 1 else 1
        assert drawn == pieces[::step][:len(drawn)] and len(drawn) >= len(pieces) // step - 1
    w, h = cell_px(view.plot)
    assert abs(w - h) <= 1
    assert view.colorbar.levels() == (0.0, 1.0)



def test_single_head_view_labels_its_24_tokens_in_square_cells_on_0_to_1(window, qtbot):
    window.focus_panel("attention")
    panel = window.panels["attention"]
    panel.set_view("single")
    window.state.select_attention("encoder", 1, 2)
    settle(qtbot, 150)
    heatmap = panel.single.heatmap
    pieces = window.state.axis_labels("src")
    assert heatmap.rows_axis.tokens == heatmap.cols_axis.tokens == pieces
    qtbot.wait(50)  # (the count is shown after the paint that drew the labels)
    counts = heatmap.label_counts()  # every label at the readable size, or the map says how many
    assert all(total == len(pieces) for _drawn, total in counts)
    if any(drawn < total for drawn, total in counts):
        drawn, total = min(counts)
        assert heatmap.count_text() == f"{drawn} of {total} labels" and heatmap.count.text() == f"{drawn}/{total}"
    w, h = cell_px(heatmap.plot)
    assert abs(w - h) <= 1
    assert tuple(heatmap.image.levels) == (0.0, 1.0) and tuple(panel.single.colorbar.levels()) == (0.0, 1.0)
    assert "0–1" in panel.single.colorbar.axis.labelText
    # one numbering: index 1 is read "layer 2", index 2 "head 3", in the title and the combo boxes
    assert "layer 2, head 3" in heatmap.title.text()
    assert panel.layer_box.currentText() == "2" and panel.head_box.currentText() == "3"
    assert not panel.mask_legend.isVisible()  # encoder self-attention: nothing is masked


def test_grid_labels_its_selected_head_and_the_masked_key_follows_the_mask(window, qtbot):
    window.focus_panel("attention")
    panel = window.panels["attention"]
    panel.set_view("grid")
    window.state.select_attention("encoder", 0, 1)
    settle(qtbot, 150)
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


def test_decoding_map_draws_every_label_or_says_how_many_in_square_cells(qtbot, tmp_path):
    w = make_main_window(qtbot, tmp_path, size=(1280, 720))
    text = "abcdefghijklmnopqrstuvw"  # followed as a target: 23 letters + <eos> = a 24-token frame
    w.runner.run(text, text[::-1])  # (an untrained model's own output may end at any length)
    settle(qtbot)
    w.focus_panel("decoding")
    panel = w.panels["decoding"]
    settle(qtbot, 200)
    heatmap = panel.self_map
    assert heatmap.isVisible()  # (it checked a hidden tab's map at Qt's default 640 × 480 before)
    assert heatmap.rows_axis.tokens and len(heatmap.rows_axis.tokens) >= 24
    qtbot.wait(50)  # (the count is shown after the paint that drew the labels)
    counts = heatmap.label_counts()  # every label, or the map says how many it shows
    if any(drawn < total for drawn, total in counts):
        drawn, total = min(counts, key=lambda c: c[0] / c[1])
        assert heatmap.count_text() == f"{drawn} of {total} labels" and heatmap.count.text() == f"{drawn}/{total}"
    cw, ch = cell_px(heatmap.plot)
    assert abs(cw - ch) <= 1


def test_input_bar_echo_is_shortened_with_a_count_and_the_output_is_plain(window, qtbot):
    bar = window.input_bar
    bar.source.setText("abcdefghijklmnopqrstuvwxyz" * 3)  # 78 tokens: more than the line holds at 1280
    settle(qtbot)
    plain = plain_text(bar.echo.text())
    assert "more" in plain and "78" in plain  # shortened, saying how many
    assert bar.echo.fontMetrics().horizontalAdvance(plain) <= bar.echo.width()  # never runs into "Output:"
    from explorer import style
    assert style.OK.name() not in bar.status.text()  # nobody checked the output: not "success" green
    assert "Output" in bar.status.text()


def test_a_narrow_echo_shows_what_fits_never_a_count_of_nothing(window, qtbot):
    """A 1024-px projector gave the echo ~330 px: "2/62 tokens: … +2 more" named no token of two.
    All the tokens that fit are named; when none fits, the count stands alone."""
    bar = window.input_bar
    bar._share_pair = lambda: None  # the echo's width is this test's (the row would share it out)
    bar.echo.setFixedWidth(330)
    try:
        for text, whole in (("ab", True), ("abcdefghijklmnop" * 2, False)):
            bar.source.setText(text)
            settle(qtbot)
            plain = plain_text(bar.echo.text())
            assert bar.echo.fontMetrics().horizontalAdvance(plain) <= bar.echo.width()
            if whole:  # the tokens on alternating tints, not spaced out: "ab" read as two tokens
                assert plain.endswith(": ab") and "more" not in plain, plain
                from explorer import theme
                tints = re.findall(r"background-color:(#[0-9a-f]{6})", bar.echo.text())
                assert tints == [theme.current().token_a, theme.current().token_b], bar.echo.text()
            else:  # far below the model's limit of 64: the count alone, the tooltip names the limit
                head, _, tail = plain.partition(": ")
                assert head == "32 tokens" and "64" in bar.echo.toolTip(), plain
                assert not tail or (tail[0] == "a" and "more" in tail), plain
        bar.echo.setFixedWidth(170)  # the count alone
        settle(qtbot)
        assert plain_text(bar.echo.text()).strip().endswith("tokens"), bar.echo.text()
    finally:
        bar.echo.setMinimumWidth(0)
        bar.echo.setMaximumWidth(16777215)


def test_the_echo_gives_its_tokens_back_when_a_shown_model_goes(window, qtbot):
    """During a run "Showing: training run, step N" and its Back button narrow the echo; once
    they go, the echo names as many tokens as before (it stayed "… +9 more" after a run)."""
    from explorer.session import ShownModel

    def echoed() -> str:
        return plain_text(window.input_bar.echo.text())

    bar = window.input_bar
    bar.source.setText("abcdefghijklmnopqrstuvwxyz" + "abcdefghijklmn")  # 40 tokens: more than fit beside it
    settle(qtbot)
    before = echoed()
    assert len(before.partition(": ")[2]) > 10  # a line of tokens at 1280 px
    session = window.state.session
    from model.io.checkpoints import random_bundle
    session.show_model(ShownModel(random_bundle("reverse"), "training run, step 1,234"))
    qtbot.waitUntil(bar.shown_label.isVisible, timeout=20_000)
    settle(qtbot)
    narrow = echoed()
    assert len(narrow) < len(before)  # fewer tokens beside the shown model's name
    assert bar.echo.fontMetrics().horizontalAdvance(narrow) <= bar.echo.width()
    session.show_model(None)
    qtbot.waitUntil(lambda: not bar.shown_label.isVisible(), timeout=20_000)
    settle(qtbot)
    assert echoed() == before


def test_a_long_output_ends_in_an_ellipsis_inside_the_line(qtbot, tmp_path):
    """An untrained model's 32-letter babble on a 1024×768 projector ran off the window's edge:
    the top bar shows as much as fits, ending in "…", the tooltip holds all of it, and a wider
    window shows more of it again."""
    import torch
    from explorer.input_bar import rich_text_width
    from model.io.checkpoints import random_bundle

    torch.manual_seed(1)  # an untrained model that babbles to the decoding limit
    with presenting_window(qtbot, tmp_path, (1024, 768), "light", random_bundle("reverse"),
                           "abcdefghijklmnopqrstuvwx") as w:
        status, out = w.input_bar.status, w.state.result.output_text
        assert len(out) >= 30  # long babble (else this test shows nothing)
        assert rich_text_width(status.text(), status.font()) <= status.contentsRect().width()
        shown = plain_text(status.text())
        # whole (the echo and the examples gave way: the output comes first), or its start and "…"
        assert shown == f"Output: {out}" or (shown.endswith("…") and shown.startswith("Output: ")
                                              and out.startswith(shown[len("Output: "):-1]))
        assert status.toolTip() == out or shown == f"Output: {out}"  # cut: the tooltip holds it all
        w.resize(1900, 768)
        settle(qtbot)
        wider = plain_text(status.text())
        assert len(wider) > len(shown) or wider == f"Output: {out}"
        assert rich_text_width(status.text(), status.font()) <= status.contentsRect().width()


def test_a_filled_in_sentence_ends_in_an_ellipsis_inside_the_line(qtbot, tmp_path):
    """bert-facts in the tour at 1280×720: "Filled (2 masks): the cow says moo and lives in" ran
    under the panel chooser, cut mid-sentence. The filled sentence fits its line, ending in "…"
    where it is cut, and the tooltip holds it whole with each blank's candidates."""
    from explorer.input_bar import rich_text_width
    from explorer.runner import load_bundle

    text = "the [MASK] says moo and lives in the [MASK] ."
    with presenting_window(qtbot, tmp_path, (1280, 720), "light", load_bundle("bert-facts"), text) as w:
        status = w.input_bar.status
        shown = plain_text(status.text())
        assert rich_text_width(status.text(), status.font()) <= status.contentsRect().width()
        whole = "Filled (2 masks): the cow says moo and lives in the barn ."
        assert shown == whole or (shown.endswith("…") and whole.startswith(shown[:-1].rstrip())), shown
        if shown != whole:
            assert status.toolTip().startswith(whole) and "position 1: cow" in status.toolTip()


def test_unknown_words_are_flagged_in_the_echo_even_when_the_line_is_short(qtbot, tmp_path):
    """The translation model at 1280×720 presenting: "unknown: mat on sat → <unk>" ran into
    "Output:". The echo says how many are unknown (in the theme's error colour), the tooltip
    names them, and the line fits."""
    from explorer import style
    from explorer.runner import load_bundle

    with presenting_window(qtbot, tmp_path, (1280, 720), "dark", load_bundle("translation"),
                           "the cat sat on the mat") as w:
        echo = w.input_bar.echo
        plain = plain_text(echo.text())
        assert "unknown" in plain and echo.fontMetrics().horizontalAdvance(plain) <= echo.width(), plain
        assert "mat" in echo.toolTip() and "sat" in echo.toolTip()
        w.lecture.set_theme("light")
        settle(qtbot)
        assert style.ERROR.name() in echo.text()  # redrawn in the new theme's red


@pytest.mark.parametrize("size", [(1024, 768), (1280, 720)])
def test_the_target_hint_is_whole_or_absent(qtbot, tmp_path, size):
    """"optional" in the Target field, or nothing: a 1024-px beamer showed "opti…"."""
    from explorer.runner import load_bundle
    with presenting_window(qtbot, tmp_path, size, "light", load_bundle("reverse"), "attention") as w:
        field = w.input_bar.target
        hint = field.placeholderText()
        assert hint in ("", "optional")
        room = field.contentsRect().width() - field.textMargins().left() - field.textMargins().right()
        if hint:
            assert field.fontMetrics().horizontalAdvance(hint) <= room - 8, (hint, room)
        else:  # (and it really would not fit whole)
            assert field.fontMetrics().horizontalAdvance("optional") > room - 12
        assert "target" in field.toolTip().lower()  # what the field is for, hint or not
        w.lecture.presentation.leave()
        w.resize(1920, 1080)
        settle(qtbot)
        assert field.placeholderText() == "optional"  # room again: the hint is back


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
    assert "The paper, section by section" in help_texts and "Start the tour" in help_texts
    from explorer.lecture import PAPER_HELP
    assert all(f"§{s}" in PAPER_HELP for s in ("3.1", "3.2", "3.3", "3.4", "3.5", "5"))


def test_tour_caption_bar_exit_and_scene_controls(qtbot, tmp_path):
    from PySide6.QtGui import QFontInfo
    w = make_main_window(qtbot, tmp_path, size=(1280, 720))
    lecture = w.lecture
    assert not any(c.isVisible() for c in lecture.tour_controls)  # no tour: no Previous / Next
    lecture.next_scene()  # PageDown with no tour opens the paper tour
    settle(qtbot)
    assert lecture.deck.tour is not None
    assert all(c.isVisible() for c in lecture.tour_controls)
    assert lecture.caption_bar.isVisible() and lecture.caption.text()
    base = QFontInfo(w.font()).pointSizeF()
    assert QFontInfo(lecture.caption.font()).pointSizeF() >= 1.3 * base
    lecture.exit_tour_action.trigger()
    settle(qtbot)
    assert lecture.deck.tour is None
    assert not any(c.isVisible() for c in lecture.tour_controls) and not lecture.caption_bar.isVisible()


def test_a_short_output_leaves_the_rest_of_the_row_to_the_token_echo(window, qtbot):
    """At 1024 px the echo and the output line shared the row half and half: "11/64 tokens: t …
    +10 more" beside "Output: remrofsnart" and empty room. The output line is now no wider than
    its text, and the echo names every token that fits in the rest."""
    from explorer.input_bar import rich_text_width

    bar = window.input_bar
    window.resize(1024, 720)
    window.runner.run("transformer")
    qtbot.waitUntil(lambda: window.state.frame is not None and window.state.frame.source == "transformer",
                    timeout=20_000)
    settle(qtbot)
    need = rich_text_width(bar.status.text(), bar.status.font())
    assert bar.status.width() <= need + 30  # no wider than the output it shows
    assert "…" not in plain_text(bar.status.text())  # and that output whole
    assert "more" not in plain_text(bar.echo.text()), bar.echo.text()  # every one of the 11 tokens named
    bar.show_error("A long message about a refused input that needs all of the row it can get to be read.")
    settle(qtbot)
    # an error line is no longer held to the last output's width: it shares the row with the echo
    assert bar.status.maximumWidth() > need + 100 and bar.status.width() >= bar.echo.width() - 2


@pytest.mark.parametrize("size", [(1024, 768), (1280, 720)])
def test_a_crowded_second_row_gives_way_by_priority_never_cutting_a_word(qtbot, tmp_path, size):
    """Presenting on a 1024-px beamer during a training run, the second row held the examples,
    the echo, "Showing: training run, step N", its Back button, the output, the panel chooser and
    Leave: "Sho" and "Out" were cut mid-word and the window grew to 1202 px. Now the echo gives
    way first, then the examples, then "Back to reverse" says "Back"; nothing is cut, nothing
    widens the window, and all of it comes back when the run is no longer shown."""
    from PySide6.QtCore import QPoint
    from explorer.input_bar import rich_text_width
    from explorer.runner import load_bundle
    from explorer.session import ShownModel
    from model.io.checkpoints import random_bundle
    with presenting_window(qtbot, tmp_path, size, "dark", load_bundle("reverse"), "attention") as w:
        bar, session = w.input_bar, w.state.session
        assert bar.echo.isVisible() and bar.examples.isVisible()
        session.show_model(ShownModel(random_bundle("reverse"), "training run, step 1,234"))
        qtbot.waitUntil(bar.shown_label.isVisible, timeout=20_000)
        settle(qtbot)
        assert w.width() == size[0]  # the row never widens the window
        shown = [x for x in (bar.examples, bar.echo, bar.shown_label, bar.back_button, bar.status, w.lecture.strip)
                 if x.isVisible()]
        for x in shown:  # each inside the bar, none over the next
            left = x.mapTo(bar, QPoint(0, 0)).x()
            assert 0 <= left and left + x.width() <= bar.width(), x
        lefts = sorted((x.mapTo(bar, QPoint(0, 0)).x(), x.width()) for x in shown)
        assert all(a + wa <= b + 1 for (a, wa), (b, _) in zip(lefts, lefts[1:]))
        # what the panels show is said whole, the output at least starts, Back fits its text
        assert rich_text_width(bar.shown_label.text(), bar.shown_label.font()) <= bar.shown_label.width() + 1
        assert plain_text(bar.status.text()).startswith("Output:")
        assert rich_text_width(bar.status.text(), bar.status.font()) <= bar.status.contentsRect().width() + 1
        assert bar.back_button.fontMetrics().horizontalAdvance(bar.back_button.text()) <= bar.back_button.width()
        assert "reverse" in bar.back_button.toolTip()
        if size[0] == 1024:
            assert not bar.echo.isVisible()  # the first to give way
        session.show_model(None)
        qtbot.waitUntil(lambda: not bar.shown_label.isVisible(), timeout=20_000)
        settle(qtbot)
        assert bar.echo.isVisible() and bar.examples.isVisible()


def test_the_second_row_never_holds_the_window_wider_than_asked(qtbot, tmp_path):
    """Its room is given by stretch and maximum widths, never claimed by minimum widths: a window
    presenting at 1280 with a run shown shrinks to 1024 (and refits: the echo goes), an over-long
    input with unknown symbols typed at 1024 does not widen it, and leaving presentation puts the
    window's own size back."""
    from explorer.runner import load_bundle
    from explorer.session import ShownModel
    from model.io.checkpoints import random_bundle
    with presenting_window(qtbot, tmp_path, (1280, 720), "light", load_bundle("reverse"), "attention") as w:
        bar, session = w.input_bar, w.state.session
        session.show_model(ShownModel(random_bundle("reverse"), "training run, step 1,234"))
        qtbot.waitUntil(bar.shown_label.isVisible, timeout=20_000)
        settle(qtbot)
        w.resize(1024, 768)
        settle(qtbot)
        assert w.width() == 1024 and w.minimumSizeHint().width() <= 1024
        assert not bar.echo.isVisible()  # refitted at the new width
        session.show_model(None)
        qtbot.waitUntil(lambda: not bar.shown_label.isVisible(), timeout=20_000)
        bar.source.setText("é€" * 40)  # over the limit and unknown: the echo's note at its longest
        settle(qtbot)
        assert w.width() == 1024 and w.minimumSizeHint().width() <= 1024
        w.resize(800, 600)
        settle(qtbot)
        assert w.width() <= 1024  # (as narrow as its first row allows)
