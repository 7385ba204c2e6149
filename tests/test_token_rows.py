"""The texts of the rows of next-token candidates (model.inference.token_rows): checked against the
filters and rankings they describe, computed here independently."""
import html
import re

import torch

from model.inference.labels import display_piece
from model.inference.next_token import cut_by, filtered
from model.inference.token_rows import (
    generated_heading,
    mask_context,
    mask_heading,
    mask_hint,
    probability_axis_end,
    rank_tips,
    rows_title,
    sampled_rows,
    values_inside,
    words_html,
)


def test_words_show_the_window_escaped_with_the_marks_in_place_and_say_what_is_left_out():
    pieces = ["<bos>", "the", "cow", "[MASK]", "says", "moo", "<eos>"]
    whole = words_html(pieces, {3: "<b>X</b>"})
    assert whole.split(" ") == [html.escape(p) for p in pieces[:3]] + ["<b>X</b>"] + [html.escape(p) for p in pieces[4:]]
    window = words_html(pieces, {3: "<b>X</b>"}, 2, 5)
    assert window == "… cow <b>X</b> says …"
    assert not words_html(pieces, {}, 0, 3).startswith("…") and words_html(pieces, {}, 0, 3).endswith("…")


def test_a_mask_in_its_context_is_a_blank_among_its_neighbours():
    pieces = ["<bos>", "the", "[MASK]", "lives", "in", "the", "lake"]
    assert mask_context(pieces, 2, 1) == "… the ____ lives …"
    assert mask_context(pieces, 2, 9) == " ".join([display_piece("<bos>"), "the", "____", "lives", "in", "the", "lake"])


def test_a_mask_heading_names_its_position_and_its_first_candidate():
    assert mask_heading(2, 7, ["a very long word", "b"])[1].endswith(f"“{display_piece('a very long word')}”")
    assert "[MASK] 2" in mask_heading(2, 7, ["b"])[0] and "position 7" in mask_heading(2, 7, ["b"])[0]
    assert mask_heading(1, 0, [])[1].endswith("“?”")
    assert mask_hint("<mask>", "the <mask> sat").count("<mask>") == 3


def test_sampled_rows_name_the_filter_that_cut_a_token_and_its_tempered_probability():
    logits = torch.randn(50, generator=torch.Generator().manual_seed(0)) * 3
    f = filtered(logits, 0.7, top_k=8, top_p=0.6)
    ids = f.tempered.argsort(descending=True)[:12].tolist()
    notes = cut_by(f, ids)
    texts = sampled_rows(notes, f.tempered[ids].tolist(), f.final[ids].tolist())
    assert {"top-k", "top-p", ""} <= set(notes)  # the row has tokens kept and cut by each filter
    for i, note, text in zip(ids, notes, texts):
        if note:
            was = float(re.search(r"was ([0-9.]+)", text).group(1))
            assert note in text and float(f.final[i]) == 0 and abs(was - float(f.tempered[i])) < 5e-4
        else:
            assert abs(float(text) - float(f.final[i])) < 5e-4 and float(f.final[i]) > 0
    assert abs(sum(float(t) for t, n in zip(texts, notes) if not n) - 1.0) < 5e-3  # what is kept sums to one


def test_rank_tips_count_from_one_and_say_when_a_token_ranks_below_the_top_k():
    probs = torch.rand(6).tolist()
    tips = rank_tips([0, 1, 2, 9], probs[:4], k=3)
    assert tips[:3] == [f"p = {p:.6f}, rank {r}" for r, p in zip((1, 2, 3), probs)]
    assert tips[3].endswith("below the top 3")
    assert rows_title(0, 100) == "" and "12,345" in rows_title(5, 12345)
    assert generated_heading("sample", 4) == "sampled, seed 4" and generated_heading("beam", 4) == "beam"


def test_a_probability_axis_never_passes_1_and_a_zoomed_one_leaves_room_past_the_largest():
    assert probability_axis_end(0.93, zoom=False) == 1.0
    assert probability_axis_end(0.93, zoom=True) == 1.0  # 0.93 × room would pass 1
    end = probability_axis_end(0.2, zoom=True)
    assert 0.2 < end < 1.0


def test_only_numbers_that_would_pass_the_axis_end_go_inside_their_bars():
    rights, widths = [0.95, 0.5, 0.001], [0.1, 0.1, 0.1]
    assert values_inside(rights, widths, 1.0) == [True, False, False]
    assert values_inside(rights, widths, 0.55) == [True, True, False]
