"""The patching picture's words (model.interpret.patching_text): the numbers they quote are the
result's own, a cell asked for is clamped to its map, and the default cell is the measured one."""
import numpy as np
import pytest
import torch

from model.interpret import patching_text
from model.interpret.patching import activation_patching
from model.io.checkpoints import bundled_checkpoints, load_checkpoint


@pytest.fixture(scope="module")
def result():
    torch.set_num_threads(1)
    bundle = load_checkpoint(bundled_checkpoints()["gpt-facts"])
    return activation_patching(bundle, "the duck says", "the cow says")


def test_the_summary_quotes_the_results_numbers(result):
    text = patching_text.summary(result)
    assert f"{result.clean_diff:+.2f}" in text and f"{result.corrupted_diff:+.2f}" in text
    assert f"position {result.position}" in text and f"batched into {result.forwards} forwards" in text


def test_the_summary_counts_the_cells_drawn_and_every_cell(result):
    """One patched run per cell: the count said is the maps' cells (rows × columns), not the batches."""
    cells = sum(len(m.rows) * len(m.columns) for m in result.maps)
    assert f"one patched run a cell ({cells})" in patching_text.summary(result, "decoder")
    some = result.maps[:2]
    result = type(result)(**{**vars(result), "maps": some + [type(m)(**{**vars(m), "stack": "encoder"})
                                                              for m in result.maps[2:]]})
    shown = sum(len(m.rows) * len(m.columns) for m in some)
    assert f"({shown} on these maps, {cells} in all)" in patching_text.summary(result, "decoder")


def test_a_maps_title_under_its_stack_drops_the_stack(result):
    for m in result.maps:
        title = patching_text.map_title(m)
        assert title[0].isupper() and m.stack not in title.lower()
        assert m.title.lower() == f"{m.stack} {title.lower()}"


def test_a_cell_is_clamped_to_its_map_and_the_default_is_the_measured_position(result):
    maps = [m for m in result.maps if m.stack == "decoder"]
    m, layer, col = patching_text.chosen_cell(result, maps, None, "decoder")
    assert m is maps[0] and layer == len(m.rows) - 1 and col == min(result.position, len(m.columns) - 1)
    far = patching_text.chosen_cell(result, maps, (maps[1].key, 99, 99), "decoder")
    assert far == (maps[1], len(maps[1].rows) - 1, len(maps[1].columns) - 1)
    assert patching_text.chosen_cell(result, [], None, "decoder") is None


def test_a_cells_detail_and_hover_carry_its_share_and_top_tokens(result):
    m = result.maps[0]
    detail = patching_text.cell_detail(result, m, 0, 1, "#888888")
    assert f"restores <b>{m.restored[0, 1]:.2f}</b>" in detail and f"{m.logit_diff[0, 1]:+.2f}" in detail
    assert all(f"<b>{piece}</b>" in detail for piece in m.top_pieces[0][1] if piece.isalpha())
    assert f"restores {m.restored[0, 1] + 0.0:.2f}" in patching_text.cell_hover(m, 0, 1)
    heads = next(m for m in result.maps if m.site == "head")
    assert "head 2 (all positions)" in patching_text.cell_hover(heads, 0, 1)


def test_a_map_is_called_flat_only_when_every_cell_restores_less_than_the_threshold(result):
    restored = result.maps[0].restored
    flat = patching_text.flat_caption
    assert flat(np.full_like(restored, 0.009)) and flat(-np.full_like(restored, 0.009))
    assert not flat(np.full_like(restored, 0.011)) and not flat(restored[:0])
