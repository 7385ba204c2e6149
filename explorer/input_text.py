"""What the input bar writes, as text: the token echo, the output line, the masked-LM tooltip,
unknown symbols, and a model's description for the chooser (pure functions of a bundle and
its results; no widgets)."""
from __future__ import annotations

import html
import json
from pathlib import Path

from explorer import style, theme
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


def token_echo_html(bundle, text: str, limit: int = MAX_ECHO) -> tuple[str, int]:
    """Rich text of the first `limit` tokens `text` becomes, unknown ones red and underlined,
    and "… +N more" for the rest; and their count.

    Tokens are told apart by alternating tints (`token_a`, `token_b`), as tokenizer
    playgrounds do, not by spaces: a character model's "2 2 ␣ N o v" takes twice the room of
    "22␣Nov"."""
    enc = bundle.src_tokenizer.encode(text)
    unknown = {i for i, _ in enc.unknown}
    palette = theme.current()
    parts = []
    for i, piece in enumerate(enc.pieces[:limit]):
        shown = html.escape(printable(piece))
        tint = f"background-color:{palette.token_b if i % 2 else palette.token_a};"
        if i in unknown:
            parts.append(f'<span style="{tint} color:{palette.token_unknown}; text-decoration: underline; '
                         f'font-weight: bold;">{shown}</span>')
        else:
            parts.append(f'<span style="{tint}">{shown}</span>')
    rest = len(enc.pieces) - limit
    more = f" … +{rest} more" if rest > 0 else ""
    return "".join(parts) + more, len(enc.ids)


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
    """The labels and hints of the input fields for `bundle` (its `input_fields`; the paper's
    encoder-decoder's without a bundle; a chat model's in chat: "Message:" and "Answer:"):
    (input label, placeholder, target label, target placeholder, target tooltip), the target
    label None where there is no target field."""
    f = CHAT_FIELDS if chat else bundle.input_fields if bundle is not None else ENCODER_DECODER.fields
    return f.label, f.placeholder, f.target_label, f.target_placeholder, f.target_tooltip


def output_html(result, bundle, edited: int = 0, decoded: tuple[str, str] | None = None,
                notes: list[str] | tuple = (), message: str | None = None) -> str:
    """The status line's rich text for a result: the output, the continuation after its
    prompt (decoder-only), or the sentence with each [MASK] filled in and the fills marked
    (masked LM). Every piece of text is escaped. `edited`: how many heads the session
    has edited — the output is then the edited model's, and the label says so. `decoded`:
    the frame's (text, strategy), so that beam search's or sampling's output is the one shown,
    named, as in the decoding panels. `notes`: where the input leaves the model's training
    range; the first is shown after the output. `message`: the user's message a chat model
    answered (the frame's `message`): the line is the assistant's answer alone, not the prompt."""
    # The output is plain text: no model here checks its answer, so no colour may say "correct".
    ok = style.TEXT.name()
    mark = style.ACCENT.name()  # a masked LM's fills are marked as fills, not as right answers
    mono = f"font-family:{style.MONO_FAMILY};"
    heads = (f' <span style="color:{style.WARNING.name()};">({edited} head{"s" if edited != 1 else ""} edited)</span>'
             if edited else "")
    if bundle is not None and not bundle.has_output_layer:  # nothing it outputs is text: say so, in no success colour
        return f'<span style="color:{style.MUTED.name()};">No LM head (embeddings)</span>'
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
                f'<span style="{mono} color:{style.TEXT.name()};">{tok.join(parts)}</span>')
    warn = "".join(f' <span style="color:{style.WARNING.name()};">⚠ {html.escape(n)}</span>' for n in notes[:1])
    out, strategy = result.output_text, ""
    if decoded is not None and decoded[1] in ("beam search", "sampling") and not result.target_text:
        out, strategy = decoded[0], f" ({decoded[1]})"  # what the decoding panels show for these settings
    text = html.escape(out) or "(empty)"
    if message is not None:  # chat: the assistant's answer (the message is in the field beside), as prose
        given = " (given)" if result.target_text else ""
        return f'Assistant{given}{strategy}{heads}: <b style="color:{ok};">{text}</b>{warn}'

    if result.src_pieces == [] and result.tgt_pieces:  # decoder-only: the prompt, then what it wrote
        # "Output", as for the other kinds: "Continuation:" named the input field beside it too
        given = " (given continuation)" if result.target_text else ""
        prompt = html.escape(bundle.tgt_tokenizer.join(result.tgt_pieces[1:1 + result.n_prompt])) if bundle else ""
        return (f'Output{given}{strategy}{heads}: <span style="{mono} color:{style.MUTED.name()};">{prompt}</span> '
                f'<b style="{mono} color:{ok};">{text}</b>{warn}')
    forced = " (teacher-forced target)" if result.target_text else ""
    return f'Output{forced}{strategy}{heads}: <b style="{mono} color:{ok};">{text}</b>{warn}'


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
