"""Section 3.5's sinusoids against the formula evaluated with Python's `math`, and Section 3.4's scaling."""
import math

import pytest
import torch

from model import get_positional_encoding, record
from model.nn.positional import wavelengths


def paper_pe(pos: int, dim: int, d_model: int) -> float:
    """PE(pos, 2i) = sin(pos / 10000^(2i/d_model)); PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model))."""
    two_i = dim - dim % 2
    angle = pos / 10000 ** (two_i / d_model)
    return math.sin(angle) if dim % 2 == 0 else math.cos(angle)


@pytest.mark.parametrize("d_model", [8, 64, 512])
def test_matches_paper_formula(d_model):
    pe = get_positional_encoding(d_model, 200)
    assert pe.shape == (200, d_model) and pe.dtype == torch.float32
    for pos in (0, 1, 2, 7, 50, 199):
        for dim in sorted({0, 1, 2, 3, d_model // 2, d_model // 2 + 1, d_model - 2, d_model - 1}):
            assert abs(pe[pos, dim].item() - paper_pe(pos, dim, d_model)) < 1e-6, (pos, dim)


def test_every_entry_matches_for_a_small_table():
    pe = get_positional_encoding(16, 30)
    expected = torch.tensor([[paper_pe(p, i, 16) for i in range(16)] for p in range(30)])
    torch.testing.assert_close(pe, expected, atol=1e-6, rtol=0)


def test_position_zero_alternates_zero_and_one():
    pe = get_positional_encoding(10, 3)
    assert torch.equal(pe[0], torch.tensor([0.0, 1.0] * 5))


def test_wavelengths_form_the_papers_geometric_progression():
    w = wavelengths(512)
    assert math.isclose(w[0].item(), 2 * math.pi) and w[0] == w[1]
    assert math.isclose(w[-1].item(), 2 * math.pi * 10000 ** (510 / 512))
    pe = get_positional_encoding(512, 10)  # dimension 2i really has period w[2i]
    i = 6
    p = w[i].item()
    assert abs(math.sin(3 * 2 * math.pi / p) - pe[3, i].item()) < 1e-6


@pytest.mark.parametrize("d_model, max_len", [(7, 10), (0, 10), (8, 0)])
def test_bad_sizes_rejected(d_model, max_len):
    with pytest.raises(ValueError):
        get_positional_encoding(d_model, max_len)


def test_model_buffer_and_recorded_step_equal_the_formula(make_model):
    model = make_model(d_model=32, max_len=40)
    table = torch.tensor([[paper_pe(p, i, 32) for i in range(32)] for p in range(40)])
    torch.testing.assert_close(model.positional.table, table, atol=1e-6, rtol=0)
    assert "positional.pe" not in model.state_dict()  # recomputed, never saved in a checkpoint
    src, tgt = torch.tensor([[3, 4, 5, 6, 7]]), torch.tensor([[1, 2, 3]])
    with torch.no_grad(), record(model) as trace:
        model(src, tgt)
    assert trace["encoder.positional"].axes == ("src", "d_model")
    torch.testing.assert_close(trace["encoder.positional"].tensor, table[:5], atol=1e-6, rtol=0)
    torch.testing.assert_close(trace["decoder.positional"].tensor, table[:3], atol=1e-6, rtol=0)


def test_embeddings_are_scaled_by_sqrt_d_model_then_positions_added(make_model):
    """Section 3.4: E[token]·√d_model + PE(pos)."""
    model = make_model(d_model=64)
    src = torch.tensor([[3, 4, 0, 6]])
    with torch.no_grad(), record(model) as trace:
        model(src, torch.tensor([[1, 2]]))
    tokens = trace["encoder.embedding.tokens"].tensor
    torch.testing.assert_close(tokens, model.src_embed.weight.detach()[src])
    assert torch.all(tokens[0, 2] == 0)  # the padding row stays zero
    torch.testing.assert_close(trace["encoder.embedding.scaled"].tensor, tokens * 8.0)
    pe = get_positional_encoding(64, 4)
    torch.testing.assert_close(trace["encoder.input"].tensor, tokens * 8.0 + pe, atol=1e-6, rtol=0)


def test_learned_positional_step_is_the_learned_table(make_model):
    model = make_model(positional="learned", max_len=20)
    with torch.no_grad(), record(model) as trace:
        model(torch.tensor([[3, 4, 5]]), torch.tensor([[1, 2, 3, 4]]))
    assert torch.equal(trace["decoder.positional"].tensor, model.positional.weight.detach()[:4])
    assert "positional.weight" in model.state_dict()  # learned: saved with the model


def test_the_embedding_sum_adds_up_and_says_so(make_model):
    """`embedding_sum` checks E·√d + PE against the recorded input; its summary names the terms and
    the error it measured."""
    from model.interpret.positions import embedding_sum
    model = make_model(d_model=32)
    with torch.no_grad(), record(model) as trace:
        model(torch.tensor([[3, 4, 5]]), torch.tensor([[1, 2]]))
    checked = embedding_sum(trace, "encoder", model)
    assert [name for name, _, _ in checked.terms] == ["encoder.embedding.scaled", "encoder.positional", "encoder.input"]
    assert checked.error < 1e-6 and checked.norm_error is None
    text = checked.summary("encoder")
    assert f"max |scaled + PE − input| = {checked.error:.1e}" in text and "same colour scale for all 3" in text
    assert "LayerNorm" not in text and "Rotary" not in text


def test_symmetric_levels_centre_zero_and_cover_every_value():
    import numpy as np

    from model.interpret.positions import symmetric_levels
    a, b = np.array([[0.2, -3.5]]), np.array([1.0, 2.0])
    lo, hi = symmetric_levels(a, b)
    assert lo == -hi and lo <= min(a.min(), b.min()) and hi >= max(a.max(), b.max()) and hi == 3.5
    assert symmetric_levels(np.zeros(3)) == (-1.0, 1.0) and symmetric_levels() == (-1.0, 1.0)


def test_the_titles_and_the_shift_texts_follow_the_layout_and_the_table():
    from model.interpret.positions import shift_error, shift_texts, sinusoid_table, table_titles

    formula, title = table_titles("model", "halves", 50, 16)
    assert "PE(pos, d/2+i)" in formula and "50 positions × d_model = 16 (sin dims, then cos dims)" in title
    formula, title = table_titles("learned", "interleaved", 8, 4)
    assert formula.startswith("Learned") and title.startswith("Learned P") and "sin dims" not in title
    table = sinusoid_table(16, 30)
    error = shift_error(table, 5, "interleaved")
    heading, text = shift_texts(False, 3, 5, 30, 16, "interleaved", error)
    assert heading == "PE(3 + 5) and M_5 · PE(3) coincide" and f"{error:.1e}" in text and "25 positions × 16" in text
    assert "no built-in M_k" in shift_texts(True, 3, 5, 30, 16, "interleaved", None)[1]
