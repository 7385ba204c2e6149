"""Presenting the training panel on a projector during a run (its settings folded), the probe's
attention map draws one label for every row of a run's early output (a babble of 15 tokens):
the map has the room its labels need."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from layout_checks import settle_until_still  # noqa: E402
from model.io.checkpoints import random_bundle  # noqa: E402

SOURCE, TARGET = "attention", "abcdefghijklmn"  # teacher-forced: 14 tokens and <eos>, 15 rows


@pytest.fixture(scope="module")
def presenting(qapp, tmp_path_factory):
    from explorer.launch import close_window
    from support import build_main_window
    window = build_main_window(tmp_path_factory.mktemp("probe_room"), size=(1280, 720))
    window.lecture.presentation.enter(full_screen=False)
    yield window
    window.lecture.presentation.leave()
    close_window(qapp, window)


@pytest.mark.parametrize("size", [(1280, 720), (1024, 768)])
@pytest.mark.parametrize("theme", ["light", "dark"])
def test_a_projector_shows_every_row_label_of_a_15_token_output(presenting, qtbot, size, theme):
    window = presenting
    window.lecture.set_theme(theme)
    window.resize(*size)
    window.focus_panel("training")
    panel = window.panels["training"]
    panel.controls.settings_button.setChecked(False)  # as a run's start folds them on a short screen
    result = random_bundle("reverse").run(SOURCE, TARGET)
    assert len(result.out_pieces) == 15
    panel.probe.show_snapshot(0, result, SOURCE)
    assert settle_until_still(qtbot, window)
    panel.probe.map.grab()  # a paint: the axes count the labels they draw
    rows, cols = panel.probe.map.label_counts()
    assert rows == (15, 15), f"{rows[0]} of {rows[1]} row labels drawn at {size}"
    assert cols == (len(result.src_pieces), len(result.src_pieces))
    # the probe and its output stay on screen with the map (over the curves, where the room is)
    for widget in (panel.probe.probe_edit, panel.probe.output_label, panel.curves):
        assert widget.isVisible() and widget.height() > 0
