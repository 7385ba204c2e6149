"""One session, one pipeline: one Enter computes one Frame (one tokenization, one greedy
decode) that every panel draws; a scene sets the whole session, so it gives the same picture
whatever was clicked before; the session itself is Qt-free."""
import json
import subprocess
import sys

import pytest
from PySide6.QtCore import Qt

import model.interpret.decode_run as decode_run_module
from model.interpret.frame import DecodeSettings, compute_frame
from support import make_main_window, small_bundle


class Counter:
    """Wraps a function and counts its calls."""

    def __init__(self, fn):
        self.fn, self.calls = fn, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.fn(*args, **kwargs)


def test_one_enter_tokenizes_once_and_decodes_greedily_once(qtbot, tmp_path, monkeypatch):
    window = make_main_window(qtbot, tmp_path)
    state, bar = window.state, window.input_bar
    bundle = state.bundle
    bar.source.setText("transformer")  # (setText: typing would tokenize live for the token echo)
    expected = bundle.translate("transformer")  # the reference, before the counters go in
    encode = Counter(bundle.src_tokenizer.encode)
    monkeypatch.setattr(bundle.src_tokenizer, "encode", encode)
    steps = Counter(decode_run_module.decode_steps)
    monkeypatch.setattr(decode_run_module, "decode_steps", steps)
    generate = Counter(bundle.generate_ids)
    monkeypatch.setattr(bundle, "generate_ids", generate)
    frames = []
    state.frameChanged.connect(frames.append)
    qtbot.keyClick(bar.source, Qt.Key_Return)
    assert len(frames) == 1 and frames[0].source == "transformer"
    assert encode.calls == 1  # one tokenization of the text
    assert steps.calls == 1 and generate.calls == 0  # one greedy decode, reused by the forward
    # and every panel shows that one frame: the decoding panel's run is the frame's decode
    assert window.panels["decoding"].run is frames[0].decode
    assert state.result is frames[0].forward
    assert frames[0].output_text == expected


def test_the_frame_is_what_the_model_computes(tmp_path):
    bundle = small_bundle()
    frame = compute_frame(bundle, "attention")
    reference = bundle.run("attention")
    assert frame.output_text == reference.output_text == bundle.translate("attention")
    assert frame.forward.trace.names() == reference.trace.names()
    for name in ("encoder.layers.0.self_attn.weights", "decoder.layers.2.cross_attn.weights"):
        assert (frame.forward.trace[name].tensor - reference.trace[name].tensor).abs().max() < 1e-6
    assert [i for i in frame.decode.output_ids if i != frame.decode.eos_id] == \
        bundle.generate_ids(bundle.encode_source("attention")[0])
    # changing only the decoding settings reuses the forward (it does not depend on them)
    beam = compute_frame(bundle, "attention", settings=DecodeSettings(strategy="beam"), previous=frame)
    assert beam.forward is frame.forward and beam.decode.beam is not None


def grab(window, panel):
    """The panel as drawn, once the scene deck's deferred restyle (if any) has run."""
    from PySide6.QtWidgets import QApplication
    deck = window.lecture.deck
    while deck._restyle.isActive():
        deck._restyle.stop()
        deck._restyle.timeout.emit()
    window.panels[panel].repaint()
    for _ in range(4):
        QApplication.instance().processEvents()
    return window.panels[panel].grab().toImage()


def test_a_scene_gives_the_same_picture_whatever_was_clicked_before(qtbot, tmp_path):
    scene = {"version": 2, "scenes": [{"name": "Multi-head", "task": "reverse", "input": "attention",
                                        "panel": "attention", "attention": {"kind": "encoder", "layer": 1, "head": 2}}]}
    path = tmp_path / "scene.json"
    path.write_text(json.dumps(scene))
    window = make_main_window(qtbot, tmp_path, size=(1280, 800))
    state, attention, decoding = window.state, window.panels["attention"], window.panels["decoding"]
    assert window.lecture.deck.open(path)
    first = grab(window, "attention")
    shown = lambda: (decoding.run.settings, decoding.run.output_ids, decoding.t, decoding.layer, decoding.state.head,  # noqa: E731
                     decoding.tabs.currentWidget(), decoding.parallel.remove_mask.isChecked(), decoding.prefix.text())
    first_decoding = shown()
    settings = state.session.decoding
    # click around: another tab (which really changes the picture), another head, another
    # strategy, the mask ablation, another input, drawn
    attention.tabs.setCurrentIndex(2)  # Lines
    assert grab(window, "attention") != first
    state.select_attention("cross", 0, 3)
    decoding.controls.set_strategy("beam")
    decoding.parallel.remove_mask.setChecked(True)
    decoding.controls.head.setCurrentIndex(3)
    attention.all_kinds.setChecked(True)
    window.runner.run("transformer")
    attention.tabs.setCurrentIndex(0)
    assert grab(window, "attention") != first
    assert state.session.view("attention") == "grid" and state.session.decoding.strategy == "beam"
    assert not state.session.causal_mask and state.source_text == "transformer"
    assert window.lecture.deck.open(path)
    assert grab(window, "attention") == first
    # the decoding panel: its run, step, head, tab and mask switch (compared as what it shows;
    # its aspect-locked maps may differ by a pixel of view range after another input)
    assert shown() == first_decoding
    assert not attention.all_kinds.isChecked() and state.session.view("decoding") == "steps"
    assert state.session.view("attention") == "grid" and state.session.decoding == settings
    assert state.session.causal_mask and attention.tabs.currentIndex() == 0
    assert (state.kind, state.layer, state.head) == ("encoder", 1, 2)


def test_the_session_is_qt_free_and_evented():
    code = ("import sys; from explorer.session import Session; s = Session(); seen = [];"
            "s.events.input.connect(lambda *a: seen.append(a)); s.set_input('abc'); s.set_input('abc');"
            "s.set_decoding(strategy='beam'); s.set_input('abc', 'cba');"
            "assert seen == [('abc', None), ('abc', 'cba')], seen;"
            "assert s.decoding.strategy == 'target';"  # a typed target is followed step by step
            "assert not any(m.startswith(('PySide6', 'pyqtgraph', 'superqt')) for m in sys.modules), 'Qt loaded'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_unknown_decoding_strategy_is_refused():
    from explorer.session import Session
    with pytest.raises(ValueError, match="greedy"):
        Session().set_decoding(strategy="guess")
