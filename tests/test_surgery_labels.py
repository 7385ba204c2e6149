"""The head-surgery grid's texts, computed without Qt: pages cover every layer once, tab titles
count the edits on their page, each head's tooltip names it and its edit."""
import pytest

from model.interpret.surgery_labels import NAMES, PAGE_LAYERS, SYMBOLS, head_cell, layer_pages, page_titles


@pytest.mark.parametrize("n_layers", [1, 6, PAGE_LAYERS + 2, PAGE_LAYERS + 3, 30, 31])
@pytest.mark.parametrize("fit", [1, 4, PAGE_LAYERS, PAGE_LAYERS + 2, 40])
def test_pages_cover_every_layer_once_in_order_and_hold_no_more_rows_than_fit(n_layers, fit):
    pages = layer_pages(n_layers, fit)
    assert [layer for page in pages for layer in page] == list(range(n_layers))
    assert all(len(p) <= fit for p in pages)
    if n_layers <= fit:
        assert len(pages) == 1  # every layer in sight where the room holds them
    else:
        assert all(len(p) <= PAGE_LAYERS for p in pages) and len(pages) == -(-n_layers // min(fit, PAGE_LAYERS))
    assert layer_pages(n_layers) == layer_pages(n_layers, PAGE_LAYERS + 2)  # room unknown: a few over ten on one page


def test_a_tab_counts_the_edits_of_its_own_kind_on_its_page():
    pages = layer_pages(30)
    edits = {("decoder_self", 0, 1): "zero", ("decoder_self", 12, 0): "mean", ("decoder_self", 15, 2): "uniform",
             ("encoder", 25, 0): "zero"}
    assert page_titles("decoder_self", pages, edits) == ["L1–10 (1 edited)", "L11–20 (2 edited)", "L21–30"]
    assert page_titles("encoder", pages, edits)[2] == "L21–30 (1 edited)"


def test_a_heads_cell_shows_its_edit():
    for op in (None, "zero", "mean", "uniform"):
        symbol, tip = head_cell(("cross", 2, 3), op)
        assert symbol == SYMBOLS[op] and "L3 H4" in tip and NAMES[op] in tip
    assert len(set(SYMBOLS.values())) == len(SYMBOLS)  # every edit told apart
