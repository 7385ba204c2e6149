"""The output line counts what the model read and wrote as the panels' rows do (no <bos>, no
<eos>), and draws in the palette it is given."""
from __future__ import annotations

from types import SimpleNamespace

from model.interpret.output_line import output_html, token_counts
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
