"""`transformer-explorer`: start the window (or, with --screenshot, render one figure and exit).
The first screen already shows a forward pass of the bundled `reverse` model."""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path

from explorer import launch


def icon_path() -> Path:
    """The app's icon, found without importing `model` (torch): in a wheel or a checkout."""
    package = Path(importlib.util.find_spec("model").origin).parent
    name = ("icons", "transformer-explorer.svg")
    packaged = package.joinpath("assets", *name)
    return packaged if packaged.is_file() else package.parent.joinpath("assets", *name)


ICON_PATH = icon_path()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("transformer-explorer")
    except PackageNotFoundError:  # a source checkout on sys.path without an install
        from model import __version__
        return __version__


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="transformer-explorer",
        description="See the Transformer of 'Attention Is All You Need' work. "
                    "'transformer-explorer train --help' trains a model.")
    p.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    p.add_argument("--checkpoint", metavar="DIR", help="a checkpoint folder, or the name of a bundled one")
    p.add_argument("--input", metavar="TEXT", help=f"the source text to run (default: {launch.DEFAULT_INPUT!r})")
    p.add_argument("--target", metavar="TEXT", help="teacher-force the decoder on this target")
    p.add_argument("--no-chat", action="store_true", help="give a chat model (smollm2) the input as a plain prompt to "
                   "continue, not as a user's message in its chat template")
    p.add_argument("--compare", metavar="DIR", help="a checkpoint of the same architecture to compare with "
                   "(--panel compare), a run's folder of step-… snapshots, or `untrained`: the model's own "
                   "architecture freshly initialised (what did training change?; a folder named so: ./untrained)")
    p.add_argument("--panel", metavar="NAME", help="the panel to bring to the front (default: the forward pass; "
                                                   "presenting: Figure 1)")
    p.add_argument("--step", metavar="NAME", help="select this step (e.g. encoder.layers.0.self_attn.weights)")
    p.add_argument("--screenshot", metavar="FILE.png", help="render offscreen, save a PNG and exit")
    p.add_argument("--size", metavar="WxH", default="1280x800", help="window size for --screenshot")
    p.add_argument("--reset-layout", action="store_true", help="ignore the saved dock layout")
    p.add_argument("--presentation", action="store_true", help="start in presentation mode (large fonts, high contrast)")
    p.add_argument("--theme", choices=("light", "dark"), help="colour theme")
    p.add_argument("--scene", metavar="FILE.json", help="open a scene or tour file (PageDown / PageUp step through it)")
    p.add_argument("--ablate", metavar="HEADS",
                   help="head surgery, e.g. encoder:0:1=zero,cross:1:0=uniform (kind:layer:head from 0 = zero|mean|uniform)")
    p.add_argument("--train-seconds", metavar="N", type=float,
                   help="with --screenshot: live-train in the Training panel for N seconds first "
                        "(with --panel leak or induction: run that panel's own lab, at most N seconds of training)")
    return p


def parse_args(argv: list[str] | None = None):
    """The flags; `panel`: --panel, else with --compare the compare panel (`panel_given`), else "step"."""
    args = build_parser().parse_args(argv)
    args.panel_given = args.panel is not None or bool(args.compare)
    args.panel = args.panel or ("compare" if args.compare else "step")
    return args


def run_app(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.screenshot:
        if not os.environ.get("QT_QPA_PLATFORM"):
            os.environ["QT_QPA_PLATFORM"] = "offscreen"  # before any QApplication exists
        from explorer.headless import screenshot
        return screenshot(args)
    try:
        launch.check_panel(args.panel)
        heads = {}
        if args.ablate:  # (torch is imported only then: start-up stays fast)
            from model.interpret.interventions import parse_heads
            heads = parse_heads(args.ablate)
    except ValueError as exc:
        return launch.fail(str(exc))

    from PySide6.QtCore import Qt
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    from explorer.startup import StartupWindow, import_in_background

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("Transformer Explorer")
    app.setWindowIcon(QIcon(str(ICON_PATH)))
    # A window within a second; it keeps painting while torch loads on a worker thread.
    startup = StartupWindow()
    startup.show()
    app.processEvents()
    import_in_background("torch", "model.interpret.frame")
    if not startup.isVisible():  # closed while loading: the user changed their mind
        return 0
    startup.stage(1)

    state, runner, window = launch.open_window(app, args, heads, restore=not args.reset_layout)
    launch.show_with_flags(window, args)
    startup.close()
    startup.deleteLater()
    from explorer.gui_collector import collect_on_gui_thread
    collector = collect_on_gui_thread()  # (held until the event loop ends)

    def after_first_run(_result) -> None:  # the scene may keep the model loaded first
        problem = launch.apply_run_flags(window, args)
        if problem:
            state.inform(problem, "warning")
    once = Qt.ConnectionType.SingleShotConnection
    state.resultChanged.connect(after_first_run, once)
    text = args.input or launch.DEFAULT_INPUT
    if args.checkpoint:
        def fall_back(_message: str) -> None:  # a bad --checkpoint: say so, but still open a model
            if state.bundle is None:
                runner.load_default(then_run=text)
        runner.failed.connect(fall_back, once)
        runner.load(args.checkpoint, then_run=text, then_target=args.target)
    else:
        runner.load_default(then_run=text, then_target=args.target)
    code = app.exec()
    runner.wait()
    launch.close_window(app, window)
    collector.timer.stop()
    return code
