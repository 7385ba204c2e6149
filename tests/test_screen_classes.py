"""Screen classes and presentation mode as a lecturer meets them: entering presentation raises
the application font and re-lays the window for a projector; `--presentation` opens on Figure 1
with the tour offered; Exit tour, Esc and F11 give back a whole layout; a panel is told when the
window's size crosses into another class."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from explorer import presentation, style  # noqa: E402
from explorer.screen import ScreenClass  # noqa: E402
from model.io.scenes import TOUR_PATH  # noqa: E402


def _settle(qtbot, rounds: int = 4) -> None:
    for _ in range(rounds):
        QApplication.processEvents()
        qtbot.wait(5)


@pytest.fixture(scope="module")
def shared(qapp, tmp_path_factory):
    """One 1280×720 window for the module (a build and its teardown cost more than most tests
    here): each test gets it back as a fresh window is, and puts it back (`window`)."""
    from explorer.launch import close_window
    from support import build_main_window
    w = build_main_window(tmp_path_factory.mktemp("screens"), size=(1280, 720))
    yield w
    _reset(w)
    close_window(qapp, w)


def _reset(w) -> None:
    """No tour, not presenting, not full screen, the light theme, 1280×720, the default layout."""
    w.lecture.deck.close()
    w.lecture.presentation.leave()
    if w.isFullScreen():
        w.showNormal()
    presentation.apply_theme(QApplication.instance(), "light")
    w.resize(1280, 720)
    w.reset_layout()


@pytest.fixture
def window(shared, qtbot):
    _reset(shared)
    _settle(qtbot)
    assert shared.screen_class is ScreenClass.PROJECTOR and not _whole_layout(shared), _whole_layout(shared)
    yield shared
    _reset(shared)


def _whole_layout(window) -> list[str]:
    """Docks that are not whole: closed, or docked and shown smaller than their panel's least size.
    A dock behind another in a tab group counts as whole when its group's front tab is."""
    broken = []
    for name, dock in window.docks.items():
        if not dock.toggleViewAction().isChecked():
            broken.append(f"{name}: closed")
            continue
        group = [dock, *window.tabifiedDockWidgets(dock)]
        front = next((d for d in group if d.isVisible()), None)
        if front is None:
            broken.append(f"{name}: no tab of its group shown")
        elif dock.isVisible() and not dock.visibleRegion().isEmpty():  # (on screen, not behind a tab)
            least = dock.minimumSizeHint()
            if dock.width() < least.width() or dock.height() < least.height():
                broken.append(f"{name}: {dock.size().toTuple()} < {least.toTuple()}")
            panel = window.panels.built(name)  # a strip: the panel's controls cut, its room scrolled sideways
            if panel is not None and dock.widget().viewport().width() < panel.minimumSizeHint().width():
                broken.append(f"{name}: {dock.widget().viewport().width()} px for a panel of "
                              f"{panel.minimumSizeHint().width()} px")
    return broken


def test_presenting_raises_the_application_font_and_picks_the_projector_class(window, qtbot):
    wide = window
    wide.resize(1920, 1080)
    _settle(qtbot)
    assert wide.screen_class is ScreenClass.WIDE
    before = style.BASE_POINT_SIZE  # the application's normal size (`style.apply_app_style`)
    own = wide.input_bar.source  # a widget with a font of its own
    own_before = own.font().pointSizeF()
    wide.lecture.presentation.enter(full_screen=False)
    wide.resize(1920, 1080)
    _settle(qtbot)
    assert QApplication.font().pointSizeF() > before
    assert own.font().pointSizeF() > own_before  # the style sheet's size reaches it too
    assert wide.screen_class is ScreenClass.PROJECTOR  # presenting never counts as wide
    wide.lecture.presentation.leave()
    _settle(qtbot)
    assert QApplication.font().pointSizeF() == pytest.approx(before)
    assert own.font().pointSizeF() == pytest.approx(own_before)  # its own size again
    assert wide.screen_class is ScreenClass.WIDE


def test_presenting_opens_on_figure_one_with_the_tour_offered(window, qtbot):
    """As `--presentation` does: whatever panel was in front, the room first sees Figure 1, and a
    visible "Start the tour" starts the paper tour."""
    window.focus_panel("step")
    window.lecture.presentation.enter(full_screen=False)
    _settle(qtbot)
    shown = [n for n, d in window.docks.items() if d.isVisible()]
    assert shown == ["architecture"]
    offer = window.lecture.tour_offer
    assert offer.isVisible() and "tour" in offer.text().lower()
    offer.click()
    _settle(qtbot)
    assert window.lecture.deck.tour is not None and window.lecture.deck.index == 0
    assert not offer.isVisible()  # the tour's own controls take its place


def test_the_presentation_flag_starts_on_figure_one_with_the_tour_offered(window, qtbot):
    """`explorer --presentation` as the app applies it after building its window."""
    from explorer.app import parse_args
    from explorer.launch import show_with_flags

    show_with_flags(window, parse_args(["--presentation"]))
    _settle(qtbot)
    assert window.lecture.presentation.active
    assert [n for n, d in window.docks.items() if d.isVisible()] == ["architecture"]
    assert window.lecture.tour_offer.isVisible()


@pytest.mark.parametrize("way_out", ["exit_tour", "escape", "f11"])
def test_every_way_out_gives_back_a_whole_layout(window, qtbot, way_out):
    """A tour's solo scene and presentation's one-panel view hide docks; Exit tour (not
    presenting), Esc and F11 show every dock again, none squeezed below its least size; Exit tour
    while presenting shows Figure 1 alone and whole, no neighbour as a strip."""
    lecture = window.lecture
    lecture.deck.open(TOUR_PATH)
    _settle(qtbot)
    if way_out == "exit_tour":
        lecture.exit_tour_action.trigger()
        _settle(qtbot)
        assert not _whole_layout(window), _whole_layout(window)
        lecture.deck.open(TOUR_PATH)
    lecture.presentation.enter(full_screen=False)
    _settle(qtbot)
    if way_out == "exit_tour":
        lecture.exit_tour_action.trigger()
        _settle(qtbot)
        shown = [d for d in window.docks.values() if d.isVisible()]
        assert shown == [window.docks["architecture"]] and shown[0].width() >= 0.9 * window.width()
        least = shown[0].minimumSizeHint()
        assert shown[0].width() >= least.width() and shown[0].height() >= least.height()
        lecture.presentation.leave()
    elif way_out == "escape":
        QTest.keyClick(window, Qt.Key_Escape)
    else:
        QTest.keyClick(window, Qt.Key_F11)
    _settle(qtbot)
    assert not lecture.presentation.active
    assert not _whole_layout(window), _whole_layout(window)


@pytest.mark.parametrize("size", [(1280, 720), (1024, 768)])
def test_exit_tour_while_presenting_returns_to_figure_one_whole(window, qtbot, tmp_path, size):
    """Exit tour from any scene, whichever panel was clicked last, gives the room what presenting
    opens on: Figure 1 alone with the tour offered, every text whole and inside the window; no
    other dock is shown on the way (it would draw for nobody)."""
    from PySide6.QtCore import QEvent, QObject

    from layout_checks import panel_problems, settle_until_still

    class Shows(QObject):
        def eventFilter(self, watched, event):  # noqa: N802 - Qt's name
            if event.type() == QEvent.Type.Show:
                shown.append(watched.objectName())
            return False

    from model.io.scenes import Scene, Tour, save_tour
    lecture = window.lecture
    lecture.presentation.enter(full_screen=False)
    window.resize(*size)
    save_tour(Tour([Scene(name, task="reverse", panel=name, solo=True) for name in ("architecture", "heads")]),
              tmp_path / "tour.json")
    assert lecture.deck.open(tmp_path / "tour.json") and lecture.deck.next()
    _settle(qtbot)
    QTest.mouseClick(window.panels["heads"].reset_button, Qt.LeftButton)  # the lecturer clicked in the scene's panel
    assert window.docks["heads"].isAncestorOf(QApplication.focusWidget())
    shown, counter = [], Shows()
    for dock in window.docks.values():
        dock.installEventFilter(counter)
    lecture.exit_tour_action.trigger()
    assert settle_until_still(qtbot, window)
    assert [n for n, d in window.docks.items() if d.isVisible()] == ["architecture"]
    assert shown == ["dock_architecture"], shown
    assert lecture.tour_offer.isVisible() and not lecture.caption_bar.isVisible()
    parts = (window.panels["architecture"], window.input_bar, lecture.strip)
    problems = [p for part in parts for p in panel_problems(part, window)]
    assert not problems and window.size().toTuple() == size, problems


def test_a_panel_is_told_when_the_window_crosses_into_another_class(window, qtbot):
    panel = window.panels["training"]
    told: list[ScreenClass] = []
    original = panel.apply_screen_class
    panel.apply_screen_class = lambda cls: (told.append(cls), original(cls))
    try:
        window.resize(1300, 760)  # still a projector: nothing to tell
        _settle(qtbot)
        assert told == []
        window.resize(900, 700)
        _settle(qtbot)
        assert told == [ScreenClass.NARROW] and window.screen_class is ScreenClass.NARROW
        assert panel.body.count() == 2  # its declared narrow layout: the curves and the probe a tab each
        window.resize(1280, 720)
        _settle(qtbot)
        assert told[-1] is ScreenClass.PROJECTOR and panel.body.count() == 1  # side by side in one page
        assert panel.curves_page.geometry().right() < panel.probe.geometry().left()
    finally:
        del panel.apply_screen_class


def test_the_input_bar_declares_its_rows_per_class(window, qtbot):
    """A projector: the token echo beside the output line; narrow: on a row of its own under
    it. Presenting, the panel chooser ends the echo's row, and the output, a shown model's
    "Showing:" and Back get the row under it."""
    from explorer.session import ShownModel
    from model.io.checkpoints import random_bundle

    bar = window.input_bar
    bar.source.setText("abc")
    _settle(qtbot)

    def row(widget) -> int:
        return widget.mapTo(bar, widget.rect().center()).y()

    assert row(bar.echo) == row(bar.status)
    window.resize(900, 700)
    _settle(qtbot)
    assert row(bar.echo) > row(bar.status) and bar.echo.width() > bar.width() // 2
    window.resize(1280, 720)
    window.lecture.presentation.enter(full_screen=False)
    _settle(qtbot)
    assert row(bar.echo) == row(window.lecture.strip) < row(bar.status)
    assert bar.status.width() > bar.width() // 2  # the output's own row
    window.state.session.show_model(ShownModel(random_bundle("reverse"), "training run, step 7"))
    qtbot.waitUntil(bar.shown_label.isVisible, timeout=20_000)
    _settle(qtbot)
    assert row(bar.shown_label) == row(bar.back_button) == row(bar.status) > row(bar.echo)
    assert window.width() == 1280  # nothing widens the window
    window.state.session.show_model(None)


def test_a_narrow_window_stacks_every_dock_in_one_column_and_widening_gives_the_columns_back(window, qtbot):
    """NARROW: every dock a tab of one group filling the window's width, the panel in front kept
    in front; wider again: the two columns as they were."""
    def columns() -> set[int]:
        return {d.geometry().left() for d in window.docks.values() if not d.visibleRegion().isEmpty()}

    window.focus_panel("attention")
    _settle(qtbot)
    assert len(columns()) == 2  # the architecture on the left, the attention maps on the right
    window.resize(900, 1000)
    _settle(qtbot)
    docks = list(window.docks.values())
    assert all(len(window.tabifiedDockWidgets(d)) == len(docks) - 1 for d in docks)
    front = [n for n, d in window.docks.items() if not d.visibleRegion().isEmpty()]
    assert front == ["attention"] and window.docks["attention"].width() >= 0.95 * window.width()
    assert not _whole_layout(window), _whole_layout(window)
    window.resize(1280, 720)
    _settle(qtbot)
    assert len(columns()) == 2 and 0 in columns()  # the two columns back


def test_an_input_with_unknown_symbols_fits_a_1024_projector(window, qtbot):
    """The token echo's always-shown part is the count: the unknown symbols' note may give way
    (the message bar and the tooltip name them), so a long note never makes the window wider
    than a 1024-px projector."""
    window.lecture.presentation.enter(full_screen=False)
    window.resize(1024, 768)
    window.input_bar.source.setText("hello world, 12 symbols ~ # @ this model never saw")
    _settle(qtbot)
    assert "unknown" in window.input_bar.echo.text()
    assert window.minimumSizeHint().width() <= 1024 and window.width() == 1024


def test_presenting_on_a_1024_projector_the_echo_shows_tokens_and_the_output_its_note(window, qtbot):
    """The room reads the tokens the model reads, and why an answer may be wrong: at 1024 px the
    echo shows tokens, not just its count, at the default scale and at a larger one (where the
    panel chooser's row leaves it too little room, it gets a whole row); an out-of-range input's
    note is on screen whole, ahead of the output it qualifies."""
    from PySide6.QtGui import QTextDocumentFragment

    from explorer.presentation import DEFAULT_SCALE
    from model.io.checkpoints import random_bundle

    def shown(label) -> str:
        return QTextDocumentFragment.fromHtml(label.shown_text()).toPlainText()

    def row(widget) -> int:
        return widget.mapTo(bar, widget.rect().center()).y()

    presentation = window.lecture.presentation
    presentation.enter(full_screen=False)
    window.resize(1024, 768)
    bar, long = window.input_bar, "abcdefghijklmnopqrstuvwxyzabcdef"
    window.runner.set_bundle(random_bundle("reverse"), then_run="attention")
    bar.source.setText("abcdefghij")
    try:
        for scale in (DEFAULT_SCALE, 2.2):
            presentation.set_scale(scale)
            _settle(qtbot)
            assert shown(bar.echo).startswith("10 tokens: abc"), scale
        assert row(bar.echo) > row(window.lecture.strip) and bar.echo.width() > 0.9 * bar.width()
    finally:
        presentation.set_scale(DEFAULT_SCALE)
    window.runner.run(long)
    qtbot.waitUntil(lambda: window.state.frame is not None and window.state.frame.source == long, timeout=20_000)
    _settle(qtbot)
    note = window.state.frame.notes[0]
    assert shown(bar.status).startswith(f"⚠ {note}")
    assert window.width() == 1024
