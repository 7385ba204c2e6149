"""Exports for slides: every panel as a PNG of exactly the chosen size with real content and
as a well-formed, non-trivial SVG; the forward-pass stepper as numbered frames (and a GIF when
Pillow is installed) that really differ and leave the selected step as it was; the training
metrics as CSV with the numbers the curves hold; failures are messages."""
from __future__ import annotations

import csv
import os
import xml.etree.ElementTree as ET

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtCore import QSize  # noqa: E402
from PySide6.QtGui import QImage  # noqa: E402

from explorer import export  # noqa: E402
from explorer.export import ExportDialog  # noqa: E402
from explorer.state import SessionState  # noqa: E402
from model.train.live_messages import MetricRows  # noqa: E402
from model.train.trainer import EvalEvent  # noqa: E402
from support import build_main_window  # noqa: E402


@pytest.fixture(scope="module")
def window(qapp, tmp_path_factory):
    """One window for the module: an export puts the panel back as it was (checked below)."""
    from explorer.launch import close_window
    w = build_main_window(tmp_path_factory.mktemp("export"))
    yield w
    close_window(qapp, w)


def pixels(path) -> np.ndarray:
    image = QImage(str(path)).convertToFormat(QImage.Format_RGB32)
    return np.frombuffer(bytes(image.constBits()), np.uint8).reshape(image.height(), image.width(), 4)[..., :3]


def distinct_colours(arr: np.ndarray) -> int:
    return len(np.unique(arr.reshape(-1, 3), axis=0))


@pytest.mark.parametrize("name", ["architecture", "step", "attention", "positional", "decoding", "training"])
def test_every_panel_exports_png_and_svg_at_the_chosen_size(window, qtbot, tmp_path, name):
    panel = window.panels[name]
    window.focus_panel(name)
    for _ in range(3):
        qtbot.wait(20)
    size_before = panel.size()
    png = window.lecture.export_panel(name, tmp_path / f"{name}.png", QSize(900, 640))
    assert png is not None and QImage(str(png)).size() == QSize(900, 640)
    assert distinct_colours(pixels(png)) > 20  # a picture, not a blank rectangle
    assert panel.size() == size_before  # the dock's panel is put back
    svg = window.lecture.export_panel(name, tmp_path / f"{name}.svg", QSize(900, 640))
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg") and root.get("viewBox", "").split() == ["0", "0", "900", "640"]
    elements = list(root.iter())
    assert len(elements) > 30
    assert any(e.tag.endswith(("path", "polyline", "rect", "image", "text")) for e in elements)


def test_attention_svg_keeps_text_as_text(window, tmp_path):
    svg = window.lecture.export_panel("step", tmp_path / "step.svg", QSize(1000, 700))
    text = "".join(e.text or "" for e in ET.parse(svg).getroot().iter() if e.tag.endswith("text"))
    assert "encoder" in text or "Forward" in text or "Step" in text, text[:200]


def test_png_at_a_larger_size_lays_the_panel_out_again(window, tmp_path):
    small = window.lecture.export_panel("attention", tmp_path / "a.png", QSize(640, 480))
    big = window.lecture.export_panel("attention", tmp_path / "b.png", QSize(1920, 1080))
    assert QImage(str(big)).size() == QSize(1920, 1080) and QImage(str(small)).size() == QSize(640, 480)
    # re-laid out, not stretched: the big picture has many more distinct non-background pixels
    assert (pixels(big).sum(axis=2) < 600).sum() > 2 * (pixels(small).sum(axis=2) < 600).sum()


def test_check_svg_refuses_broken_or_empty_files(tmp_path):
    bad = tmp_path / "bad.svg"
    bad.write_text("<svg><g>")
    with pytest.raises(export.ExportError, match="not a valid SVG"):
        export.check_svg(bad)
    bad.write_text('<svg xmlns="http://www.w3.org/2000/svg"></svg>')
    with pytest.raises(export.ExportError, match="empty"):
        export.check_svg(bad)


def test_export_failures_are_messages(window, tmp_path):
    seen = []
    window.state.message.connect(lambda level, text: seen.append((level, text)))
    assert window.lecture.export_panel("step", tmp_path / "no" / "such" / "x.png") is None
    assert seen[-1][0] == "error" and "does not exist" in seen[-1][1]
    assert window.lecture.export_panel("step", tmp_path / "x.jpg") is None
    assert "png or .svg" in seen[-1][1]
    assert window.lecture.export_panel("step", tmp_path / "x.png", QSize(10, 10)) is None
    assert "between" in seen[-1][1]
    assert window.lecture.export_panel("nope", tmp_path / "x.png") is None


def test_forward_pass_frames_differ_and_the_step_is_restored(window, tmp_path, monkeypatch):
    state = window.state
    state.select_step(3)
    monkeypatch.setattr(export, "pillow_available", lambda: False)
    out = export.export_steps(state, window.panels["step"], tmp_path / "frames", QSize(800, 600), last=5)
    frames = out["frames"]
    assert [p.name for p in frames] == [f"frame_{i:03d}.png" for i in range(6)] and out["gif"] is None
    arrays = [pixels(p) for p in frames]
    assert all(a.shape == (600, 800, 3) for a in arrays)
    assert all(not np.array_equal(a, b) for a, b in zip(arrays, arrays[1:]))
    assert state.step == 3


def test_whole_forward_pass_export_through_the_window(window, tmp_path):
    out = window.lecture.export_steps(tmp_path / "all", QSize(320, 240))  # (a frame per step: small ones)
    assert len(out["frames"]) == window.state.n_steps()
    if export.pillow_available():
        from PIL import Image
        with Image.open(out["gif"]) as gif:
            assert gif.n_frames == window.state.n_steps()
    else:
        assert out["gif"] is None and "Pillow" in window.statusBar().currentMessage()


def test_steps_export_needs_a_trace(tmp_path, qtbot):
    state = SessionState()
    with pytest.raises(export.ExportError, match="run the model"):
        export.export_steps(state, None, tmp_path)


def test_training_metrics_csv_holds_the_curves_numbers(window, tmp_path):
    curves = window.panels["training"].curves
    seen = []
    window.state.message.connect(lambda level, text: seen.append((level, text)))
    assert window.lecture.export_csv(tmp_path / "empty.csv") == 0 and "no training metrics" in seen[-1][1]
    steps = np.arange(1, 6)
    rows = MetricRows(step=steps, loss=np.array([3.0, 2.5, 2.0, 1.5, 1.0]), accuracy=np.linspace(0.1, 0.5, 5),
                      lr=np.array([1e-4, 2e-4, 3e-4, 4e-4, 5e-4]), tokens_per_s=np.full(5, 1000.0),
                      wall=np.arange(5) * 0.1)
    curves.add_rows(rows)
    curves.add_eval(EvalEvent(step=5, exact_match=0.25))
    path = tmp_path / "m.csv"
    assert window.lecture.export_csv(path) == 5
    with path.open() as f:
        table = list(csv.DictReader(f))
    assert [int(r["step"]) for r in table] == [1, 2, 3, 4, 5]
    assert [float(r["loss"]) for r in table] == [3.0, 2.5, 2.0, 1.5, 1.0]
    assert float(table[2]["lr"]) == pytest.approx(3e-4)
    assert table[0]["exact_match"] == "" and float(table[4]["exact_match"]) == 0.25
    # the smoothed loss is the debiased EMA: the first value equals the first raw value
    assert float(table[0]["loss_smoothed"]) == pytest.approx(3.0)
    assert 1.0 < float(table[4]["loss_smoothed"]) < 3.0


def test_export_dialog_reports_its_choice(window, tmp_path):
    dialog = ExportDialog(window)
    dialog.panel.setCurrentIndex(dialog.panel.findData("attention"))
    dialog.width_box.setValue(1600)
    dialog.height_box.setValue(900)
    dialog.path.setText(str(tmp_path / "a.png"))
    dialog.format.setCurrentIndex(dialog.format.findData("svg"))
    name, path, size, fmt = dialog.choice()
    assert (name, path.suffix, size, fmt) == ("attention", ".svg", QSize(1600, 900), "svg")
