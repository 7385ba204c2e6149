"""Token chips for the decoder's input as rich text: the prompt purple, the query blue, the chosen
token orange; a long prefix keeps its newest chips on one line and counts the rest."""
from __future__ import annotations

import html

from PySide6.QtGui import QFont, QFontMetricsF

from explorer import style
from explorer.drawing.token_heatmap import display_piece
from model.interpret.decode_texts import chips_that_fit, folded_prefix


def chip(piece: str, colour: str | None = None, text: str | None = None, bold: bool = False) -> str:
    """A token as a coloured chip of rich text (the theme's chip colours by default)."""
    colour, text = colour or style.current().chip_bg, text or style.current().chip_text
    weight = " font-weight:bold;" if bold else ""
    return (f"<span style='background:{colour}; color:{text}; font-family:{style.MONO_FAMILY};{weight}'>"
            f"&nbsp;{html.escape(display_piece(piece))}&nbsp;</span>")


def chips_room(label, prefix: list[str], chosen: str) -> int:
    """How many of the newest prefix chips fit on one line of `label` beside "Step k" and the
    chosen token (a second line would take height from the maps, which name every token anyway)."""
    font = QFont(label.font())
    font.setFamily(style.MONO_FAMILY)
    mono, plain = QFontMetricsF(font), QFontMetricsF(label.font())
    bold = QFont(label.font())
    bold.setBold(True)

    def width(piece: str) -> float:
        return mono.horizontalAdvance(f"\u00a0{display_piece(piece)}\u00a0") + 2

    room = max(200, label.width()) - 12
    fixed = QFontMetricsF(bold).horizontalAdvance("Step 999") + plain.horizontalAdvance("  →  ") + width(chosen)
    if fixed + sum(width(p) for p in prefix) <= room:
        return len(prefix) - 1  # every chip after <bos>, which is always shown
    hidden = plain.horizontalAdvance(" … 99 prompt + 99 earlier ")  # the widest fold mark
    return chips_that_fit(prefix[1:], room - fixed - hidden - width(prefix[0]), width)


def coloured(role: str, text: str) -> str:
    return f"<span style='color:{getattr(style.current(), role)};'>{text}</span>"


def prefix_chips(prefix: list[str], n_prompt: int, keep_last: int | None = None) -> str:
    """The decoder's input as chips: the prompt (decoder-only) purple and labelled, the last token
    (this step's query) blue. With `keep_last`, older tokens after <bos> fold into one mark,
    "… k prompt + m earlier". Zero-width spaces let a long prefix wrap."""
    theme = style.current()
    hidden, hidden_prompt = folded_prefix(len(prefix), n_prompt, keep_last)
    chips = []
    for i, piece in enumerate(prefix):
        if hidden and i == hidden.start:
            rest = len(hidden) - hidden_prompt
            mark = coloured("prompt", f"&nbsp;… {hidden_prompt} prompt") if hidden_prompt else ""
            chips.append(mark + (coloured("muted", f"&nbsp;{'+ ' if mark else '… '}{rest} earlier") if rest else "")
                         + "&nbsp;")
        if i in hidden:
            continue
        if i == len(prefix) - 1:
            chips.append(chip(piece, theme.source_bg, theme.source_text))
        elif 1 <= i <= n_prompt:
            chips.append(chip(piece, theme.prompt_fill, theme.prompt_text))
        else:
            chips.append(chip(piece))
        if i == 0 and n_prompt > hidden_prompt:  # "prompt:" only before a prompt token shown
            chips.append(coloured("prompt", "<i>prompt:</i>"))
        if n_prompt and i == n_prompt < len(prefix) - 1:
            chips.append(coloured("prompt", "|"))
    return "&#8203;".join(chips)
