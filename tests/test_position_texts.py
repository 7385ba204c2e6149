"""The positional panel's legends and orderings, without Qt (`model.interpret.position_texts`)."""
from __future__ import annotations

import math

import numpy as np

from model.interpret.position_texts import WAVES_KEY, grouped_columns, pair_entry, shift_key, waves_legend


def test_each_chosen_pair_is_named_by_its_dims_and_wavelength_in_its_layout():
    d = 16
    legend, tip = waves_legend(d, [1, 3], ["#111111", "#222222"], "halves", learned=False, compact=False, muted="#999999")
    for i, colour in ((1, "#111111"), (3, "#222222")):
        lam = 2 * math.pi * 10000 ** (2 * i / d)
        assert f"dim {i} " in legend and f"dim {d // 2 + i}<" in legend  # Marian: sin in i, cos in d/2 + i
        assert f"λ = {lam:.5g}" in legend and f"10000^({2 * i}/{d}) = {lam:.5g}" in tip
        assert colour in legend
    assert WAVES_KEY in legend and WAVES_KEY not in tip
    short, short_tip = waves_legend(d, [1], ["#111111"], "interleaved", learned=False, compact=True, muted="#999999")
    assert WAVES_KEY not in short and WAVES_KEY in short_tip and "dim 2 " in short and "dim 3<" in short
    learned, learned_tip = waves_legend(d, [2], ["#111111"], "interleaved", learned=True, compact=False, muted="#999")
    assert learned.startswith("<b>Learned</b>") and "λ" not in learned and learned_tip == ""
    assert pair_entry(d, 2, "interleaved", learned=False) == f"4, 5   λ = {2 * math.pi * 10000 ** (4 / d):.5g}"
    assert pair_entry(d, 2, "halves", learned=True) == "2, 10"


def test_grouping_puts_every_sin_dim_before_every_cos_dim():
    columns = grouped_columns(8, True, "interleaved")
    assert columns.tolist() == [0, 2, 4, 6, 1, 3, 5, 7]
    assert sorted(columns) == list(range(8))
    assert np.array_equal(grouped_columns(8, False, "interleaved"), np.arange(8))
    assert np.array_equal(grouped_columns(8, True, "halves"), np.arange(8))  # stored grouped already


def test_the_shift_key_names_the_rotation_only_where_one_exists():
    colours = ("#a", "#b", "#c")
    assert "M_k · PE(pos)" in shift_key(colours, rotates=True) and "#c" in shift_key(colours, rotates=True)
    assert "M_k" not in shift_key(colours, rotates=False) and "PE(pos + k)" in shift_key(colours, rotates=False)
