"""Mosaics bigger than the screen are averaged per map (exactly the mean of each block, blocked
cells left out) and detailed on zoom with the exact cells (issue 13: 512-token MiniLM grids)."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pyqtgraph as pg  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtGui import QColor, QImage  # noqa: E402

from explorer.theme import SEQUENTIAL  # noqa: E402

from explorer.drawing.mosaic import MosaicLayout, compose  # noqa: E402
import torch  # noqa: E402

from explorer.drawing.indexed_image import NOTHING, colour_table, to_indices  # noqa: E402
from explorer.drawing.pooled_mosaic import (average_down, compose_pooled, compose_region,  # noqa: E402
                                           overview_factor)
from model.interpret.map_sums import block_sums  # noqa: E402


@pytest.fixture(scope="module")
def maps():
    rng = np.random.default_rng(0)
    L, h, t = 2, 3, 37  # 37: not a multiple of the factor, so edge blocks are partial
    allowed = np.tril(np.ones((t, t), bool))
    w = rng.random((L, h, t, t)).astype(np.float32)
    w = np.where(allowed, w, 0.0)
    return w / w.sum(-1, keepdims=True), allowed


def test_each_pixel_is_the_mean_of_its_allowed_cells(maps):
    w, allowed = maps
    layout, f = MosaicLayout.for_shape(w.shape), 4
    image, width, height = compose_pooled(list(w), allowed, layout, f)
    assert (width, height) == (image.shape[1] * f, image.shape[0] * f)
    for layer, head in [(0, 0), (1, 2)]:
        r, c = layout.origin(layer, head)
        r, c = round(r / f), round(c / f)
        assert abs(r * f - layout.origin(layer, head)[0]) <= f / 2  # within half a pixel of the true origin
        for i in range(0, 37, f):
            for j in range(0, 37, f):
                cells = w[layer, head, i:i + f, j:j + f][allowed[i:i + f, j:j + f]]
                got = image[r + i // f, c + j // f]
                if cells.size == 0:
                    assert np.isnan(got)  # every cell blocked: transparent over the hatch
                else:
                    assert got == pytest.approx(cells.mean(), rel=1e-5)


def test_a_region_is_the_full_mosaics_crop(maps):
    w, allowed = maps
    layout = MosaicLayout.for_shape(w.shape)
    full = compose(w, allowed, layout)
    for rows, cols in [((0, 10), (0, 10)), ((30, 60), (20, 95)), ((5, full.shape[0]), (0, full.shape[1]))]:
        np.testing.assert_array_equal(compose_region(list(w), allowed, layout, rows, cols),
                                      full[rows[0]:rows[1], cols[0]:cols[1]])


def test_average_down_ignores_nan_and_keeps_all_nan_blocks_nan():
    a = np.arange(30, dtype=np.float32).reshape(5, 6)
    a[0, 0] = a[0, 1] = a[1, 0] = a[1, 1] = np.nan
    a[4, 5] = np.nan
    out = average_down(a, 2)
    assert out.shape == (3, 3)
    assert np.isnan(out[0, 0])
    assert out[0, 1] == pytest.approx(np.nanmean(a[0:2, 2:4]))
    assert out[2, 2] == pytest.approx(np.nanmean(a[4:5, 4:6]))  # a partial edge block


def test_factor_is_cells_per_pixel():
    layout = MosaicLayout.for_shape((6, 12, 512, 512))
    rows, cols = layout.shape
    assert overview_factor(layout, 1100, 600) == int(cols / 1100)
    assert overview_factor(layout, cols * 2, rows * 2) == 1  # room for every cell: full resolution


def test_the_grid_averages_a_long_input_and_zoom_brings_back_every_cell(qtbot, monkeypatch):
    from explorer.panels.attention.data import AttentionData
    from support import averaged_encoder_grid
    rng = np.random.default_rng(1)
    t = 400
    w = rng.random((2, 4, t, t)).astype(np.float32)
    w /= w.sum(-1, keepdims=True)
    data = AttentionData()
    data.weights["encoder"] = list(w)
    data.allowed["encoder"] = np.ones((t, t), bool)
    data.labels["encoder"] = ([f"t{i}" for i in range(t)], [f"t{i}" for i in range(t)])
    grid, pane = averaged_encoder_grid(qtbot, data, (600, 400))
    assert pane.image.image.shape[1] < t * 4 / 2  # averaged: far fewer pixels than cells
    qtbot.waitUntil(lambda: not pane.detail.isVisible(), timeout=3000)  # the whole mosaic in view: no detail
    layout = pane.layout
    r, c = layout.origin(1, 2)
    pane.plot.vb.setRange(xRange=(c + 10, c + 40), yRange=(r + 5, r + 35), padding=0)
    qtbot.waitUntil(lambda: pane.detail.isVisible(), timeout=3000)
    rect = pane.detail.mapRectToParent(pane.detail.boundingRect())
    r0, c0 = int(rect.top()), int(rect.left())
    crop = pane.detail.image
    assert crop.shape == (int(rect.height()), int(rect.width()))  # one pixel per cell: full detail
    full = compose(w, data.allowed["encoder"], layout)  # the full-resolution mosaic, built here only
    np.testing.assert_array_equal(crop, full[r0:r0 + crop.shape[0], c0:c0 + crop.shape[1]])
    assert r0 - r < 10 and c0 - c < 40 and np.isfinite(crop).sum() > 600  # the zoomed map's cells are there
    pane.plot.vb.autoRange(padding=0)
    qtbot.waitUntil(lambda: not pane.detail.isVisible(), timeout=3000)

    # another head of the same frame keeps the average (it reads every weight); new maps replace it
    import explorer.panels.attention.grid as grid_module
    calls = []
    monkeypatch.setattr(grid_module, "compose_pooled", lambda *a: calls.append(1) or compose_pooled(*a))
    grid.select("encoder", 1, 3)
    grid.set_data(data)
    assert calls == []
    w2 = w[:, :, ::-1, :].copy()  # the same shape, other weights
    data2 = AttentionData()
    data2.weights["encoder"] = list(w2)
    data2.allowed["encoder"] = data.allowed["encoder"]
    data2.labels["encoder"] = data.labels["encoder"]
    grid.set_data(data2)
    assert calls == [1]
    expected, _w, _h = compose_pooled(list(w2), data2.allowed["encoder"], layout, pane.factor)
    np.testing.assert_array_equal(pane.overview, expected)
    # drawn as colour indices (gaps: the transparent one), never averaged again by pyqtgraph
    np.testing.assert_array_equal(pane.image.image, to_indices(expected, (0.0, 1.0)))
    assert not pane.image.autoDownsample and pane.image.lut is pane._index_lut
    pane.image.render()
    qimage = pane.image.qimage
    assert qimage.format() == QImage.Format.Format_Indexed8
    gap_r, gap_c = np.argwhere(np.isnan(expected))[0]
    assert QColor.fromRgba(qimage.pixel(int(gap_c), int(gap_r))).alpha() == 0  # the canvas shows between maps
    r, c = np.argwhere(np.isfinite(expected))[0]
    want = QColor(*(int(v) for v in pg.colormap.get(SEQUENTIAL).map(float(expected[r, c]), mode="byte")[:3]))
    got = QColor.fromRgba(qimage.pixel(int(c), int(r)))
    assert got.alpha() == 255 and max(abs(got.red() - want.red()), abs(got.green() - want.green()),
                                       abs(got.blue() - want.blue())) <= 6  # the map's colour, a step apart at most
    # a short input again: full resolution, weights scaled by pyqtgraph (downsampled if need be)
    small = AttentionData()
    small.weights["encoder"] = list(w[:, :, :9, :9] / w[:, :, :9, :9].sum(-1, keepdims=True))
    small.allowed["encoder"] = np.ones((9, 9), bool)
    small.labels["encoder"] = ([f"t{i}" for i in range(9)], [f"t{i}" for i in range(9)])
    grid.set_data(small)
    assert pane.factor == 1 and pane.overview is None
    assert pane.image.image.dtype == np.float32 and pane.image.lut is pane._float_lut and pane.image.autoDownsample
    np.testing.assert_array_equal(pane.layout.block(pane.image.image, 0, 0),  # the page's first map
                                  small.weights["encoder"][pane.first][pane.head0])


def test_colour_indices_match_the_colour_map_and_keep_nan_transparent():
    """`to_indices` + `colour_table` give each weight its colour map colour (to one of 255
    steps); NaN, the gaps and blocked cells, the transparent entry; the ends clamp."""
    cmap = pg.colormap.get(SEQUENTIAL)
    values = np.array([[0.0, 0.25, 0.5], [0.999, 1.0, np.nan], [-0.5, 1.5, 0.1234]], dtype=np.float32)
    idx = to_indices(values, (0.0, 1.0))
    assert idx.dtype == np.uint8 and idx[1, 2] == NOTHING
    assert idx[0, 0] == 0 and idx[1, 1] == NOTHING - 1 and idx[2, 0] == 0 and idx[2, 1] == NOTHING - 1
    table = colour_table(cmap)
    assert table.shape == (256, 4) and table[NOTHING, 3] == 0 and (table[:NOTHING, 3] == 255).all()
    finite = np.isfinite(values)
    want = cmap.map(np.clip(values[finite], 0, 1), mode="byte")[:, :3].astype(int)
    got = table[idx[finite], :3].astype(int)
    assert np.abs(got - want).max() <= 6
    # other levels: the same colours for values scaled alike
    np.testing.assert_array_equal(to_indices(values * 2 - 1, (-1.0, 1.0))[finite], idx[finite])


@pytest.mark.parametrize("factor", [1, 2, 3, 5, 7])
@pytest.mark.parametrize("shape", [(3, 10, 10), (2, 9, 14), (1, 7, 5)])
def test_block_sums_match_avg_pool2d_times_block_area(shape, factor):
    """The hand-rolled block sums against torch's own pooling (ceil mode: edge blocks partial)."""
    import torch.nn.functional as F
    x = torch.rand(*shape)
    got = block_sums(x, factor)
    mean = F.avg_pool2d(x[:, None], factor, factor, ceil_mode=True)[:, 0]
    area = F.avg_pool2d(torch.ones(1, 1, *shape[1:]), factor, factor, ceil_mode=True, divisor_override=1)[0, 0]
    assert got.shape == mean.shape
    torch.testing.assert_close(got, mean * area, rtol=1e-5, atol=1e-5)
