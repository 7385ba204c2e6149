"""A long decode on a beamer: the decoding panel fits the screen and names every token.

The bundled `reverse` model decodes the 26 letters into a 26-token sequence, so its step
maps are 26 × 26 (cross-attention 26 × 26 source tokens). At 1280×720 and 1024×768 in
presentation mode, built in the order `--screenshot` builds it (model and decode first, then
the window shown and presenting — the order that once let the maps' minimum sizes make the
panel scroll), the panel must:
- not scroll, and keep every widget inside the window (tests/layout_checks.py);
- keep every plot ≥ MIN_PLOT and every QLabel / button text whole;
- draw every token label of every shown map (none skipped, none below the legible minimum),
  each inside its map's view (QFontMetricsF-measured rectangles from the axis' draw specs);
- show the next-token caption whole, and the step maps' titles unelided;
- where the mask map gives up its room, say on the self-attention map that it is masked.
"""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import QRectF  # noqa: E402
from PySide6.QtGui import QFontMetricsF  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from explorer import presentation  # noqa: E402
from explorer.drawing.token_axis import MIN_LABEL_PT  # noqa: E402
from layout_checks import clipped_texts, cramped_titles, drawn_labels, outside_window, shown, small_plots  # noqa: E402

LETTERS = "abcdefghijklmnopqrstuvwxyz"
SIZES = ((1280, 720), (1024, 768))


def settle(rounds: int = 8) -> None:
    for _ in range(rounds):  # layout, pyqtgraph's deferred geometry, the flow's reflow, paint
        QApplication.processEvents()


@pytest.fixture(scope="module")
def reverse_bundle():
    from explorer.runner import load_bundle
    return load_bundle("reverse")


def open_decoding(qapp, bundle, text: str, size: tuple[int, int], folder):
    """The window as `--screenshot` builds it: model and decode first, then shown and presenting."""
    from explorer.main_window import MainWindow
    from explorer.runner import Runner
    from explorer.state import SessionState
    from PySide6.QtCore import QSettings
    presentation.apply_theme(QApplication.instance(), "light")  # as the app starts: its stylesheet first
    state = SessionState()
    runner = Runner(state, synchronous=True)
    settings = QSettings(str(folder / "s.ini"), QSettings.IniFormat)
    window = MainWindow(state, runner, settings=settings, restore=False, persist=False)
    window.resize(*size)
    state.set_bundle(bundle)
    runner.run(text, None)
    window.show()
    window.lecture.presentation.enter(full_screen=False)
    window.focus_panel("decoding")
    settle()
    return window


def close_decoding(qapp, window) -> None:
    from explorer.launch import close_window
    window.lecture.presentation.leave()
    presentation.apply_theme(QApplication.instance(), "light")
    close_window(qapp, window)


@pytest.fixture(scope="module", params=SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def long_decode(request, qapp, reverse_bundle, tmp_path_factory):
    window = open_decoding(qapp, reverse_bundle, LETTERS, request.param, tmp_path_factory.mktemp("decode"))
    yield window, request.param
    close_decoding(qapp, window)


def label_problems(name: str, heatmap) -> list[str]:
    """Every token of the map's frame labelled, at ≥ MIN_LABEL_PT, each label inside its axis
    and the view."""
    problems = []
    view = heatmap.plot_widget
    frame = QRectF(view.viewport().rect()).adjusted(-1, -1, 1, 1)
    for axis, n in ((heatmap.rows_axis, heatmap._frame[0]), (heatmap.cols_axis, heatmap._frame[1])):
        labels = drawn_labels(axis)
        if len(labels) != n:
            problems.append(f"{name} {axis.orientation}: {len(labels)} of {n} token labels drawn")
        if axis.fit.pt < MIN_LABEL_PT:
            problems.append(f"{name} {axis.orientation}: labels at {axis.fit.pt} pt < {MIN_LABEL_PT}")
        advance = QFontMetricsF(axis.label_font(axis.fit.pt)).horizontalAdvance
        painted = axis.boundingRect().adjusted(-1, -1, 1, 1)  # token axes clip their painting to it
        for rect, text in labels:
            if not painted.contains(rect):
                problems.append(f"{name} {axis.orientation}: label {text!r} outside its axis (cut off)")
            on_screen = view.mapFromScene(axis.mapRectToScene(rect)).boundingRect()
            if not frame.contains(QRectF(on_screen)):
                problems.append(f"{name} {axis.orientation}: label {text!r} at {on_screen.getRect()} outside the view")
            along = rect.height() if axis.fit.rotated and axis.horizontal else rect.width()
            if advance(text) > along + 1:
                problems.append(f"{name} {axis.orientation}: label {text!r} needs {advance(text):.0f} px, has {along:.0f}")
    return problems


def test_long_decode_fits_and_names_every_token(long_decode):
    window, size = long_decode
    panel = window.panels["decoding"]
    run = panel.run
    assert run is not None and len(run.steps) >= 20  # a long decode (26 steps with the bundled model)
    assert not panel.side_by_side  # a beamer: the two halves are tabs
    assert panel.tabs.currentWidget() is panel.step_page
    problems = outside_window(panel, window) + clipped_texts(panel) + small_plots(panel) + cramped_titles(panel)
    maps = {"mask": panel.mask_map, "self": panel.self_map, "cross": panel.cross_map}
    shown_maps = {name: m for name, m in maps.items() if shown(m)}
    assert {"self", "cross"} <= set(shown_maps)
    for name, heatmap in shown_maps.items():
        problems += label_problems(name, heatmap)
        if heatmap.title.text().replace("\n", " ") != heatmap.title.text():
            problems.append(f"title {heatmap.title.text()!r} elided")
    if "mask" not in shown_maps:  # its room went to the others' labels: the mask is named on the self map
        assert panel.self_map.title.text().startswith("Masked self-attention")
    caption = panel.bars.getPlotItem().titleLabel
    need = caption.item.boundingRect().width()
    if need > caption.geometry().width() + 1:
        problems.append(f"caption {panel.bars.caption!r}: {need:.0f} px in a {caption.geometry().width():.0f}-px row")
    assert not problems, f"decoding at {size[0]}×{size[1]}:\n  " + "\n  ".join(problems)


def test_long_decode_parallel_pass_names_every_token(long_decode):
    window, size = long_decode
    panel = window.panels["decoding"]
    panel.tabs.setCurrentWidget(panel.parallel)
    try:
        settle()
        problems = outside_window(panel, window) + small_plots(panel) + label_problems("parallel", panel.parallel.heatmap)
    finally:
        panel.tabs.setCurrentWidget(panel.step_page)
        settle()
    assert not problems, f"parallel pass at {size[0]}×{size[1]}:\n  " + "\n  ".join(problems)


def test_a_short_decode_on_a_1024_beamer_shows_all_three_maps_with_every_label(qapp, reverse_bundle, tmp_path):
    """"transformer" (12 × 12 maps) at 1024×768: the three maps stand in one row over the bars,
    which need less height than width: each map ≥ 200 px (a row of four gave them 172 px, and
    a 2 × 2 grid 120-px maps that showed every other token)."""
    window = open_decoding(qapp, reverse_bundle, "transformer", (1024, 768), tmp_path)
    try:
        panel = window.panels["decoding"]
        maps = {"mask": panel.mask_map, "self": panel.self_map, "cross": panel.cross_map}
        assert all(shown(m) for m in maps.values()), "a 12-token decode needs no map folded away"
        assert panel.plots.columns == 3
        for heatmap in maps.values():
            drawn = heatmap.image.sceneBoundingRect()
            assert min(drawn.width(), drawn.height()) >= 200, (heatmap.title.text(), drawn)
        bars, cross = panel.bars.geometry(), panel.cross_map.geometry()
        assert bars.top() >= cross.bottom() and bars.width() >= 3 * cross.width()  # the bars: a strip under them
        problems = clipped_texts(panel)
        for name, heatmap in maps.items():
            problems += label_problems(name, heatmap)
            if heatmap.title.text().replace("\n", " ") != heatmap.title.text():
                problems.append(f"title {heatmap.title.text()!r} elided to {heatmap.title.text()!r}")
        assert not problems, "\n  ".join(problems)
    finally:
        close_decoding(qapp, window)


def test_a_maps_least_height_counts_the_title_lines_of_the_width_asked(qapp):
    """The flow weighs column counts by each map's least size there: a title on two lines in a
    narrow column, on one in a wide one — not the lines it happens to have now (the chosen
    arrangement then depended on what was shown before)."""
    import numpy as np
    from PySide6.QtGui import QFontMetricsF
    from explorer.drawing.token_heatmap import TokenHeatmap

    heatmap = TokenHeatmap("Cross-attention L1 H1")
    heatmap.title.break_at = " "
    heatmap.set_data(np.eye(4), list("abcd"), list("abcd"))
    whole = QFontMetricsF(heatmap.title.font()).horizontalAdvance(heatmap.title.text())
    narrow, wide = heatmap.least_size(width=whole * 0.85), heatmap.least_size(width=whole * 2)
    step = heatmap.title.fontMetrics().lineSpacing()
    assert narrow[1] - wide[1] == step  # one more line where it must break
    heatmap.resize(int(whole * 0.85), 300)  # now drawn on two lines: the answers stay the same
    heatmap.show()
    qapp.processEvents()
    assert heatmap.title.text().count("\n") == 1
    assert heatmap.least_size(width=whole * 0.85) == narrow and heatmap.least_size(width=whole * 2) == wide
    heatmap.deleteLater()
