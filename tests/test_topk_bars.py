"""`TopKBars` (explorer.panels.decoding.bars) on its own: which rows a low plot shows, in what
order, and the chosen token kept in view — checked against the probabilities given."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from explorer.panels.decoding.bars import TopKBars  # noqa: E402
from layout_checks import drawn_labels  # noqa: E402

PIECES = [f"t{i}" for i in range(30)]


def shown_bars(qtbot, height: int, probs, chosen, sample=None, width: int = 400) -> TopKBars:
    bars = TopKBars()
    qtbot.addWidget(bars)
    bars.resize(width, height)
    bars.show()
    bars.set_data(probs, PIECES[: len(probs)], chosen, sample)
    for _ in range(3):
        QApplication.processEvents()
    return bars


def visible_count(bars: TopKBars) -> int:
    y0, y1 = bars.getPlotItem().getViewBox().viewRange()[1]
    return int(round(y1 + 0.4))


def probabilities(n: int = 30) -> np.ndarray:
    p = np.linspace(1.0, 0.1, n) ** 3
    return p / p.sum()


def test_a_low_plot_shows_the_most_probable_in_order_and_moves_a_lower_chosen_token_into_view(qtbot):
    probs = probabilities()
    chosen = 20  # sampled from the tail: rank 21, below the top 10
    bars = shown_bars(qtbot, 200, probs, chosen)
    n = visible_count(bars)
    assert 3 <= n < 10
    assert bars.token_ids[: n - 1] == list(range(n - 1))  # the most probable first, in order
    assert bars.token_ids[n - 1] == chosen  # … and the chosen one, in view
    assert np.allclose(bars.heights[:n], probs[bars.token_ids[:n]])
    assert bars.skip_line.isVisible() and bars.skip_line.value() == pytest.approx(n - 1.5)
    assert "below the top 10" in bars.labels[n - 1].toolTip()
    assert [t for _r, t in drawn_labels(bars.getPlotItem().getAxis("left"))] == PIECES[: n - 1] + [PIECES[chosen]]
    # tall: every one of the top 10 and the chosen one after them, no line needed
    bars.resize(400, 1600)
    for _ in range(3):
        QApplication.processEvents()
    assert bars.token_ids == list(range(10)) + [chosen] and not bars.skip_line.isVisible()


def test_a_chosen_token_in_the_top_k_but_out_of_view_comes_forward(qtbot):
    probs = probabilities()
    bars = shown_bars(qtbot, 200, probs, 8)
    n = visible_count(bars)
    assert n < 9 and bars.token_ids[n - 1] == 8 and "rank 9" in bars.labels[n - 1].toolTip()
    assert sorted(bars.token_ids) == list(range(10))  # nothing lost from the data


def test_a_small_vocabulary_and_a_cleared_plot(qtbot):
    probs = np.array([0.5, 0.3, 0.2])
    bars = shown_bars(qtbot, 400, probs, 0)
    assert bars.token_ids == [0, 1, 2] and not bars.skip_line.isVisible()
    bars.clear_data()
    assert bars.token_ids == [] and not bars.bars.isVisible()
    bars.set_data(probs[::-1].copy(), PIECES[:3], 0)
    assert bars.token_ids == [2, 1, 0] and bars.chosen == 0


@pytest.mark.parametrize("p, text", [(0.925, "0.93"), (0.005, "0.01"), (0.0042, "0.004"), (0.00018, "0.0002"),
                                     (0.0001, "0.0001"), (3e-6, "<0.0001"), (0.0, "0"),
                                     (float("nan"), "NaN")])
def test_probabilities_are_written_in_one_notation(p, text):
    """Plain decimals, never "2e-03" beside "0.01"; what is written rounds to the value."""
    from explorer.style import prob_text
    assert prob_text(p) == text
    if text[0].isdigit():
        assert abs(float(text) - p) <= 0.5 * 10 ** -(len(text.split(".")[-1]) if "." in text else 0) + 1e-12


def test_the_bars_write_small_probabilities_as_decimals_with_the_exact_value_in_the_tooltip(qtbot):
    probs = np.array([0.9, 0.0958, 0.0042, 2e-6])
    bars = shown_bars(qtbot, 600, probs / probs.sum(), 0)
    texts = [bars.labels[j].toPlainText() for j in range(4)]
    assert texts == ["0.90", "0.10", "0.004", "<0.0001"], texts
    assert "p = 0.000002" in bars.labels[3].toolTip()


def test_a_label_smoothed_models_bars_show_its_target_and_name_it_clear_of_the_values(qtbot):
    """Section 5.4: trained with ε = 0.1 over 30 tokens the best guess aims at 1 − ε + ε/V
    (0.903), every other token at ε/V; the line is drawn there, its name beside it inside the
    plot and clear of the top bar's value; none for a model whose ε is not known."""
    from model.io.checkpoints import bundled_checkpoints, load_checkpoint, random_bundle
    assert load_checkpoint(bundled_checkpoints()["reverse"]).label_smoothing == 0.1
    assert random_bundle("reverse").label_smoothing == 0.0
    probs = np.array([0.92] + [0.08 / 29] * 29)
    for width in (300, 900):
        bars = shown_bars(qtbot, 320, probs, 0, width=width)
        bars.set_smoothing(0.1, 30)
        for _ in range(3):
            QApplication.processEvents()
        qtbot.wait(20)  # (a TextItem places its text for the view's transform when painted)
        assert bars.smoothed.isVisible() and bars.smoothed.value() == pytest.approx(1 - 0.1 + 0.1 / 30)
        name = bars.smoothed.label.mapRectToScene(bars.smoothed.label.boundingRect())
        view = bars.getPlotItem().getViewBox().sceneBoundingRect()
        value = bars.labels[0].textItem.mapRectToScene(bars.labels[0].textItem.boundingRect())
        assert view.contains(name) and not name.intersects(value), (width, name, value, view)
        assert "0.90" in bars.smoothed.label.toPlainText() and "ε = 0.1" in bars.smoothed.toolTip()
        bars.set_smoothing(0.0, 30)
        assert not bars.smoothed.isVisible() and not bars.smoothed.label.isVisible()
        bars.set_smoothing(0.1, 30)
        bars.clear_data()  # (the next model, refused before it decodes: no line of the last one's)
        assert not bars.smoothed.isVisible() and not bars.smoothed.label.isVisible()


@pytest.mark.parametrize("width", [300, 900])
def test_the_probability_axis_ends_at_1_and_every_value_stays_inside_the_plot(qtbot, width):
    """A near-certain token: the axis stops at p = 1, and its number (inside its bar) and every other
    row's number lie within the plot's view."""
    probs = np.full(30, 0.05 / 29)
    probs[3] = 0.95
    bars = shown_bars(qtbot, 500, probs, 3, width=width)
    box = bars.getPlotItem().getViewBox()
    assert box.viewRange()[0][1] == pytest.approx(1.0)
    view = box.sceneBoundingRect()
    shown = [label for label in bars.labels if label.isVisible()]
    assert len(shown) >= 3
    for label in shown:
        rect = label.sceneBoundingRect()
        assert view.left() <= rect.left() and rect.right() <= view.right(), label.toPlainText()
