"""`render_chat` compiles a model's chat template once and renders it as jinja2 itself does; a
template that refuses a conversation, or does not parse, is a ChatTemplateError."""
from __future__ import annotations

import jinja2
import pytest

from model.inference.chat import ChatTemplateError, _compiled, render_chat

CHATML_TEMPLATE = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")


def test_a_template_is_compiled_once_and_renders_as_jinja2_does():
    messages = [{"role": "user", "content": "What is the capital of France?"}]
    reference = jinja2.Environment(trim_blocks=True, lstrip_blocks=True).from_string(CHATML_TEMPLATE)
    _compiled.cache_clear()
    first = render_chat(CHATML_TEMPLATE, messages)
    again = render_chat(CHATML_TEMPLATE, messages + [{"role": "assistant", "content": "Paris"}], False)
    assert first == reference.render(messages=messages, add_generation_prompt=True)
    assert again.endswith("<|im_start|>assistant\nParis<|im_end|>\n")
    info = _compiled.cache_info()
    assert (info.misses, info.hits) == (1, 1)


def test_a_refusing_or_broken_template_is_a_chat_template_error():
    refusing = "{% if messages[0]['role'] != 'system' %}{{ raise_exception('a system message first') }}{% endif %}"
    with pytest.raises(ChatTemplateError, match="a system message first"):
        render_chat(refusing, [{"role": "user", "content": "hi"}])
    with pytest.raises(ChatTemplateError, match="could not be applied"):
        render_chat("{% for m in messages %}", [{"role": "user", "content": "hi"}])


def test_a_loaders_thread_prepares_the_template_the_gui_thread_then_only_renders():
    import threading

    from model.inference.chat import prepare_chat_template
    _compiled.cache_clear()
    worker = threading.Thread(target=prepare_chat_template, args=(CHATML_TEMPLATE,))
    worker.start()
    worker.join()
    render_chat(CHATML_TEMPLATE, [{"role": "user", "content": "hi"}])
    assert (_compiled.cache_info().misses, _compiled.cache_info().hits) == (1, 1)  # compiled there, not here
    prepare_chat_template("{% for m in messages %}")  # broken: left for render_chat to report
    prepare_chat_template(None)
