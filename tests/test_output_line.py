"""The output line counts what the model read and wrote as the panels' rows do (no <bos>, no
<eos>), and draws in the palette it is given."""
from __future__ import annotations

from types import SimpleNamespace

from model.interpret.output_line import output_forms, output_html, token_counts
from model.io.checkpoints import random_bundle

PALETTE = SimpleNamespace(text="#000001", accent="#000002", warning="#000003", muted="#000004")


def test_a_teacher_forced_run_reads_its_source_and_writes_its_target():
    bundle = random_bundle("reverse")
    result = bundle.run("abcde", target="edc")
    assert token_counts(result) == "5 in + 3 out"
    assert len(result.src_pieces) == 5 and len(result.tgt_pieces) == 1 + 3  # the rows the panels draw
    line = output_html(result, bundle, PALETTE, edited=2)
    assert "(5 in + 3 out)" in line and "#000001" in line and "#000003" in line and "2 heads edited" in line


def test_a_decoder_only_run_counts_its_prompt_in_and_its_continuation_out():
    result = SimpleNamespace(src_pieces=[], tgt_pieces=["<bos>", "the", "frog", "lives", "here"], n_prompt=2)
    assert token_counts(result) == "2 in + 2 out"


def test_a_note_leads_the_line_and_a_long_prompt_shows_its_end_then_the_whole_continuation():
    """A cut line keeps what matters: the out-of-range note first, the model's own words whole."""
    bundle = random_bundle("reverse")
    result = bundle.run("abcde")
    line = output_html(result, bundle, PALETTE, notes=["32 letters: this model was trained on 1–24", "second"])
    assert line.startswith('<span style="color:#000003;">⚠ 32 letters') and "second" not in line
    assert line.index("⚠") < line.index("Output (5 in")
    words = ["one", "two", "three", "four", "five", "six", "seven"]
    result = SimpleNamespace(src_pieces=[], tgt_pieces=["<bos>", *words, "eight", "nine"], n_prompt=len(words),
                             mask_predictions=None, output_text="eight nine", target_text=None)
    gpt = SimpleNamespace(has_output_layer=True, tgt_tokenizer=SimpleNamespace(join=" ".join))
    line = output_html(result, gpt, PALETTE)
    assert "… four five six seven</span>" in line and "three" not in line and "eight nine</b>" in line
    result.n_prompt, result.tgt_pieces = 2, ["<bos>", "one", "two", "eight", "nine"]
    assert '">one two</span>' in output_html(result, gpt, PALETTE)  # short: the whole prompt, no "…"


def test_a_narrow_line_gives_up_the_prompt_before_the_output():
    """The forms a narrow line tries: fewer prompt tokens each time, the output whole in every one."""
    words = ["one", "two", "three", "four", "five", "six"]
    result = SimpleNamespace(src_pieces=[], tgt_pieces=["<bos>", *words, "seven"], n_prompt=len(words),
                             mask_predictions=None, output_text="seven", target_text=None)
    gpt = SimpleNamespace(has_output_layer=True, tgt_tokenizer=SimpleNamespace(join=" ".join))
    forms = output_forms(result, gpt, PALETTE)
    assert forms[0] == output_html(result, gpt, PALETTE)
    assert all("seven</b>" in form for form in forms) and len(forms) == 5
    assert [len(form) for form in forms] == sorted((len(form) for form in forms), reverse=True)
    assert '">… </span>' in forms[-1] and "six" not in forms[-1]
    bundle = random_bundle("reverse")
    assert output_forms(bundle.run("abc"), bundle, PALETTE) == [output_html(bundle.run("abc"), bundle, PALETTE)]
