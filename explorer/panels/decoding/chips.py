"""The decoding panel's text: its wrapped labels, and token chips for the decoder's input (the
prompt purple, the query blue, the chosen token orange)."""
from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetricsF
from PySide6.QtWidgets import QLabel

from explorer import style
from explorer.drawing.token_heatmap import display_piece


def note_sheet(level: str = "info") -> str:
    """A note's style sheet in the theme's colours for `level` ("info", "warning", "error")."""
    return f"background:{{{level}_bg}}; color:{{{level}_text}}; padding:6px; border-radius:4px;"


INFO = note_sheet()


def text_label(text: str = "", pt: int = style.BASE_POINT_SIZE, bold: bool = False, rich: bool = False,
               sheet: str = "") -> QLabel:
    """A word-wrapped label in the app's font at `pt` (rich text where asked; `sheet`: a style
    sheet of theme roles, kept in step with the theme)."""
    label = QLabel(text)
    label.setWordWrap(True)
    label.setFont(style.font(pt, bold=bold))
    if rich:
        label.setTextFormat(Qt.RichText)
    if sheet:
        style.set_sheet(label, sheet)
    return label


def chip(piece: str, colour: str | None = None, text: str | None = None, bold: bool = False) -> str:
    """A token as a coloured chip of rich text (the theme's chip colours by default)."""
    colour, text = colour or style.current().chip_bg, text or style.current().chip_text
    weight = " font-weight:bold;" if bold else ""
    return (f"<span style='background:{colour}; color:{text}; font-family:{style.MONO_FAMILY};{weight}'>"
            f"&nbsp;{html.escape(display_piece(piece))}&nbsp;</span>")


def chips_that_fit(prefix: list[str], room_px: float, chip_px) -> int:
    """How many of the prefix's last chips fit in `room_px` (`chip_px(piece)` measures one),
    so a long decode's row keeps the newest tokens instead of growing line after line."""
    used, n = 0.0, 0
    for piece in reversed(prefix):
        used += chip_px(piece)
        if used > room_px:
            break
        n += 1
    return max(1, n)


def chips_room(label, prefix: list[str], chosen: str) -> int:
    """How many of the newest prefix chips fit in one line of the step row `label` (a second
    line would take its height from the maps below, whose labels need it on a short screen;
    the maps name every token of the prefix anyway). Chips are measured as drawn: a token between
    two no-break spaces in the mono face."""
    font = QFont(label.font())
    font.setFamily(style.MONO_FAMILY)
    mono = QFontMetricsF(font)
    bold = QFont(label.font())
    bold.setBold(True)
    plain = QFontMetricsF(label.font())

    def width(piece: str) -> float:
        return mono.horizontalAdvance(f"\u00a0{display_piece(piece)}\u00a0") + 2

    room = max(200, label.width()) - 12
    fixed = QFontMetricsF(bold).horizontalAdvance("Step 999") + plain.horizontalAdvance("  →  ") + width(chosen)
    if fixed + sum(width(p) for p in prefix) <= room:
        return len(prefix) - 1  # every chip after the first (<bos>, always shown)
    hidden = plain.horizontalAdvance(" … 99 prompt + 99 earlier ")  # the widest mark (`prefix_chips`)
    return chips_that_fit(prefix[1:], room - fixed - hidden - width(prefix[0]), width)


def prefix_chips(prefix: list[str], n_prompt: int, keep_last: int | None = None) -> str:
    """The decoder's input as chips: the prompt (decoder-only) purple and labelled, the last
    token — this step's query — blue. Zero-width spaces let a long prefix wrap. With
    `keep_last`, older tokens (after the first) become one "… k earlier" mark."""
    chips = []
    hidden = range(1, len(prefix) - keep_last) if keep_last is not None and keep_last + 1 < len(prefix) else range(0)
    # the prompt's hidden tokens are counted apart, so one "… k earlier" mark never calls
    # generated tokens part of the prompt
    hidden_prompt = sum(1 <= i <= n_prompt for i in hidden)
    for i, piece in enumerate(prefix):
        if i in hidden:
            if i == hidden.start:
                rest = len(hidden) - hidden_prompt
                mark = (f"<span style='color:{style.current().prompt};'>&nbsp;… {hidden_prompt} prompt</span>"
                        if hidden_prompt else "")
                if rest:
                    mark += f"<span style='color:{style.current().muted};'>&nbsp;{'+ ' if mark else '… '}{rest} earlier</span>"
                chips.append(mark + "&nbsp;")
            continue
        if i == len(prefix) - 1:
            chips.append(chip(piece, style.current().source_bg, style.current().source_text))
        elif 1 <= i <= n_prompt:
            chips.append(chip(piece, style.current().prompt_fill, style.current().prompt_text))
        else:
            chips.append(chip(piece))
        if n_prompt > hidden_prompt and i == 0:  # ("prompt:" only before a prompt token shown)
            chips.append(f"<span style='color:{style.current().prompt};'><i>prompt:</i></span>")
        if n_prompt and i == n_prompt and i < len(prefix) - 1:
            chips.append(f"<span style='color:{style.current().prompt};'>|</span>")
    return "&#8203;".join(chips)
