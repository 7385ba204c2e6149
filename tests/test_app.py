"""The application: starts with a model and a trace, runs typed input off the GUI thread,
refuses bad input without losing the view, keeps its layout, and renders figures headless."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import QSettings, Qt  # noqa: E402
from PySide6.QtGui import QImage  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

from explorer import style  # noqa: E402
from explorer.app import run_app  # noqa: E402
from explorer.main_window import MainWindow  # noqa: E402
from explorer.runner import Runner  # noqa: E402
from explorer.state import SessionState  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def isolated_settings(tmp_path):
    """Every test gets its own QSettings files, so no test sees another's saved layout."""
    for fmt in (QSettings.NativeFormat, QSettings.IniFormat):
        QSettings.setPath(fmt, QSettings.UserScope, str(tmp_path / "settings"))
    yield tmp_path / "settings"


def make_window(qtbot, tmp_path, restore=True, name="layout.ini"):
    state = SessionState()
    runner = Runner(state)
    settings = QSettings(str(tmp_path / name), QSettings.IniFormat)
    window = MainWindow(state, runner, settings=settings, restore=restore)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    return window, state, runner


@pytest.fixture
def app_window(qtbot, tmp_path):
    window, state, runner = make_window(qtbot, tmp_path)
    with qtbot.waitSignal(state.resultChanged, timeout=30000):
        runner.load_default(then_run="attention")
    yield window, state, runner
    runner.wait()


def enter_text(qtbot, field, text):
    field.clear()
    qtbot.keyClicks(field, text)
    QTest.keyClick(field, Qt.Key_Return)


def test_window_starts_with_the_reverse_model_and_a_trace(app_window):
    window, state, _ = app_window
    assert state.bundle.task.get("name") == "reverse"
    assert state.source_text == "attention" and state.result.src_pieces == list("attention")
    assert {"architecture", "step"} <= set(window.docks)
    assert window.docks["step"].objectName() == "dock_step"
    d = state.bundle.config.d_model
    assert window.panels["architecture"].block("encoder.layers.0.self_attn").shape_text == f"(1, 9, {d})"
    assert window.panels["step"].transport.slider.maximum() == state.n_steps() - 1


def test_enter_runs_the_new_input_everywhere(app_window, qtbot):
    window, state, _ = app_window
    bar = window.input_bar
    with qtbot.waitSignal(state.resultChanged, timeout=30000):
        enter_text(qtbot, bar.source, "hello")
    d = state.bundle.config.d_model
    assert state.source_text == "hello"
    assert window.panels["architecture"].block("encoder.layers.0.self_attn").shape_text == f"(1, 5, {d})"
    stepper = window.panels["step"]
    assert stepper.transport.slider.maximum() == state.n_steps() - 1 == len(state.trace) - 1
    assert stepper.transport.counter.text().strip().endswith(f"/ {state.n_steps()}")
    assert state.result.output_text in bar.status.text()


def test_teacher_forcing_target(app_window, qtbot):
    window, state, _ = app_window
    bar = window.input_bar
    bar.target.setText("cba")
    with qtbot.waitSignal(state.resultChanged, timeout=30000):
        enter_text(qtbot, bar.source, "abc")
    assert state.result.target_text == "cba" and state.result.tgt_pieces == ["<bos>", "c", "b", "a"]


@pytest.mark.parametrize("text, words", [("a" * 70, "at most 64"), ("12345", "knows none"), ("   ", "empty")])
def test_bad_input_shows_a_message_and_keeps_the_trace(app_window, qtbot, text, words):
    window, state, runner = app_window
    before = state.result
    with qtbot.waitSignal(runner.failed, timeout=5000) as blocker:
        enter_text(qtbot, window.input_bar.source, text)
    assert words in blocker.args[0]
    assert words in window.input_bar.status.text()
    assert state.result is before and state.source_text == "attention"
    assert window.panels["step"].transport.slider.maximum() == len(before.trace) - 1


def test_unknown_characters_are_highlighted_and_reported(app_window, qtbot):
    window, state, _ = app_window
    window.input_bar.source.setText("ab1c")
    echo = window.input_bar.echo.text()
    assert f'color:{style.ERROR.name()}' in echo and ">1</span>" in echo
    assert "1 unknown" in echo and "read as <unk>: 1" in window.input_bar.echo.toolTip()
    messages = []
    state.message.connect(lambda level, text: messages.append((level, text)))
    with qtbot.waitSignal(state.resultChanged, timeout=30000):
        window.input_bar.run()
    assert messages and messages[0][0] == "warning" and "1" in messages[0][1]
    assert state.result.source.unknown == [(2, "1")]  # run anyway, the 1 read as <unk>
    window.input_bar.source.setText("a" * 70)
    assert "over the limit of 64" in window.input_bar.echo.text()


def test_model_chooser_loads_a_bundled_checkpoint(app_window, qtbot):
    window, state, _ = app_window
    combo = window.input_bar.model_combo
    names = [combo.itemText(i) for i in range(combo.count())]
    assert names[-1] == "Open checkpoint folder…"
    rows = [i for i, n in enumerate(names) if n.startswith("addition — ")]  # entries say what the model does
    if not rows:
        pytest.skip("no bundled addition checkpoint")
    with qtbot.waitSignal(state.resultChanged, timeout=30000):
        combo.activated.emit(rows[0])
    assert state.bundle.task["name"] == "addition"
    # "attention" means nothing to an addition model: one of its examples ran instead
    assert state.source_text in state.bundle.examples
    assert combo.currentText().startswith("addition — add two numbers")
    assert window.panels["architecture"].block("generator.logits").shape_text.endswith(
        f", {state.bundle.config.tgt_vocab_size})")


def test_stale_results_are_dropped(app_window, qtbot):
    window, state, runner = app_window
    applied = []
    state.resultChanged.connect(lambda r: applied.append(r.src_pieces))
    runner.run("abc")
    runner.run("abcdef")  # supersedes the first while it is still queued or running
    qtbot.waitUntil(lambda: not state.busy and bool(applied), timeout=30000)
    runner.wait()
    qtbot.wait(50)
    assert applied == [list("abcdef")]
    assert state.source_text == "abcdef"


def test_busy_indicator_while_running(app_window, qtbot):
    window, state, runner = app_window
    with qtbot.waitSignal(state.busyChanged) as started:
        runner.run("abcd")
    assert started.args[0] is True and window.busy_bar.isVisibleTo(window)
    qtbot.waitUntil(lambda: not state.busy, timeout=30000)
    assert not window.busy_bar.isVisibleTo(window)


def test_layout_save_restore_roundtrip(qtbot, tmp_path):
    window, state, runner = make_window(qtbot, tmp_path, restore=False)
    assert window.dockWidgetArea(window.docks["architecture"]) == Qt.LeftDockWidgetArea
    window.addDockWidget(Qt.RightDockWidgetArea, window.docks["architecture"])
    window.docks["step"].hide()
    window.close()  # saves the layout

    again, _, _ = make_window(qtbot, tmp_path, restore=True)
    assert again.dockWidgetArea(again.docks["architecture"]) == Qt.RightDockWidgetArea
    assert not again.docks["step"].isVisible()
    again.reset_layout_action.trigger()
    assert again.dockWidgetArea(again.docks["architecture"]) == Qt.LeftDockWidgetArea
    assert again.docks["step"].isVisible()

    fresh, _, _ = make_window(qtbot, tmp_path, restore=True, name="other.ini")  # another settings file
    assert fresh.dockWidgetArea(fresh.docks["architecture"]) == Qt.LeftDockWidgetArea


RUN_APP_DRIVER = """
import json, sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from explorer.app import run_app
from explorer.main_window import MainWindow

app = QApplication(sys.argv[:1])
seen = {}

def check():
    windows = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]
    if windows and windows[0].state.result is not None:
        s = windows[0].state
        seen.update(source=s.source_text, steps=s.n_steps(), step=s.current_step.name, bundle=s.bundle.name)
        windows[0].close()
        app.quit()
    else:
        QTimer.singleShot(50, check)

QTimer.singleShot(0, check)
QTimer.singleShot(60000, app.quit)
code = run_app(["--input", "hello", "--step", "generator.probs"])
print("RESULT", json.dumps(dict(seen, code=code)))
"""


@pytest.mark.slow
def test_run_app_opens_the_window_with_a_trace(tmp_path):
    """The real entry point: the window opens, loads the model off-thread and runs the input.
    (In a subprocess: a finished QApplication.exec() leaves the test process unable to
    activate windows, which later keyboard tests need.)"""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", RUN_APP_DRIVER], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=120)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stderr[-2000:]
    seen = json.loads(lines[-1][len("RESULT "):])
    assert seen["code"] == 0 and seen["source"] == "hello" and seen["steps"] > 50
    assert seen["step"] == "generator.probs"  # --step selected it once the trace arrived
    assert "reverse" in seen["bundle"]
    assert (tmp_path / "TransformerExplorer" / "explorer.conf").exists()  # the layout was saved on close


@pytest.mark.slow
def test_screenshot_cli_writes_a_real_picture(tmp_path):
    out = tmp_path / "arch.png"
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}  # the CLI must go offscreen itself
    proc = subprocess.run([sys.executable, "-m", "explorer", "--panel", "architecture", "--screenshot", str(out),
                           "--size", "1000x700", "--input", "hello", "--step", "encoder.layers.0.self_attn.weights"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1000, 700)
    colours = {image.pixel(x, y) for x in range(0, 1000, 7) for y in range(0, 700, 7)}
    assert len(colours) > 200  # a rendered window, not a blank or single-colour image


@pytest.mark.slow
def test_train_seconds_trains_before_the_training_figure(tmp_path, qapp, capsys, monkeypatch):
    """`--panel training --train-seconds N`: the figure shows a run that really trained (it
    says how many steps; one second is enough for some)."""
    monkeypatch.setenv("TRANSFORMER_EXPLORER_DATA", str(tmp_path / "data"))
    out = tmp_path / "training.png"
    assert run_app(["--panel", "training", "--train-seconds", "1", "--screenshot", str(out), "--size", "1000x700"]) == 0
    trained = [line for line in capsys.readouterr().out.splitlines() if line.startswith("trained ")]
    assert trained and int(trained[0].split()[1]) > 0, trained
    assert QImage(str(out)).width() == 1000


def test_compare_alone_brings_its_panel_forward_and_a_figure_keeps_the_saved_theme(tmp_path, qapp, capsys):
    """`--compare` without `--panel` shows the compare panel (window and figure apply the flags
    alike); a figure's `--theme` is its own: the saved theme is not changed."""
    from explorer.presentation import THEME_KEY
    out = tmp_path / "compare.png"
    argv = ["--compare", "untrained", "--theme", "dark", "--size", "1000x700", "--screenshot", str(out)]
    assert run_app(argv) == 0
    assert "panel compare" in capsys.readouterr().out
    assert QSettings().value(THEME_KEY) is None


@pytest.mark.parametrize("argv, words", [
    (["--panel", "nope"], "valid panels: architecture, step"),
    (["--checkpoint", "{tmp}/missing"], "does not exist"),
    (["--checkpoint", "{tmp}/broken"], "broken"),
    (["--input", ""], "empty"),
    (["--input", "a" * 200], "at most"),
    (["--step", "no.such.step"], "no step named"),
    (["--size", "huge"], "--size"),
    (["--train-seconds", "-1"], "--train-seconds"),
])
def test_screenshot_errors_are_clear(tmp_path, capsys, qapp, argv, words):
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "config.json").write_text("{ not json")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    out = tmp_path / "x.png"
    assert run_app(argv + ["--screenshot", str(out)]) != 0
    err = capsys.readouterr().err
    assert "error:" in err and words in err
    assert not out.exists()


def test_a_panel_is_built_when_its_dock_is_first_shown_and_draws_the_current_frame(qtbot, tmp_path):
    from support import make_main_window
    window = make_main_window(qtbot, tmp_path)
    shown = [name for name in window.panels if window.panels.built(name) is not None]
    assert "architecture" in shown and "lens" not in shown and len(shown) < len(window.panels)
    window.focus_panel("lens")
    qtbot.waitUntil(lambda: window.panels.built("lens") is not None)
    lens = window.panels.built("lens")
    assert lens.lens is not None and lens.lens is window.state.frame.lens  # the current frame, drawn at once
    assert lens.window() is window and lens.isVisible()
