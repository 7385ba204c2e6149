"""Tokens as rich-text chips (model.interpret.token_chips), without Qt: each token shown once, escaped,
in the colours its role names, and the texts around them saying what the chips are."""
import re
from types import SimpleNamespace

from model.inference.labels import display_piece
from model.interpret.token_chips import blank, node_label, prefix_chips, sentences_html, step_line

ROLES = ("prompt", "muted", "source_bg", "source_text", "prompt_fill", "prompt_text", "chip_bg", "chip_text",
         "chosen", "on_chosen", "mask_blank", "chosen_text")
PALETTE = SimpleNamespace(**{role: f"#{i:06x}" for i, role in enumerate(ROLES, start=1)})  # a colour per role


def spans(html: str) -> list[tuple[str, str]]:
    """(background, text) of each chip."""
    return re.findall(r"background:(#\w+);[^>]*>&nbsp;(.*?)&nbsp;</span>", html)


def test_a_steps_line_shows_every_input_token_in_its_roles_colours_then_the_chosen_one():
    prefix = ["<bos>", "the", "frog", "lives"]
    line = step_line(2, prefix, "<eos>", n_prompt=2, palette=PALETTE)
    assert line.startswith("<b>Step 3</b>")
    chips = spans(line)
    assert [text for _bg, text in chips] == ["&lt;bos&gt;", "the", "frog", "lives", "&lt;eos&gt;"]
    assert [bg for bg, _text in chips] == [PALETTE.chip_bg, PALETTE.prompt_fill, PALETTE.prompt_fill,
                                           PALETTE.source_bg, PALETTE.chosen]


def test_a_folded_prefix_keeps_bos_and_the_newest_chips():
    prefix = ["<bos>"] + [f"w{i}" for i in range(9)]
    chips = spans(prefix_chips(prefix, 0, PALETTE, keep_last=3))
    assert [text for _bg, text in chips] == ["&lt;bos&gt;", "w6", "w7", "w8"]


def test_a_blank_and_a_beam_label_escape_their_token():
    assert spans(blank("<unk>", PALETTE)) == [(PALETTE.mask_blank, html_escaped("<unk>"))]
    label = node_label("#abcdef", True, "<eos>", "-1.25", (12.0, 9.0))
    assert "&lt;eos&gt;" in label and "-1.25" in label and "bold" in label
    assert "<br>" not in node_label("#abcdef", False, "a", "", (12.0, 9.0))  # no score: one line


def html_escaped(piece: str) -> str:
    return display_piece(piece).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def test_the_sentences_are_numbered_with_their_token_counts_and_one_alone_asks_for_another():
    two = sentences_html(["a cat", "a <dog>"], [3, 4])
    assert two.count("<li>") == 2 and "<b>S2</b> (4 tokens): a &lt;dog&gt;" in two and "Add a second" not in two
    assert "Add a second sentence" in sentences_html(["a cat"], [3])
