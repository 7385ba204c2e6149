"""Chat templates: how an instruction-tuned model expects a conversation written as one text.

A chat model was fine-tuned on conversations laid out with its own markers (SmolLM2:
`<|im_start|>user\\n…<|im_end|>\\n<|im_start|>assistant\\n`); its file carries that layout as a
Jinja template. `render_chat` fills it in with `jinja2` (sandboxed, as transformers does) when
installed, and otherwise writes the ChatML layout such templates describe.
"""
from __future__ import annotations

from contextlib import suppress
from functools import lru_cache

CHATML = "<|im_start|>"


class ChatTemplateError(ValueError):
    """A chat template that cannot be applied; the message says why."""


def render_chat(template: str, messages: list[dict[str, str]], add_generation_prompt: bool = True,
                **specials: str) -> str:
    """The conversation `messages` ([{"role": "user", "content": …}, …]) as the text the model
    reads; with `add_generation_prompt` it ends where the assistant's answer begins.
    `specials` (bos_token, eos_token) are the names templates may use."""
    try:
        from jinja2 import TemplateError
    except ImportError:
        return _chatml(template, messages, add_generation_prompt)
    try:
        return _compiled(template).render(messages=messages, add_generation_prompt=add_generation_prompt,
                                          **specials)
    except TemplateError as exc:
        raise ChatTemplateError(f"the model's chat template could not be applied ({exc})") from None


def prepare_chat_template(template: str | None) -> None:
    """Import jinja2 and compile `template` now, on the caller's (a loader's) thread: the first
    chat prompt then does neither on the GUI thread (the import alone is ~0.1 s). A template
    that does not compile is left for `render_chat` to report."""
    if not template:
        return
    try:
        from jinja2 import TemplateError
    except ImportError:
        return
    with suppress(TemplateError):
        _compiled(template)


def _raise_exception(message: str):
    """What templates call to refuse a conversation."""
    raise ChatTemplateError(message)


@lru_cache(maxsize=8)
def _compiled(template: str):
    """The template compiled once (tens of ms each time: a model change renders it several times)."""
    from jinja2.sandbox import ImmutableSandboxedEnvironment
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = _raise_exception
    return env.from_string(template)


def _chatml(template: str, messages: list[dict[str, str]], add_generation_prompt: bool) -> str:
    """Without jinja2: the ChatML layout, for templates written in it (without a template's own
    additions, such as a default system message)."""
    if CHATML not in template:
        raise ChatTemplateError("applying this chat template needs the `jinja2` package (pip install jinja2)")
    text = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
    return text + ("<|im_start|>assistant\n" if add_generation_prompt else "")


__all__ = ["ChatTemplateError", "prepare_chat_template", "render_chat"]
