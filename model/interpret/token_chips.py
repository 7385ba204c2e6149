"""Tokens as coloured chips of rich text, without Qt: the decoder's input at a step (the prompt,
the query, a long prefix folded to its newest chips), a [MASK]'s filling, a sentence encoder's
sentences. `palette` is any object with the colours named here as attributes (the app's theme)."""
from __future__ import annotations

import html
from collections.abc import Sequence

from model.inference.labels import display_piece
from model.interpret.decode_texts import folded_prefix

MONO = "monospace"  # the chips' font family where a caller gives none


def chip(piece: str, background: str, colour: str, bold: bool = False, family: str = MONO) -> str:
    """A token as a chip: its displayed text on `background`."""
    weight = " font-weight:bold;" if bold else ""
    return (f"<span style='background:{background}; color:{colour}; font-family:{family};{weight}'>"
            f"&nbsp;{html.escape(display_piece(piece))}&nbsp;</span>")


def coloured(colour: str, text: str) -> str:
    return f"<span style='color:{colour};'>{text}</span>"


def prefix_chips(prefix: Sequence[str], n_prompt: int, palette, keep_last: int | None = None,
                 family: str = MONO) -> str:
    """The decoder's input: the prompt (decoder-only) in the prompt's colours, after "prompt:", the
    last token (this step's query) as a source chip. With `keep_last`, older tokens after <bos>
    fold into one mark, "… k prompt + m earlier". Zero-width spaces let a long prefix wrap."""
    hidden, hidden_prompt = folded_prefix(len(prefix), n_prompt, keep_last)
    chips = []
    for i, piece in enumerate(prefix):
        if hidden and i == hidden.start:
            rest = len(hidden) - hidden_prompt
            mark = coloured(palette.prompt, f"&nbsp;… {hidden_prompt} prompt") if hidden_prompt else ""
            chips.append(mark + (coloured(palette.muted, f"&nbsp;{'+ ' if mark else '… '}{rest} earlier") if rest else "")
                         + "&nbsp;")
        if i in hidden:
            continue
        if i == len(prefix) - 1:
            colours = palette.source_bg, palette.source_text
        elif 1 <= i <= n_prompt:
            colours = palette.prompt_fill, palette.prompt_text
        else:
            colours = palette.chip_bg, palette.chip_text
        chips.append(chip(piece, *colours, family=family))
        if i == 0 and n_prompt > hidden_prompt:  # "prompt:" only before a prompt token shown
            chips.append(coloured(palette.prompt, "<i>prompt:</i>"))
        if n_prompt and i == n_prompt < len(prefix) - 1:
            chips.append(coloured(palette.prompt, "|"))
    return "&#8203;".join(chips)


def step_line(t: int, prefix: Sequence[str], chosen: str, n_prompt: int, palette, keep_last: int | None = None,
              family: str = MONO) -> str:
    """Decoding step t (counted from 1 on screen): its input's chips → the chosen token."""
    chips = prefix_chips(prefix, n_prompt, palette, keep_last, family)
    return (f"<b>Step {t + 1}</b>&nbsp; {chips} &nbsp;→&nbsp;"
            f"{chip(chosen, palette.chosen, palette.on_chosen, family=family)}")


def blank(text: str, palette, family: str = MONO) -> str:
    """A [MASK]'s place in a sentence: a chip of its filling (or "____")."""
    return chip(text, palette.mask_blank, palette.chosen_text, True, family)


def sentences_html(sentences: Sequence[str], n_tokens: Sequence[int]) -> str:
    """A sentence encoder's sentences as a numbered list (S1, S2, …) with their token counts, and
    how to read the similarity map (a hint to add a second sentence where there is one)."""
    items = "".join(f"<li><b>S{i + 1}</b> ({k} tokens): {html.escape(s)}</li>"
                    for i, (s, k) in enumerate(zip(sentences, n_tokens)))
    hint = "" if len(sentences) > 1 else "<br>Add a second sentence after a | to compare them."
    return (f"<ol style='margin-left:0; -qt-list-indent:0;'>{items}</ol>"
            f"Colour and number: cosine similarity (1 = same direction).{hint}")


def node_label(colour: str, bold: bool, token: str, score: str, point_sizes: tuple[float, float],
               family: str = MONO) -> str:
    """A beam-tree node's label: its token (`point_sizes[0]`), its score under it ("" for none, the
    smaller size)."""
    big, small = point_sizes
    return (f"<div style='color:{colour}; line-height:90%'><span style='font-size:{big:.1f}pt; "
            f"font-weight:{'bold' if bold else 'normal'}; font-family:{family}'>{html.escape(token)}</span>"
            + (f"<br><span style='font-size:{small:.1f}pt'>{score}</span>" if score else "") + "</div>")


NO_HEAD = ("This model has no language-model head: it does not decode, predict or fill in words. "
           "It is a sentence encoder: each sentence becomes one {dim}-number vector (the mean of the last "
           "layer over its tokens, normalised to length 1). Type sentences separated by | to compare them.")

__all__ = ["NO_HEAD", "blank", "chip", "coloured", "node_label", "prefix_chips", "sentences_html", "step_line"]
