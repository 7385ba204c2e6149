"""The logit lens's words (model.interpret.lens_text), on a hand-made two-layer lens."""
import torch

from model.interpret import lens_text
from model.interpret.lens import LensView


def _lens(marked=()):
    probs = torch.tensor([[[0.5, 0.2], [0.4, 0.3], [0.6, 0.1]], [[0.9, 0.05], [0.8, 0.1], [0.7, 0.2]]])
    pieces = [[["a", "b"], ["c", "d"], ["e", "f"]], [["x", "y"], ["z", "w"], ["q", "r"]]]
    return LensView("decoder", ["<bos>", " the", "frog"], torch.zeros(2, 3, 2, dtype=torch.long), probs, pieces,
                    list(marked))


def test_columns_are_numbered_and_cells_carry_the_top_token_and_its_probability():
    lens = _lens()
    assert lens_text.position_labels(lens.positions) == ["0\u2009<bos>", "1\u2009␣the", "2\u2009frog"]
    texts = lens_text.cell_texts(lens, [1, 0])  # the last layer first
    assert texts[0][2] == ["q", "0.70"] and texts[1][0] == ["a", "0.50"]


def test_the_default_cell_is_the_last_layer_at_the_first_mask_or_the_end_and_a_cell_is_clamped():
    assert lens_text.default_cell(_lens(), None) == (1, 2)
    assert lens_text.default_cell(_lens(marked=[1]), None) == (1, 1)
    assert lens_text.default_cell(_lens(), (7, 9)) == (1, 2)


def test_the_detail_lists_the_cells_top_k_and_the_smoothing_note_appears_only_with_smoothing():
    detail = lens_text.cell_detail(_lens(), 0, 1)
    assert "Layer 1, position 1" in detail and "<b>c</b>" in detail and "0.400" in detail and "<b>z</b>" in detail
    assert lens_text.smoothing_note(0.0, 100, False, "#888") == ""
    note = lens_text.smoothing_note(0.1, 100, False, "#888")
    assert f"{1 - 0.1 + 0.1 / 100:.2f}" in note and "[MASK]" not in note
    assert "at a [MASK]" in lens_text.smoothing_note(0.1, 100, True, "#888")
    assert "Dashed columns" in lens_text.reading_note(_lens(marked=[1]), False)


def test_a_cells_hover_names_its_layer_position_and_top_token():
    assert lens_text.cell_hover(_lens(), 1, 2) == "Layer 2, position 2 (frog): q 0.70 · click for the top 5"
    assert lens_text.cell_hover(_lens(), 0, 1).startswith("Layer 1, position 1 (␣the): c 0.40")
