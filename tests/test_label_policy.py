"""The one label policy of every map, without Qt (`model.inference.labels`): upright while labels
fit, turned when that draws more, else every k-th; bar-chart ticks; round steps; grid columns."""
from __future__ import annotations

import math

import numpy as np
import pytest

from model.inference.labels import (
    GAP_PX,
    LINE_SHARE,
    STACK_GAP_PX,
    best_columns,
    display_piece,
    fitted_ticks,
    grid_layout,
    label_count,
    masked_runs,
    nice_at_least,
    plan,
)

LINE = 20.0


def test_labels_stay_upright_while_they_fit_side_by_side():
    widths = [30.0, 50.0, 40.0]
    assert plan(widths, LINE, max(widths) + GAP_PX, horizontal=True) == (False, 1)


@pytest.mark.parametrize("cell", [2.0, 5.0, 9.0, 17.0, 25.0])
def test_narrow_columns_turn_or_stride_and_what_is_drawn_fits(cell):
    """Whatever the cell, the labels drawn have room: stacked ones a line share each, upright ones
    their width; turning is chosen only when it draws more labels than upright would."""
    widths = [60.0] * 10
    turned, stride = plan(widths, LINE, cell, horizontal=True)
    upright_stride = max(1, math.ceil((60.0 + GAP_PX) / cell))
    stacked_stride = max(1, math.ceil((LINE_SHARE * LINE + STACK_GAP_PX) / cell))
    assert stride == min(upright_stride, stacked_stride)
    assert turned == (stacked_stride < upright_stride)
    assert stride * cell >= (LINE_SHARE * LINE + STACK_GAP_PX if turned else 60.0 + GAP_PX)


def test_a_row_axis_stacks_and_never_turns():
    turned, stride = plan([200.0, 10.0], LINE, 5.0, horizontal=False)
    assert not turned and stride * 5.0 >= LINE_SHARE * LINE + STACK_GAP_PX > (stride - 1) * 5.0


def test_tokens_as_labels_and_bar_ticks():
    assert display_piece(" the") == "␣the"
    assert display_piece("internationalisation") == "internat…"
    ticks = fitted_ticks(["alpha", "beta", "gamma"], slot_px=32, char_px=10)  # 3 characters fit
    assert [t for _, t in ticks] == ["al…", "be…", "ga…"] and [x for x, _ in ticks] == [0, 1, 2]
    sparse = fitted_ticks([str(i) for i in range(10)], slot_px=4, char_px=10, offset=0.5)
    positions = [x for x, _ in sparse]
    assert positions[0] == 0.5 and len(set(np.diff(positions))) == 1 and len(sparse) < 10  # every k-th


@pytest.mark.parametrize("step", [0.03, 0.7, 1.0, 3.2, 45.0, 999.0])
def test_round_steps_are_the_smallest_1_2_5_times_a_power_of_ten(step):
    nice = nice_at_least(step)
    mantissa = nice / 10 ** math.floor(math.log10(nice))
    assert nice >= step * (1 - 1e-9) and round(mantissa, 6) in (1.0, 2.0, 5.0)
    smaller = [m * 10 ** e for e in range(-3, 4) for m in (1, 2, 5) if m * 10 ** e < nice * (1 - 1e-9)]
    assert all(s < step for s in smaller)


def test_masked_runs_cover_the_mask_and_best_columns_make_maps_largest():
    causal = np.triu(np.ones((5, 5), dtype=bool), k=1)
    covered = np.zeros_like(causal)
    for r, start, stop in masked_runs(causal):
        covered[r, start:stop] = True
    assert (covered == causal).all() and len(masked_runs(causal)) == 4
    n, width, height = 6, 900.0, 600.0
    best = best_columns(n, width, height, least=100.0)
    side = lambda c: min(width / c, height / math.ceil(n / c))  # noqa: E731
    assert all(side(best) >= side(c) for c in range(1, n + 1))
    assert best_columns(6, 250.0, 2000.0, least=100.0) <= 2  # never below `least` wide


def test_the_count_names_the_axis_missing_most_and_says_when_only_part_is_in_view():
    assert label_count([(24, 24, 24), (10, 10, 10)]) == ("", "")  # every label drawn: no count
    assert label_count([(8, 24, 24), (5, 6, 6)]) == ("8/24 labels", "8 of 24 labels")  # 8/24 < 5/6
    assert label_count([(6, 6, 24)]) == ("6 of 24 in view", "6 of 6 labels, 24 in all")
    assert label_count([(4, 12, 48)]) == ("4/12 of 48 labels", "4 of 12 labels, 48 in all")


def test_grid_layout_fits_sections_with_their_headings_where_the_maps_stay_readable():
    heading, least, spacing = 30.0, 200, 6
    cols, side = grid_layout([4, 4], 1150, 560, heading, least, spacing)
    rows = 2 * math.ceil(4 / cols)
    assert side >= least and rows * (side + spacing) + 2 * heading <= 560  # both sections, no scrolling


@pytest.mark.parametrize("counts, width, height", [([12], 900, 700), ([4, 4, 4], 600, 900), ([16], 300, 300),
                                                   ([7], 1200, 200), ([], 500, 500)])
def test_grid_layout_fits_every_map_or_keeps_them_readable_and_scrolls(counts, width, height):
    heading, least, spacing = 20.0, 150, 6
    cols, side = grid_layout(counts, width, height, heading, least, spacing)
    assert cols >= 1 and side >= least
    rows = sum(math.ceil(c / cols) for c in counts)
    assert cols * (side + spacing) <= width or cols == 1  # never wider than the grid
    if rows * (side + spacing) + max(len(counts), 1) * heading > height:  # too many for one screen: it scrolls,
        assert side <= max(least, height - heading - spacing)  # a map at a time fits
        assert max(counts) % cols == 0 or cols == min(max(counts), int(width // (least + spacing)))  # whole rows
