"""Everything wrong a user can feed the explorer gets a clear message and loses nothing.

Input text (empty, blank, unknown, too long, 1 MB pasted, emoji / right-to-left / combining
marks, control characters), checkpoints (missing, truncated, random bytes, bad config, a
pickle, a folder that is not a checkpoint) opened the way the GUI opens them, training
failures (a diverging learning rate, CUDA out of memory, SIGKILL in the middle of a save),
damaged saved window state; and a property test: any string either runs or is refused with
a message — no exception ever reaches Qt.
"""
from __future__ import annotations

import os
import pickle
import random
import signal
import subprocess
import sys
import textwrap
import time
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
import torch  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from PySide6.QtCore import QByteArray, QSettings  # noqa: E402

from explorer.main_window import MainWindow  # noqa: E402
from explorer.panels.training import worker as training_worker  # noqa: E402
from explorer.runner import Runner, random_bundle  # noqa: E402
from explorer.state import SessionState  # noqa: E402
from model.inference.bundle import InputError  # noqa: E402
from model.io.checkpoints import CONFIG, WEIGHTS, load_checkpoint, save_checkpoint  # noqa: E402
from model.train.trainer import Trainer  # noqa: E402
from support import make_main_window, messages_of  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
TIMEOUT = 60_000


def make_window(qtbot, tmp_path, settings=None):
    return make_main_window(qtbot, tmp_path, settings=settings, show=False)


@pytest.fixture
def window(qtbot, tmp_path):
    return make_window(qtbot, tmp_path)




def type_and_run(window, text):
    bar = window.input_bar
    bar.source.setText(text)
    bar.run()


# -- input text -------------------------------------------------------------------------------------
REFUSED = [
    ("", "empty"),
    ("   \t  ", "empty"),
    ("☃☃☃", "knows none"),
    ("ÄÖÜ漢字", "knows none"),
    ("a" * 500, "at most"),
    ("\x00\x1b\r", "knows none"),
]


@pytest.mark.parametrize("text,words", REFUSED, ids=["empty", "blank", "snowmen", "foreign", "long", "controls"])
def test_refused_input_is_a_message_and_the_view_is_kept(window, text, words):
    seen = messages_of(window)
    before = window.state.result
    type_and_run(window, text)
    assert window.state.result is before and window.state.source_text == "attention"
    assert seen and seen[-1][0] == "error" and words in seen[-1][1], seen
    assert words in window.input_bar.status.text()


def test_a_pasted_megabyte_is_refused_quickly(window):
    seen = messages_of(window)
    before = window.state.result
    start = time.perf_counter()
    text = "abc " * 262_144  # 1 MB
    type_and_run(window, text)
    assert time.perf_counter() - start < 5.0
    assert window.input_bar.source.text() == text  # not cut at QLineEdit's default 32767 characters
    n = len(window.state.bundle.src_tokenizer.encode(text).ids)
    limit = window.state.bundle.max_input_len
    assert n > 32767 and window.state.result is before
    assert f"{n} tokens" in seen[-1][1] and f"at most {limit}" in seen[-1][1], seen[-1]


MIXED = ["ab😀c", "שלום abc", "abc\u202edef", "e\u0301a\u0301b", "ab\x00c", "ab\x1bc", "ab\rc", "a\u200bb"]


@pytest.mark.parametrize("text", MIXED, ids=["emoji", "rtl", "rtl-override", "combining", "nul", "esc", "cr", "zwsp"])
def test_mixed_input_runs_and_names_the_unknown_symbols(window, text):
    seen = messages_of(window)
    type_and_run(window, text)
    assert window.state.source_text == text and window.state.result is not None
    assert any(level == "warning" and "<unk>" in t for level, t in seen), seen
    assert window.state.result.source.unknown  # read as <unk>, and the trace says which
    warning = next(t for level, t in seen if level == "warning")
    assert all(c.isprintable() for c in warning), repr(warning)  # NUL, ESC, CR … shown escaped, not raw
    assert all(c.isprintable() or c == "\n" for c in window.input_bar.echo.text()), window.input_bar.echo.text()


def test_control_characters_are_named_not_printed(window):
    seen = messages_of(window)
    type_and_run(window, "ab\x00\x1bc\u202e")
    warning = next(t for level, t in seen if level == "warning")
    assert "\\x00" in warning and "\\x1b" in warning and "U+202E" in warning, warning


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=80))
def test_any_text_runs_or_is_refused_with_a_message(window, text):
    """Drive the input bar (synchronous runner) with arbitrary text: never an exception."""
    seen = messages_of(window)
    before = window.state.result
    type_and_run(window, text)
    if window.state.result is before:
        assert seen and seen[-1][0] == "error" and seen[-1][1].strip()
    else:
        assert window.state.source_text == text


@settings(max_examples=200, deadline=None)
@given(text=st.text())
def test_tokenizers_encode_any_text_or_refuse_it_clearly(text):
    bundle = _BUNDLE
    enc = bundle.src_tokenizer.encode(text)
    assert len(enc.ids) == len(enc.pieces)
    assert all(0 <= i < len(bundle.src_tokenizer) for i in enc.ids)
    try:
        ids, _ = bundle.encode_source(text)
    except InputError as exc:
        assert str(exc).strip()
    else:
        assert ids.shape[1] <= bundle.max_input_len
    decoded = bundle.tgt_tokenizer.decode(bundle.tgt_tokenizer.encode(text).ids)
    assert isinstance(decoded, str)


_BUNDLE = random_bundle("reverse")


# -- checkpoints ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def good_checkpoint(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ckpt") / "good"
    save_checkpoint(random_bundle("sort"), folder)
    return folder


def _copy(src: Path, dst: Path) -> Path:
    dst.mkdir(parents=True)
    for f in src.iterdir():
        (dst / f.name).write_bytes(f.read_bytes())
    return dst


def _truncate(folder):
    data = (folder / WEIGHTS).read_bytes()
    (folder / WEIGHTS).write_bytes(data[: len(data) // 2])


def _random_bytes(folder):
    (folder / WEIGHTS).write_bytes(random.Random(0).randbytes(4096))


def _config_not_json(folder):
    (folder / CONFIG).write_text("{ this is not json")


def _wrong_shapes(folder):
    import json
    cfg = json.loads((folder / CONFIG).read_text())
    cfg["model"]["d_model"] = 96
    (folder / CONFIG).write_text(json.dumps(cfg))


def _wrong_vocab(folder):
    import json
    cfg = json.loads((folder / CONFIG).read_text())
    cfg["model"]["src_vocab_size"] += 7
    (folder / CONFIG).write_text(json.dumps(cfg))


def _no_weights(folder):
    (folder / WEIGHTS).unlink()


BROKEN = [(_truncate, WEIGHTS), (_random_bytes, WEIGHTS), (_config_not_json, CONFIG), (_wrong_shapes, ""),
          (_wrong_vocab, ""), (_no_weights, WEIGHTS)]


@pytest.mark.parametrize("damage,names", BROKEN, ids=[d.__name__.strip("_") for d, _ in BROKEN])
def test_a_damaged_checkpoint_is_a_message_naming_the_file(window, tmp_path, good_checkpoint, damage, names):
    folder = _copy(good_checkpoint, tmp_path / "damaged")
    damage(folder)
    seen = messages_of(window)
    before_bundle, before_result = window.state.bundle, window.state.result
    window.runner.load(str(folder))  # what File → Open checkpoint / the model chooser call
    assert window.state.bundle is before_bundle and window.state.result is before_result
    level, text = seen[-1]
    assert level == "error" and "damaged" in text and names in text, text
    assert "damaged" in window.input_bar.status.text()


def test_missing_folder_and_not_a_checkpoint(window, tmp_path):
    seen = messages_of(window)
    before = window.state.bundle
    window.runner.load(str(tmp_path / "nowhere"))
    assert "nowhere" in seen[-1][1] and "does not exist" in seen[-1][1]
    (tmp_path / "photos").mkdir()
    (tmp_path / "photos" / "cat.jpg").write_bytes(b"\xff\xd8\xff")
    window.runner.load(str(tmp_path / "photos"))
    assert "photos" in seen[-1][1] and window.state.bundle is before


def test_a_pickle_checkpoint_is_refused_and_never_unpickled(window, tmp_path, monkeypatch):
    folder = tmp_path / "legacy"
    folder.mkdir()
    torch.save({"weight": torch.zeros(3)}, folder / "model.pt")

    def forbidden(*_a, **_k):
        raise AssertionError("a pickle was loaded")

    monkeypatch.setattr(torch, "load", forbidden)
    monkeypatch.setattr(pickle, "load", forbidden)
    monkeypatch.setattr(pickle, "loads", forbidden)
    monkeypatch.setattr(pickle, "Unpickler", forbidden)
    seen = messages_of(window)
    before = window.state.bundle
    for path in (folder, folder / "model.pt"):
        window.runner.load(str(path))
        level, text = seen[-1]
        assert level == "error" and "model.pt" in text or "pickle" in text.lower(), text
        assert window.state.bundle is before


# -- training ----------------------------------------------------------------------------------------
@pytest.fixture
def training(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("TRANSFORMER_EXPLORER_DATA", str(tmp_path / "appdata"))
    monkeypatch.setattr(training_worker, "worker_threads", lambda: 1)
    w = make_window(qtbot, tmp_path)
    panel = w.panels["training"]
    panel.controls.steps_spin.setValue(10_000)
    panel.controls.warmup_spin.setValue(10)
    panel.controls.batch_spin.setValue(8)
    yield w, panel
    panel.shutdown()


def _alive(qtbot):
    from PySide6.QtCore import QTimer
    timer = QTimer()
    timer.setInterval(20)
    with qtbot.waitSignal(timer.timeout, timeout=2000):
        timer.start()


def test_a_diverging_learning_rate_pauses_with_a_message_and_finite_weights(training, qtbot):
    window, panel = training
    seen = messages_of(window)
    request = panel.request()
    request.train = replace(request.train, lr_scale=1e8)
    panel.start(request)
    qtbot.waitUntil(lambda: any(level == "error" for level, _ in seen), timeout=TIMEOUT)
    text = next(t for level, t in seen if level == "error")
    assert "nan" in text.lower() or "inf" in text.lower(), text
    assert "lr_scale" in text or "learning rate" in text
    qtbot.waitUntil(lambda: panel.phase == "paused", timeout=TIMEOUT)
    _alive(qtbot)
    panel.stop()
    qtbot.waitUntil(lambda: panel.run is None, timeout=TIMEOUT)
    assert all(torch.isfinite(p).all() for p in window.state.bundle.model.parameters())
    type_and_run(window, "abc")  # the app still works
    assert window.state.source_text == "abc"


def test_cuda_out_of_memory_is_a_message_and_the_run_can_still_be_saved(training, qtbot, tmp_path, monkeypatch):
    window, panel = training

    def oom(self):
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    monkeypatch.setattr(Trainer, "step", oom)
    seen = messages_of(window)
    panel.start()
    qtbot.waitUntil(lambda: any(level == "error" for level, _ in seen), timeout=TIMEOUT)
    text = next(t for level, t in seen if level == "error")
    assert "out of memory" in text.lower() and "step 1" in text, text
    qtbot.waitUntil(lambda: panel.phase == "paused", timeout=TIMEOUT)
    assert panel.run.is_running()
    _alive(qtbot)
    panel.save_checkpoint(tmp_path / "after-oom")
    qtbot.waitUntil(lambda: (tmp_path / "after-oom" / WEIGHTS).exists(), timeout=TIMEOUT)
    assert load_checkpoint(tmp_path / "after-oom").config.d_model > 0
    panel.stop()
    qtbot.waitUntil(lambda: panel.run is None, timeout=TIMEOUT)


KILLER = textwrap.dedent("""
    import sys, torch
    torch.set_num_threads(1)
    sys.path.insert(0, sys.argv[2])
    from model.io.checkpoints import random_bundle, save_checkpoint
    bundle = random_bundle("reverse")
    i = 0
    while True:
        value = 0.25 if i % 2 else -0.25
        with torch.no_grad():
            for p in bundle.model.parameters():
                p.fill_(value)
        save_checkpoint(bundle, sys.argv[1])
        print("saved", value, flush=True)
        i += 1
""")


@pytest.mark.slow
def test_sigkill_in_the_middle_of_saves_leaves_a_loadable_checkpoint(tmp_path):
    folder = tmp_path / "ckpt"
    rng = random.Random(1)
    for attempt in range(3):
        proc = subprocess.Popen([sys.executable, "-c", KILLER, str(folder), str(REPO)], stdout=subprocess.PIPE,
                                text=True)
        try:
            assert proc.stdout.readline().startswith("saved")  # at least one complete save
            time.sleep(rng.uniform(0.0, 0.4))
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
        bundle = load_checkpoint(folder)
        values = {float(v) for p in bundle.model.parameters() for v in p.detach().flatten().unique()}
        assert values in ({0.25}, {-0.25}), (attempt, values)  # all old or all new, never a mix


# -- saved settings ----------------------------------------------------------------------------------
@pytest.mark.parametrize("value", [QByteArray(b"\x00\xffgarbage" * 10), "not bytes", 12345])
def test_damaged_saved_window_state_is_ignored_with_a_message(qtbot, tmp_path, value):
    settings = QSettings(str(tmp_path / "bad.ini"), QSettings.IniFormat)
    settings.setValue("window/state", value)
    settings.setValue("window/geometry", QByteArray(b"\x01\x02junk"))
    settings.sync()
    state = SessionState()
    seen = []
    state.message.connect(lambda level, text: seen.append((level, text)))
    window = MainWindow(state, Runner(state, synchronous=True), settings=settings, restore=True, persist=False)
    qtbot.addWidget(window)
    assert any("layout" in t and "default" in t for _, t in seen), seen
    assert all(not d.isFloating() for d in window.docks.values())


def test_garbage_is_collected_on_the_gui_thread_only(qapp, monkeypatch):
    """A worker that allocates (training, the frame, attribution) must never run Python's cyclic
    collector: it would destroy whatever Qt objects sit in dead cycles off the GUI thread. With the
    app's collector the cycle survives the worker's allocations and is freed by the GUI thread."""
    import gc
    import threading
    import weakref

    from explorer.gui_collector import collect_on_gui_thread

    class Node:
        pass

    freed: list[str] = []

    def drop_a_cycle() -> None:
        node = Node()
        node.me = node
        weakref.finalize(node, lambda: freed.append(threading.current_thread().name))

    monkeypatch.setattr(gc, "freeze", lambda: None)  # (frozen mid-suite, the session's objects would never be freed)
    gc.enable()  # Python's default (the suite runs with it off, as the app does)
    collector = collect_on_gui_thread()
    try:
        assert not gc.isenabled() and collector.timer.isActive()
        drop_a_cycle()
        worker = threading.Thread(target=lambda: [[i] for i in range(200_000)], name="worker")
        worker.start()
        worker.join()
        assert freed == []  # not collected by the worker's allocations
        gc.collect()  # what the collector's timer does, on this thread
        assert freed == [threading.current_thread().name]
    finally:
        collector.timer.stop()
        gc.disable()
