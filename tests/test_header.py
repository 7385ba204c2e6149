"""The header's output line says what the decoding panels show and where the input leaves the
model's training range."""
from PySide6.QtGui import QTextDocumentFragment

from model import bundled_checkpoints, load_checkpoint
from model.interpret.frame import DecodeSettings
from support import make_main_window


def header_text(window) -> str:
    return QTextDocumentFragment.fromHtml(window.input_bar.status.text()).toPlainText()


def trained_window(qtbot, tmp_path, text: str):
    window = make_main_window(qtbot, tmp_path, size=(1600, 900))
    window.runner.set_bundle(load_checkpoint(bundled_checkpoints()["reverse"]), then_run=text)
    qtbot.waitUntil(lambda: window.state.frame is not None and window.state.frame.source == text, timeout=20_000)
    return window


def test_with_beam_search_the_header_shows_the_beam_and_names_it(qtbot, tmp_path):
    window = trained_window(qtbot, tmp_path, "transformer")
    assert "(beam search)" not in header_text(window)
    window.state.session.set_decoding(DecodeSettings(strategy="beam", beam_size=4))
    qtbot.waitUntil(lambda: window.state.frame.settings.strategy == "beam", timeout=20_000)
    beam_text, what = window.state.frame.decoded
    assert what == "beam search"
    qtbot.waitUntil(lambda: f"out): {beam_text}" in header_text(window), timeout=5_000)
    assert header_text(window).startswith("Output (beam search) (")


def test_an_input_longer_than_training_gets_a_note(qtbot, tmp_path):
    long = "abcdefghijklmnopqrstuvwxyzabcdef"  # 32 letters; reverse was trained on 1–24
    window = trained_window(qtbot, tmp_path, long)
    assert window.state.frame.notes
    qtbot.waitUntil(lambda: "⚠" in header_text(window), timeout=5_000)
    assert "24" in header_text(window) and "24" in window.input_bar.status.toolTip()
    window.runner.run("abc")
    qtbot.waitUntil(lambda: window.state.frame.source == "abc", timeout=20_000)
    qtbot.waitUntil(lambda: "⚠" not in header_text(window), timeout=5_000)
