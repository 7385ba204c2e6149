"""What the input bar says about a text and a model, without widgets: the token echo (count,
tokens, where the line may be cut), unknown symbols, the masked-LM tooltip, the input fields'
names, and a checkpoint's description for the model chooser."""
from __future__ import annotations

import html
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from model.nn.kinds import ENCODER_DECODER, MODEL_KINDS, InputFields

CHAT_FIELDS = InputFields(
    "Message:", "Ask the chat model something and press Enter", "Answer:", "optional",
    "Leave empty: the model writes the assistant's answer greedily. Type an answer to see the model "
    "teacher-forced on it")

MAX_ECHO = 120  # tokens echoed; the count still covers all of them


def printable(piece: str) -> str:
    """A token as a person can read it: a space → ␣, control characters (NUL, ESC, CR, RTL
    override …) as escapes like \\x00 or U+202E, never raw into a label or a message."""
    return "".join("␣" if c == " " else c if c.isprintable() else
                   (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"U+{ord(c):04X}") for c in piece)


@dataclass(frozen=True)
class Echo:
    """The input bar's token echo: the whole line (rich), the plain text it always shows, where it
    may be cut (plain-text positions in UTF-16 units), what it says there, and its tooltip."""

    html: str
    least: str
    stops: tuple[int, ...]
    more: Callable[[int], str] | None
    tooltip: str


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _word_gaps(tokenizer, pieces: list[str]) -> list[bool]:
    """For each two neighbouring pieces, whether the tokenizer's text puts a space between them
    (whole-word pieces carry no space of their own: echoed side by side they would read as one)."""
    def join(part: list[str]) -> str | None:
        try:
            return tokenizer.join(part)
        except ValueError:  # a piece the tokenizer cannot turn back into text: no gap claimed
            return None

    alone = [join([piece]) for piece in pieces]
    return [None not in (a, b) and join([x, y]) == f"{a} {b}"
            for x, y, a, b in zip(pieces, pieces[1:], alone, alone[1:])]


def token_echo(bundle, text: str, palette, chat: bool = False) -> Echo:
    """The tokens `text` becomes: the count (against the model's limit where near or over it), then
    each token on alternating tints (`token_a`, `token_b`), a space between two where the
    tokenizer's text has one (`_word_gaps`), unknown ones red and underlined, then how many are
    unknown (a cut line says it in its marker). A chat message's line is its count and the chat
    template's around it ("7+29 tokens"); the tooltip lists the tokens.
    `palette`: the colours by role (`error`, `token_a`, `token_b`, `token_unknown`, as hex)."""
    limit = bundle.max_input_len
    model_text = bundle.chat_input(text, chat)
    enc = bundle.src_tokenizer.encode(model_text)
    span = bundle.message_span(text, enc.ids) if model_text != text else None
    n = len(enc.ids)
    error = palette.error
    if n > limit:
        count = f'<span style="color:{error}; font-weight:bold;">{n} tokens: over the limit of {limit}</span>'
    elif span is not None:
        count = f"{span[1] - span[0]}+{n - span[1] + span[0]} tokens"
    else:
        count = f"{n}/{limit} tokens" if 4 * n >= 3 * limit else f"{n} token{'s' if n != 1 else ''}"
    note = (f"{n} of the {limit} tokens this model reads at most" if n <= limit
            else f"{n} tokens; this model reads at most {limit}")
    listed = [printable(p) for p in enc.pieces[:MAX_ECHO]]
    symbols = describe_unknown(enc)
    unknown = f"{len(symbols.split())} unknown" if symbols else ""
    plain_count = f"{n} tokens: over the limit of {limit}" if n > limit else count
    if span is not None:  # the message's tokens in [brackets] among the template's
        start, end = span[0] - 1, span[1] - 1
        listed = listed[:start] + ["["] + listed[start:end] + ["]"] + listed[end:]
        tip = (f"{note}: your message's {end - start} tokens [in brackets] inside the model's chat "
               f"template:\n" + " ".join(listed))
        line = count + (f', <span style="color:{error};">{unknown}</span>' if unknown else "")
        return Echo(line, plain_count, (), None, tip)
    tip = f"{note}:\n" + " ".join(listed) + (f"\nunknown symbols, read as <unk>: {symbols}" if symbols else "")
    at = _utf16(plain_count + ": ")
    token_stops = [at]  # the k-th: where the line ends after k whole tokens (the count always shows)
    bad, parts = {i for i, _ in enc.unknown}, []
    gaps = _word_gaps(bundle.src_tokenizer, enc.pieces[:MAX_ECHO])
    for i, shown in enumerate(listed):
        if i and gaps[i - 1]:
            parts.append(" ")
            at += 1
        tint = f"background-color:{palette.token_b if i % 2 else palette.token_a};"
        mark = (f" color:{palette.token_unknown}; text-decoration: underline; font-weight: bold;"
                if i in bad else "")
        parts.append(f'<span style="{tint}{mark}">{html.escape(shown)}</span>')
        at += _utf16(shown)
        token_stops.append(at)
    rest = len(enc.pieces) - len(listed)

    def more(kept: int) -> str:
        """The cut's marker: how many more, or (the count leads the line) how many are unknown."""
        if unknown:
            return f" … · {unknown}"
        left = len(enc.pieces) - max((i for i, stop in enumerate(token_stops) if stop <= kept), default=0)
        return f" … +{left} more" if left < len(enc.pieces) else "…"  # (no token shown: the count says how many)

    line = (f"{count}: " + "".join(parts) + (f" … +{rest} more" if rest > 0 else "")
            + (f' · <span style="color:{error};">{unknown}</span>' if unknown else ""))
    return Echo(line, f"{plain_count}: …", tuple(token_stops), more, tip)


def model_description(name: str, folder) -> str:
    """A chooser entry that says what the model does, from its checkpoint's task and kind:
    "reverse — reverse a string of lowercase letters (encoder-decoder (the paper's))"."""
    try:
        config = json.loads((Path(folder) / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, TypeError):
        return name
    kind = MODEL_KINDS.get((config.get("model") or {}).get("kind") or "", ENCODER_DECODER)
    what = str((config.get("task") or {}).get("description") or "").strip().rstrip(".")
    if kind is not ENCODER_DECODER and kind.objective:
        what = f"{kind.objective}: {what[:1].lower()}{what[1:]}" if what else kind.objective
    elif what:
        what = what[:1].lower() + what[1:]
    return f"{name} — {what} ({kind.title})" if what else f"{name} ({kind.title})"


def field_texts(bundle, chat: bool = False) -> tuple:
    """(input label, placeholder, target label, target placeholder, target tooltip) for `bundle`
    (the paper's encoder-decoder's without one; "Message:"/"Answer:" in chat); no target: None."""
    f = CHAT_FIELDS if chat else bundle.input_fields if bundle is not None else ENCODER_DECODER.fields
    return f.label, f.placeholder, f.target_label, f.target_placeholder, f.target_tooltip


def mask_tooltip(result) -> str:
    """Each [MASK]'s top candidates with their probabilities (a masked LM's result), or ""."""
    lines = []
    for m in result.mask_predictions:
        cands = ", ".join(f"{printable(p)} {q:.0%}" for p, q in zip(m.pieces, m.probs))
        lines.append(f"position {m.position}: {cands}")
    return "\n".join(lines)


def describe_unknown(encoded) -> str:
    """The distinct unknown symbols of an already tokenized text, space-separated."""
    return " ".join(sorted({printable(p) for _, p in encoded.unknown}))
