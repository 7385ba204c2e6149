"""The input bar's output line: what the model wrote, and how many tokens it read and wrote, as
rich text in a palette's colours."""
from __future__ import annotations

import html

from model.interpret.input_texts import printable

PROMPT_SHOWN = 4  # a decoder-only output line's prompt: its last tokens, the rest is in the field above


def token_counts(result) -> str:
    """The tokens read and written, as the panels count them: "9 in + 9 out" (no <bos>, no <eos>)."""
    decoder_only = result.src_pieces == [] and result.tgt_pieces
    read = result.n_prompt if decoder_only else len(result.src_pieces)
    return f"{read} in + {max(len(result.tgt_pieces) - 1 - result.n_prompt, 0)} out"


def output_forms(result, bundle, palette, mono_family: str = "monospace", **said) -> list[str]:
    """`output_html` whole, then with fewer of a decoder-only prompt's tokens down to none: the
    forms a narrow line tries in turn, so what gives way is the prompt (in the field above), not
    the model's output."""
    forms = [output_html(result, bundle, palette, mono_family, prompt_shown=k, **said) for k in range(PROMPT_SHOWN, -1, -1)]
    return list(dict.fromkeys(forms))


def output_html(result, bundle, palette, mono_family: str = "monospace", edited: int = 0,
                decoded: tuple[str, str] | None = None, notes: list[str] | tuple = (), message: str | None = None,
                prompt_shown: int = PROMPT_SHOWN) -> str:
    """The status line's rich text for a result: the output, the continuation after its prompt
    (decoder-only), the sentence with each [MASK]'s fill marked (masked LM), or a chat model's
    answer alone (`message` given). `edited`: heads edited (said); `decoded`: the frame's (text,
    strategy), beam search's or sampling's output named; `notes`: the first is shown after it.
    `palette`: each role's colour as hex (`text`, `accent`, `warning`, `muted`). No colour says
    "correct": nothing here checks the answer. `prompt_shown`: a decoder-only prompt's last tokens shown."""
    ok = palette.text
    mark = palette.accent  # a masked LM's fills are marked as fills, not as right answers
    mono = f"font-family:{mono_family};"
    heads = (f' <span style="color:{palette.warning};">({edited} head{"s" if edited != 1 else ""} edited)</span>'
             if edited else "")
    if bundle is not None and not bundle.has_output_layer:  # nothing it outputs is text
        return f'<span style="color:{palette.muted};">No LM head (embeddings)</span>'
    if result.mask_predictions and bundle is not None:
        tok = bundle.src_tokenizer
        fills = {m.position: m for m in result.mask_predictions}
        parts = []
        for i, piece in enumerate(result.source.pieces):
            shown = printable(fills[i].pieces[0]) if i in fills else printable(piece)
            if i in fills:
                parts.append(f'<span style="color:{mark}; font-weight:bold; text-decoration: underline;">'
                             f'{html.escape(shown)}</span>')
            else:
                parts.append(html.escape(shown))
        n = len(fills)
        return (f'Filled ({n} mask{"s" if n != 1 else ""}){heads}: '
                f'<span style="{mono} color:{palette.text};">{tok.join(parts)}</span>')
    warn = "".join(f'<span style="color:{palette.warning};">⚠ {html.escape(n)}</span> · ' for n in notes[:1])
    out, strategy = result.output_text, ""
    if decoded is not None and decoded[1] in ("beam search", "sampling") and not result.target_text:
        out, strategy = decoded[0], f" ({decoded[1]})"  # what the decoding panels show for these settings
    text = html.escape(out) or "(empty)"
    counted = f" ({token_counts(result)}){heads}"  # what the panels count, then the edits
    if message is not None:  # chat: the assistant's answer, as prose
        given = " (given)" if result.target_text else ""
        return f'{warn}Assistant{given}{strategy}{counted}: <b style="color:{ok};">{text}</b>'

    if result.src_pieces == [] and result.tgt_pieces:  # decoder-only: the prompt, then what it wrote
        given = " (given continuation)" if result.target_text else ""
        first = max(1, 1 + result.n_prompt - prompt_shown)
        prompt = html.escape(bundle.tgt_tokenizer.join(result.tgt_pieces[first:1 + result.n_prompt])) if bundle else ""
        prompt = ("… " if first > 1 else "") + prompt
        return (f'{warn}Output{given}{strategy}{counted}: <span style="{mono} color:{palette.muted};">{prompt}</span> '
                f'<b style="{mono} color:{ok};">{text}</b>')
    forced = " (teacher-forced target)" if result.target_text else ""
    return f'{warn}Output{forced}{strategy}{counted}: <b style="{mono} color:{ok};">{text}</b>'
