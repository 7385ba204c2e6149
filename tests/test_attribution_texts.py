"""The attribution panel's bars and texts, without Qt (`model.interpret.attribution.method_texts`)."""
from __future__ import annotations

import numpy as np

from model.interpret.attribution.method_texts import ROW_FILL, bar_rows, legend_html, scores_html, short_rho


def test_each_row_is_scaled_to_its_own_largest_magnitude_and_marks_its_top_token():
    scores = {"occlusion": np.array([0.5, -2.0, 1.0]), "attention": np.array([0.1, 0.2, 0.7]),
              "flow": np.zeros(3)}
    rows = bar_rows(scores)
    heights = np.reshape(rows.height, (3, 3)) / ROW_FILL
    for r, values in enumerate(scores.values()):
        peak = np.abs(values).max()
        expected = np.abs(values) / peak if peak else np.zeros(3)
        np.testing.assert_allclose(heights[r], expected)
    assert rows.negative == [False, True, False] + [False] * 6
    assert np.reshape(rows.best, (3, 3)).tolist() == [[False, True, False], [False, False, True], [False] * 3]
    bases = np.reshape(rows.y0, (3, 3))[:, 0]
    assert list(bases) == sorted(bases, reverse=True)  # the first method on top
    assert [name for _, name in rows.names] == ["occl", "attn", "flow"]
    assert [text for _, text in rows.peaks] == ["2.00", "0.70", "all 0"]


def test_rho_is_printed_short_and_blank_where_undefined():
    assert [short_rho(v) for v in (0.934, -0.21, 0.999, -1.0, float("nan"))] == [".93", "-.21", "1", "-1", ""]


def test_the_tooltips_name_every_method_and_escape_the_tokens():
    table = scores_html(["<s>", "a&b"], {"grad_x_input": np.array([0.25, -1.5])})
    assert "&lt;s&gt;" in table and "a&amp;b" in table and "g×i" in table and "<s>" not in table
    assert "integrated gradients" in legend_html() and "IG" in legend_html()
