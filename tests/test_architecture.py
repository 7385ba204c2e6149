"""The architecture diagram: drawn from the config, shapes from the trace, clicks select steps."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

from explorer import style  # noqa: E402
from explorer.panels.architecture.panel import ArchitecturePanel  # noqa: E402
from explorer.state import SessionState  # noqa: E402
from support import small_bundle  # noqa: E402

make_bundle = small_bundle


@pytest.fixture
def setup(qtbot):
    bundle = make_bundle()
    state = SessionState()
    panel = ArchitecturePanel(state)
    qtbot.addWidget(panel)
    panel.resize(900, 1000)
    panel.show()
    qtbot.waitExposed(panel)
    state.set_bundle(bundle)
    state.set_result(bundle.run("abcdefg", target="gfedcba"))
    return state, panel, bundle


def click_item(qtbot, panel, item):
    view = panel.view
    view.ensureVisible(item)
    pos = view.mapFromScene(item.sceneBoundingRect().center())
    QTest.mouseClick(view.viewport(), Qt.LeftButton, Qt.NoModifier, pos)


def test_blocks_show_the_traced_shapes(setup):
    state, panel, bundle = setup
    trace = state.trace
    for key, step in [("encoder.layers.0.self_attn", "encoder.layers.0.self_attn.output"),
                      ("decoder.layers.0.cross_attn", "decoder.layers.0.cross_attn.output"),
                      ("encoder.embedding", "encoder.embedding.scaled"),
                      ("encoder.positional", "encoder.positional"),
                      ("generator.probs", "generator.probs")]:
        assert panel.block(key).shape_text == style.format_shape(trace[step].shape)
    assert panel.block("encoder.layers.0.self_attn").shape_text == "(1, 7, 32)"
    assert panel.block("generator.logits").shape_text == f"(1, 8, {bundle.config.tgt_vocab_size})"
    state.set_result(bundle.run("abc", target="cba"))  # a new input: every shape follows
    assert panel.block("encoder.layers.0.self_attn").shape_text == "(1, 3, 32)"
    assert panel.block("decoder.layers.0.self_attn").shape_text == "(1, 4, 32)"


def test_clicking_a_block_selects_its_step(setup, qtbot):
    state, panel, _ = setup
    for key in ("decoder.layers.0.cross_attn", "encoder.layers.0.ffn", "generator.probs", "decoder.input"):
        click_item(qtbot, panel, panel.block(key))
        name = state.current_step.name
        assert name == key or name.startswith(key + "."), (key, name)
        assert panel.highlighted_keys() == [key]


def test_current_step_is_highlighted_and_collapsed_layers_follow_it(setup):
    state, panel, _ = setup
    assert not panel.expanded
    state.select_step_named("decoder.layers.2.cross_attn.weights")
    assert panel.highlighted_keys() == ["decoder.layers.2.cross_attn"]
    assert panel.figure.layer_labels["decoder"].text() == "layer 3/3"
    state.select_step_named("encoder.layers.1.add_norm1.norm")
    assert panel.highlighted_keys() == ["encoder.layers.1.add_norm1"]
    assert panel.figure.layer_labels["encoder"].text() == "layer 2/2"


def test_expand_draws_every_layer(setup):
    state, panel, _ = setup
    collapsed = [k for k in panel.blocks() if k.endswith("self_attn")]
    assert sorted(collapsed) == ["decoder.layers.0.self_attn", "encoder.layers.0.self_attn"]
    panel.expand_button.click()
    assert panel.expanded
    expanded = [k for k in panel.blocks() if k.endswith("self_attn")]
    assert len(expanded) == 2 + 3
    assert panel.block("decoder.layers.2.cross_attn").shape_text == "(1, 8, 32)"


@pytest.mark.parametrize("kind, has_enc, has_dec, has_cross", [
    ("encoder_decoder", True, True, True), ("encoder_only", True, False, False), ("decoder_only", False, True, False)])
def test_only_the_stacks_the_model_has_are_drawn(qtbot, kind, has_enc, has_dec, has_cross):
    state = SessionState()
    panel = ArchitecturePanel(state)
    qtbot.addWidget(panel)
    state.set_bundle(make_bundle(kind=kind))
    keys = set(panel.blocks())
    assert ("encoder.layers.0.self_attn" in keys) == has_enc
    assert ("decoder.layers.0.self_attn" in keys) == has_dec
    assert ("decoder.layers.0.cross_attn" in keys) == has_cross
    assert {"generator.logits", "generator.probs"} <= keys


@pytest.mark.parametrize("norm_first", [False, True])
def test_norm_drawn_after_or_before_the_sublayer(qtbot, norm_first):
    """Post-LN: LayerNorm(x + Sublayer(x)) — the norm sits above the sublayer (flow is upward).
    Pre-LN: x + Sublayer(LayerNorm(x)) — a LayerNorm block below it, the ⊕ above it."""
    state = SessionState()
    panel = ArchitecturePanel(state)
    qtbot.addWidget(panel)
    state.set_bundle(make_bundle(norm_first=norm_first))
    blocks = panel.blocks()
    sub_y = blocks["encoder.layers.0.self_attn"].scenePos().y()
    if norm_first:
        assert blocks["encoder.layers.0.add_norm1.norm"].scenePos().y() > sub_y  # below
        assert blocks["encoder.layers.0.add_norm1.residual"].scenePos().y() < sub_y  # above
        assert "encoder.final_norm" in blocks
    else:
        assert blocks["encoder.layers.0.add_norm1"].scenePos().y() < sub_y
        assert blocks["encoder.layers.0.add_norm1"].title == "Add & Norm"
        assert "encoder.final_norm" not in blocks


def test_zoom_buttons_and_fit(setup):
    _, panel, _ = setup
    before = panel.view.transform().m11()
    panel.view.zoom(2.0)
    assert panel.view.transform().m11() == pytest.approx(before * 2.0)
    assert not panel.view.auto_fit
    zoom_out, zoom_in, fit = panel.zoom_buttons
    zoom_in.click()
    assert panel.view.transform().m11() == pytest.approx(before * 2.5)
    fit.click()
    assert panel.view.transform().m11() == pytest.approx(before)
    rect = panel.view.mapToScene(panel.view.viewport().rect()).boundingRect()
    assert rect.contains(panel.scene.itemsBoundingRect())  # fit shows the whole figure


def test_a_character_models_token_line_packs_its_letters_before_it_elides(qapp):
    """Figure 1's "Outputs (shifted right)" line: "<bos> 2 0 2 6 - 1 1 - …" at 1280×720 showed
    8 of 11 tokens; a character tokenizer's line packs its letters ("<bos> 2026-11-22") when
    spaced letters do not fit. Word tokens keep their spaces and are elided, never run together,
    even one-letter words."""
    from PySide6.QtGui import QFont, QFontMetricsF

    from explorer.panels.architecture.figure1 import tokens_line as _tokens_line

    font = QFont("DejaVu Sans Mono", 10)
    width = QFontMetricsF(font).horizontalAdvance
    pieces = ["<bos>", *"2026-11-22"]
    spaced = " ".join(pieces)
    assert _tokens_line(pieces, font, width(spaced) + 2, characters=True) == spaced  # room: spaced, as before
    assert _tokens_line(pieces, font, width(spaced) - 20, characters=True) == "<bos> 2026-11-22"
    with_space = ["<bos>", " ", "a", "<eos>"]
    assert _tokens_line(with_space, font, width("<bos>  a <eos>") + 1, characters=True) == "<bos>  a <eos>"  # its space stays
    words = ["the", "goat", "says", "bleat"]
    short = _tokens_line(words, font, width("the goat says") + 1)
    assert short.endswith("…") and short.startswith("the goat")
    assert _tokens_line(["a", "I", "a", "b", "c"], font, width("a I a") + 1).startswith("a I")  # words: not "aIa"
    assert _tokens_line([], font, 100) == ""


def _drawn_rect(item):
    """An item's scene rectangle with its children's (an arrow with its head)."""
    return item.sceneBoundingRect().united(item.mapRectToScene(item.childrenBoundingRect()))


@pytest.mark.parametrize("size", [(1400, 420), (700, 900)])  # a wide view (shapes beside names) and a tall one
def test_no_arrow_is_drawn_over_a_token_line_and_the_output_arrow_has_a_shaft(setup, size):
    from PySide6.QtWidgets import QGraphicsPathItem

    state, panel, bundle = setup
    panel.resize(*size)
    panel.view.arrange()  # (the arrangement is chosen after the resize's events)
    texts = [*panel.figure.token_texts.values(), *panel.figure.token_labels.values()]
    assert all(t.text() for t in texts)
    arrows = [i for i in panel.scene.items() if isinstance(i, QGraphicsPathItem) and i.zValue() == -5]
    for text in texts:
        assert not any(_drawn_rect(a).intersects(text.sceneBoundingRect()) for a in arrows), text.text()
    line = panel.figure.token_texts["out"].sceneBoundingRect().united(panel.figure.token_labels["out"].sceneBoundingRect())
    into_line = [a for a in arrows if line.left() < _drawn_rect(a).center().x() < line.right()
                 and 0 < _drawn_rect(a).top() - line.bottom() < line.height()]
    assert len(into_line) == 1  # Softmax → the output line
    arrow = into_line[0]
    head = arrow.childrenBoundingRect().height()
    assert arrow.sceneBoundingRect().height() > 2 * head  # a shaft, not a head squeezed under the text
    assert _drawn_rect(arrow).top() - line.bottom() > head / 4  # and its tip clear of the letters


def test_a_long_output_line_stands_over_its_label_where_that_draws_the_figure_larger(qtbot):
    """A decoder's long continuation beside "Output Probabilities" would make the figure as wide as
    the line: in a view with height to spare it stands under the label, and the figure is drawn larger."""
    state = SessionState()
    panel = ArchitecturePanel(state)
    qtbot.addWidget(panel)
    panel.show()
    bundle = make_bundle(kind="decoder_only")
    state.set_bundle(bundle)
    state.set_result(bundle.run("abcdefghijklmnopqrstuvwxyz"))
    stacked = {}
    for size in ((1000, 620), (3000, 500)):
        panel.resize(*size)
        panel.view.arrange()
        assert panel.figure.inline  # both views wide enough for shapes beside the names
        label, tokens = panel.figure.token_labels["out"], panel.figure.token_texts["out"]
        stacked[size] = label.sceneBoundingRect().center().y() < tokens.sceneBoundingRect().top()
        rect = panel.view.mapToScene(panel.view.viewport().rect()).boundingRect()
        assert rect.contains(panel.scene.itemsBoundingRect())  # the whole figure, token lines too
    assert stacked == {(1000, 620): True, (3000, 500): False}


def test_the_figure_takes_the_arrangement_its_view_draws_larger(setup):
    """Shapes beside the block names in a wide, low view; under them in a narrow, tall one; the
    view fits the whole figure either way, and a resize back draws the first one again."""
    state, panel, _ = setup
    for size, inline in (((2400, 500), True), ((500, 1400), False), ((2400, 500), True)):
        panel.resize(*size)
        panel.view.arrange()
        assert panel.figure.inline is inline
        rect = panel.view.mapToScene(panel.view.viewport().rect()).boundingRect()
        assert rect.contains(panel.scene.itemsBoundingRect())
