"""Presentation mode: fonts, axes and curve widths really grow by the chosen scale and come
back exactly; the lecture chrome hides and returns; themes recolour the palette and every
pyqtgraph canvas; the scale persists; a damaged setting falls back; the figure CLI renders
dark and light presentation figures."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pyqtgraph as pg  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtCore import QSettings, Qt, QThreadPool  # noqa: E402
from PySide6.QtGui import QImage, QPalette  # noqa: E402
from PySide6.QtWidgets import QApplication, QLabel, QToolButton  # noqa: E402

from explorer import presentation, style, theme  # noqa: E402
from support import build_main_window, make_main_window  # noqa: E402


@pytest.fixture(scope="module")
def shared(qapp, tmp_path_factory):
    """One 1280×720 window for the module: entering and leaving presentation is what these tests
    check, so each test starts from (and its fixture puts back) the window as it was."""
    from explorer import style
    from explorer.launch import close_window
    style.apply_app_style(qapp)  # as the app starts: its style sheet sizes the dock titles
    w = build_main_window(tmp_path_factory.mktemp("present"), size=(1280, 720))
    yield w
    close_window(qapp, w)


@pytest.fixture
def window(shared, qtbot):
    shared.settings.remove(presentation.SCALE_KEY)
    shared.resize(1280, 720)
    _settle(qtbot)
    yield shared
    shared.lecture.presentation.leave()
    if shared.isFullScreen():
        shared.showNormal()
    shared.settings.remove(presentation.SCALE_KEY)
    # leaving shows the docks again: the attribution panel may start its worker; re-polish the
    # application only once it is done (a worker's garbage collection mid-polish segfaulted)
    QApplication.processEvents()  # (the panel's refresh waits for the queued events)
    QThreadPool.globalInstance().waitForDone(30_000)
    if theme.current().name != "light":
        shared.lecture.set_theme("light")
    presentation.apply_theme(QApplication.instance(), "light")


def test_screenshot_cli_presentation_dark_and_light(tmp_path, qapp):
    """(First in the module: a figure run beside a presenting window would share its
    process-wide scale.) A dark presentation figure is darker than a light figure of the same panel and size (the
    light one without --presentation: the light theme while presenting is the layout sweep's)."""
    from explorer.app import run_app
    dark, light = tmp_path / "dark.png", tmp_path / "light.png"
    assert run_app(["--panel", "attention", "--presentation", "--theme", "dark", "--size", "1280x720",
                    "--screenshot", str(dark)]) == 0
    assert run_app(["--panel", "attention", "--theme", "light", "--size", "1280x720",
                    "--screenshot", str(light)]) == 0
    assert QImage(str(dark)).size().toTuple() == (1280, 720)
    assert _mean_lightness(dark) + 60 < _mean_lightness(light)
    assert style.scale() == 1.0  # the figure run put the process-wide scale back


def test_enter_scales_fonts_axes_and_curves_and_leave_restores(window, qtbot):
    source = window.input_bar.source
    size0 = source.font().pointSizeF()
    axis = next(i for v in presentation.plot_views() for i in v.scene().items()
                if isinstance(i, pg.AxisItem))
    tick0 = axis.style["tickFont"].pointSizeF() if axis.style.get("tickFont") else style.SMALL_POINT_SIZE
    curve = window.panels["training"].curves.curves["loss"]
    width0 = curve.opts["pen"].widthF()
    window.settings.setValue(presentation.SCALE_KEY, 1.75)
    window.lecture.presentation.enter(full_screen=False)
    assert window.lecture.presentation.active and style.scale() == pytest.approx(1.75)
    assert source.font().pointSizeF() == pytest.approx(style.BASE_POINT_SIZE * 1.75)  # the sheet's one size
    assert QApplication.font().pointSizeF() == pytest.approx(style.BASE_POINT_SIZE * 1.75)
    assert axis.style["tickFont"].pointSizeF() == pytest.approx(tick0 * 1.75)
    assert pg.mkPen(curve.opts["pen"]).widthF() == pytest.approx(width0 * 1.75)
    assert style.font(10).pointSizeF() == pytest.approx(17.5)  # widgets built now are large too
    assert window.menuBar().isHidden() and window.input_bar.device_label.isHidden()
    assert window.lecture.present_action.isChecked()
    assert_one_line_of_lecture_chrome(window, qtbot)
    window.lecture.presentation.leave()
    assert source.font().pointSizeF() == pytest.approx(size0)
    assert pg.mkPen(curve.opts["pen"]).widthF() == pytest.approx(width0)
    assert style.scale() == 1.0
    assert not window.menuBar().isHidden() and not window.lecture.caption_bar.isVisible()
    assert not window.lecture.strip.isVisible()


def assert_one_line_of_lecture_chrome(window, qtbot):
    """While presenting, the panel chooser and Leave end the input bar's second row (no toolbar
    row of their own), the chooser names the panel in front, and Leave is there. (Their texts
    whole on each screen class: the layout sweep's top bar.)"""
    lecture, bar = window.lecture, window.input_bar
    qtbot.waitUntil(lambda: lecture.strip.isVisible())
    assert not lecture.caption_bar.isVisible()  # (no tour open: the tour row stays hidden too)
    assert bar.isAncestorOf(lecture.strip)  # in the input bar's row
    switcher = lecture.presentation.switcher
    front = switcher.itemText(switcher.currentIndex())
    shown = switcher.shown_text()  # the panel's name whole, its name without "(…)", or its start and "…"
    assert front.startswith(shown.removesuffix("…").rstrip()) and (shown == front or " (" in front
                                                                   or shown.endswith("…"))
    leave = lecture.strip.findChild(QToolButton, "presenter_leave")
    assert leave.isVisible()


def test_presenting_floats_status_messages_over_the_window_instead_of_a_status_bar(window, qtbot):
    """While presenting there is no status bar (~50 px under every panel on a beamer); a message
    floats over the window's bottom edge, whole, in its level's colour, and goes when the bar's
    message would. Work that ends within a moment is not flashed; longer work is said."""
    from explorer import theme
    from explorer.toast import BUSY_DELAY_MS
    window.lecture.presentation.enter(full_screen=False)
    _settle(qtbot)
    dock = window.docks[window.lecture.presentation.shown[0]]
    toast = window.toast
    assert window.statusBar().isHidden() and toast.text() == ""
    assert window.height() - dock.geometry().bottom() < 20  # the panel reaches the window's bottom
    text = "The model does not know “€”; it reads it as <unk>."
    window.state.inform(text, "warning")
    label = toast.label
    assert toast.text() == text and label.isVisible()
    geo = label.geometry()
    assert geo.left() >= 0 and geo.right() <= window.width() and geo.bottom() <= window.height()
    assert label.fontMetrics().horizontalAdvance(text) <= label.contentsRect().width()  # whole, one line
    assert theme.current().accent_text in label.styleSheet()
    window.statusBar().clearMessage()  # (what the bar's 15-s timeout does)
    assert toast.text() == "" and not label.isVisible()
    toast._expiry.setInterval(200)  # (SHOWN_MS: the panel's bottom is covered that long, not the bar's 15 s)
    window.state.inform("Exported the panel.", "info")
    assert toast.text() == "Exported the panel."
    qtbot.waitUntil(lambda: toast.text() == "", timeout=3000)
    assert window.statusBar().currentMessage() == "Exported the panel."  # the bar (hidden) still has it
    window.state.inform("Exported the panel.", "error")  # said again: shown again
    assert toast.text() == "Exported the panel." and theme.current().error in label.styleSheet()
    window.statusBar().clearMessage()
    window.state.set_busy(True, "Running")
    assert toast.text() == ""  # a run of a few ms is not announced
    qtbot.waitUntil(lambda: toast.text() == "Running…", timeout=BUSY_DELAY_MS + 3000)  # announced after a while
    window.state.set_busy(False, "")
    assert toast.text() == ""
    window.lecture.presentation.leave()
    _settle(qtbot)
    assert not window.statusBar().isHidden()
    window.state.inform("an export was written", "info")
    assert toast.text() == "" and window.statusBar().currentMessage() == "an export was written"


def test_presenting_an_unknown_symbol_is_said_once_in_the_output_line_not_over_the_panels(window, qtbot):
    window.lecture.presentation.enter(full_screen=False)
    _settle(qtbot)
    window.statusBar().clearMessage()
    window.runner.run("ab1c")
    window.runner.wait()
    qtbot.waitUntil(lambda: window.state.result is not None and window.state.source_text == "ab1c", timeout=30000)
    assert window.state.result.source.unknown  # (the 1 is read as <unk>)
    assert window.toast.text() == ""
    assert "⚠ 1 symbol this model was not trained on" in window.input_bar.status.shown_text()
    window.lecture.presentation.leave()
    window.runner.run("ab2c")
    window.runner.wait()
    qtbot.waitUntil(lambda: window.state.source_text == "ab2c", timeout=30000)
    assert "<unk>" in window.statusBar().currentMessage()  # not presenting: the bar says it too


def test_f11_toggles_full_screen_and_escape_leaves(window, qtbot):
    qtbot.keyClick(window, Qt.Key_F11)
    assert window.lecture.presentation.active and window.isFullScreen()
    qtbot.keyClick(window, Qt.Key_Escape)
    assert not window.lecture.presentation.active and not window.isFullScreen()


def test_scale_persists_and_a_damaged_value_falls_back(window):
    window.lecture.presentation.set_scale(2.25)
    window.settings.sync()
    again = QSettings(window.settings.fileName(), QSettings.IniFormat)
    assert presentation.read_scale(again) == pytest.approx(2.25)
    again.setValue(presentation.SCALE_KEY, "huge")
    assert presentation.read_scale(again) == presentation.DEFAULT_SCALE
    again.setValue(presentation.SCALE_KEY, 40)
    assert presentation.read_scale(again) == presentation.DEFAULT_SCALE
    again.setValue(presentation.THEME_KEY, "purple")
    assert presentation.read_theme(again) == "light"
    again.remove(presentation.SCALE_KEY)
    again.remove(presentation.THEME_KEY)
    again.sync()
    window.settings.sync()


def test_dark_theme_recolours_palette_and_plots_and_role_sheets(window):
    readout = QLabel("Hover over a cell", window)
    style.set_sheet(readout, "background: {readout_bg}; color: {readout_text}; padding: 4px;")
    window.lecture.set_theme("dark")
    app = QApplication.instance()
    assert app.palette().color(QPalette.Window).lightnessF() < 0.2
    assert app.palette().color(QPalette.WindowText).lightnessF() > 0.8
    views = presentation.plot_views()
    assert views and all(v.backgroundBrush().color().lightnessF() < 0.2 for v in views)
    dark = presentation.THEMES["dark"]
    assert f"background: {dark.readout_bg}; color: {dark.readout_text}" in readout.styleSheet()
    assert window.settings.value(presentation.THEME_KEY) == "dark"
    window.lecture.set_theme("light")
    assert app.palette().color(QPalette.Window).lightnessF() > 0.8
    assert all(v.backgroundBrush().color().lightnessF() > 0.8 for v in presentation.plot_views())


def test_training_titles_keep_theme_and_scale_when_the_panel_narrows(window):
    curves = window.panels["training"].curves
    window.settings.setValue(presentation.SCALE_KEY, 2.0)
    window.lecture.set_theme("dark")
    window.lecture.presentation.enter(full_screen=False)
    window.focus_panel("training")  # presenting shows one panel: this one
    for width in (300, 1200, 300):  # presenting, at any width: short titles, the colours named in them
        curves.resize(width, 800)  # (not wider than 2 × its height: 2 × 2, not a row of four)
        assert not curves.legend.isVisible()  # (a legend box covered the 1280×720 accuracy plot)
        title = curves.loss_plot.titleLabel
        assert pg.mkColor(title.opts["color"]).lightnessF() > 0.8, title.opts  # light text on the dark canvas
        assert float(title.opts["size"][:-2]) == pytest.approx(style.TITLE_POINT_SIZE * 2.0, abs=0.1)
    window.lecture.presentation.leave()
    window.resize(1920, 1080)  # a wide screen, not presenting: the legend again, the titles at scale 1
    curves.resize(1200, 800)
    assert curves.legend.isVisible()
    title = curves.loss_plot.titleLabel
    assert pg.mkColor(title.opts["color"]).lightnessF() > 0.8, title.opts
    assert float(title.opts["size"][:-2]) == pytest.approx(style.TITLE_POINT_SIZE, abs=0.1)


def _mean_lightness(path) -> float:
    image = QImage(str(path)).convertToFormat(QImage.Format_Grayscale8)
    arr = np.frombuffer(bytes(image.constBits()), np.uint8)
    return float(arr.mean())



def _settle(qtbot, rounds: int = 4) -> None:
    for _ in range(rounds):  # layout, pyqtgraph's deferred geometry, the figure's re-arrangement
        QApplication.processEvents()
        qtbot.wait(5)


def test_leaving_restores_docks_and_title_size(window, qtbot):
    before = {n: d.isVisible() for n, d in window.docks.items()}
    title_top = window.docks["step"].widget().geometry().top()  # the title bar's height
    font = window.docks["step"].font().pointSizeF()
    window.lecture.presentation.enter(full_screen=False)
    window.focus_panel("decoding")
    _settle(qtbot)
    assert window.docks["step"].isHidden() and window.docks["decoding"].widget().geometry().top() < title_top
    window.lecture.presentation.leave()
    _settle(qtbot)
    assert {n: d.isVisible() for n, d in window.docks.items()} == before
    assert window.docks["step"].font().pointSizeF() == pytest.approx(font)
    assert window.docks["step"].widget().geometry().top() == title_top  # the title back at its normal size



def _role(widget) -> str:
    """The font role a widget is sized by: its own, a combo popup's combo's, else body text."""
    from PySide6.QtWidgets import QComboBox
    owner = widget.parent() if isinstance(widget.parent(), QComboBox) else widget
    return owner.property(style.ROLE_PROPERTY) or "body"


def test_every_widget_font_is_the_presentations_while_presenting_and_its_own_after(window, qtbot):
    """No widget is walked: the style sheet gives each widget with a font of its own (a combo's
    popup among them) its font role's size × the scale while presenting (body text without a role),
    and Qt gives its own size back after leaving (the positional and training panels, in one presentation)."""
    from PySide6.QtWidgets import QDockWidget, QWidget
    names = ("positional", "training")
    for name in names:  # views in tabs are built when first shown (DeferredPages): all of them
        pages = getattr(window.panels[name], "pages", None)
        if pages is not None:
            pages.build_all()

    def fonts(name) -> dict[int, tuple[str, float]]:
        panel = window.panels[name]
        return {id(w): (type(w).__name__, w.font().pointSizeF(), _role(w))
                for w in [panel, *panel.findChildren(QWidget)]
                if w.testAttribute(Qt.WA_SetFont) and w.font().pointSizeF() > 0}

    before = {name: fonts(name) for name in names}
    for name in names:
        assert any(kind == "QFrame" for kind, _pt, _role in before[name].values()), name  # (a combo's popup)
    window.lecture.presentation.enter(full_screen=False)
    assert style.scale() > 1.0
    for name in names:
        window.focus_panel(name)
        _settle(qtbot)
        during = fonts(name)
        wrong = {kind: (pt, during[key][1]) for key, (kind, pt, role) in before[name].items()
                 if key in during and kind != QDockWidget.__name__
                 and during[key][1] != pytest.approx(style.FONT_ROLES[role][0] * style.scale(), abs=0.05)}
        assert not wrong, (name, wrong)
    window.lecture.presentation.leave()
    _settle(qtbot)
    for name in names:
        after = fonts(name)
        wrong = {kind: (pt, after[key][1]) for key, (kind, pt, _role) in before[name].items()
                 if key in after and after[key][1] != pytest.approx(pt, abs=0.05)}
        assert not wrong, (name, wrong)


def test_axis_titles_grow_with_the_presentation_and_shrink_back(window, qtbot):
    """An axis title's size is written in its HTML, which wins over the font the scaling pass
    sets: "probability" stayed 11 pt beside 16.5-pt tick labels on a beamer. Each titled axis'
    text (the decoding and training panels': one window, one presentation) is drawn at the
    presentation's scale while presenting (its height measured) and at its own size after."""
    names = ("decoding", "training")

    def titles() -> dict[int, tuple[str, float]]:
        out = {}
        for name in names:
            window.focus_panel(name)
            _settle(qtbot)
            for view in window.panels[name].findChildren(pg.GraphicsView):
                for item in view.scene().items():
                    if isinstance(item, pg.AxisItem) and item.label.isVisible() and item.labelText:
                        out[id(item)] = (item.labelText, item.label.boundingRect().height())
        return out

    before = titles()
    assert {"probability", "accuracy"} <= {text for text, _h in before.values()}
    window.lecture.presentation.enter(full_screen=False)
    during = titles()
    assert set(before) <= set(during)  # the same axes, measured again
    wrong = {text: (h, during[key][1]) for key, (text, h) in before.items() if not 1.3 < during[key][1] / h < 1.6}
    assert style.scale() == pytest.approx(1.5) and not wrong, wrong
    window.lecture.presentation.leave()
    after = titles()
    wrong = {text: (h, after[key][1]) for key, (text, h) in before.items()
             if key in after and after[key][1] != pytest.approx(h, abs=1.0)}
    assert not wrong, wrong


def test_a_panel_first_built_while_presenting_has_its_own_fonts_after_leaving(window, qtbot, tmp_path):
    """Entering builds no panel (17 builds would stall the window for seconds): one first shown
    while presenting is built at the presentation's size and, after leaving, its fonts are those
    of the same panel built at the normal size."""
    from PySide6.QtWidgets import QWidget

    def fonts(panel) -> list[tuple[str, float]]:
        return sorted((type(w).__name__, round(w.font().pointSizeF(), 1)) for w in [panel, *panel.findChildren(QWidget)]
                      if w.testAttribute(Qt.WA_SetFont) and w.font().pointSizeF() > 0)

    normal = window  # the module's window, not presenting: its heads panel is built at the normal size
    expected = fonts(normal.panels["heads"])
    window = make_main_window(qtbot, tmp_path, size=(1280, 720))
    window.lecture.presentation.enter(full_screen=False)
    assert window.panels.built("heads") is None
    window.focus_panel("heads")
    _settle(qtbot)
    assert window.panels.built("heads") is not None
    panel = window.panels["heads"]
    roles = [(type(w).__name__, round(w.font().pointSizeF(), 1), _role(w)) for w in [panel, *panel.findChildren(QWidget)]
             if w.testAttribute(Qt.WA_SetFont) and w.font().pointSizeF() > 0]
    assert roles and all(pt == pytest.approx(style.FONT_ROLES[role][0] * style.scale(), abs=0.05)
                         for kind, pt, role in roles if kind != "QDockWidget"), roles  # each its role's size, scaled
    window.lecture.presentation.leave()
    _settle(qtbot)
    by_kind: dict[str, set[float]] = {}
    for kind, pt in expected:
        by_kind.setdefault(kind, set()).add(pt)
    after = fonts(window.panels["heads"])  # (a layout of another screen class may hold a widget more)
    assert all(pt in by_kind.get(kind, {pt for _k, pt in expected}) for kind, pt in after), (after, expected)


def test_presenting_the_attention_grid_leaves_no_map_below_the_view(window, qtbot):
    """The grid's maps take the height under the heading at the presenting font: where they are
    above their least size nothing needs scrolling (a map's column labels stay in view)."""
    from explorer.drawing.heatmap_grid import least_side
    window.runner.load("dates", then_run="22 November 2026")  # 16 tokens: labels strided, maps tall
    window.runner.wait()
    window.lecture.presentation.enter(full_screen=False)
    window.focus_panel("attention")
    panel = window.panels["attention"]
    panel.set_view("grid")
    window.state.select_attention("encoder", 1, 0)
    _settle(qtbot, 8)
    qtbot.waitUntil(lambda: bool(panel.grid.drawn.get("encoder")))
    _settle(qtbot)
    maps = [m for m in panel.grid.maps[0] if m.isVisible()]
    assert maps and min(m.height() for m in maps) > least_side()
    assert panel.grid.scroll_area.verticalScrollBar().maximum() == 0
