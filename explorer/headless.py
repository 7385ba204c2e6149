"""Figures without a screen (`--screenshot FILE.png`): the real window offscreen, the forward run
synchronously, a PNG saved; any problem is one line on stderr and a non-zero exit status."""
from __future__ import annotations

import sys
from pathlib import Path


class HeadlessError(ValueError):
    """A problem with the request (panel, checkpoint, input, step, file); the message says which."""


def screenshot(args) -> int:
    from explorer.export import ExportError
    from explorer.launch import fail
    try:
        return _screenshot(args)
    except (ValueError, ExportError) as exc:  # a flag, the model's checks, the scene file, the PNG
        return fail(str(exc))
    except Exception as exc:  # noqa: BLE001 - a figure run must end with a message, not a traceback
        return fail(f"unexpected {type(exc).__name__}: {exc}")


def _screenshot(args) -> int:
    from explorer.launch import DEFAULT_INPUT, PANEL_NAMES, check_panel, parse_size
    check_panel(args.panel)
    width, height = parse_size(args.size)
    out = Path(args.screenshot)
    if out.suffix.lower() != ".png":
        raise HeadlessError(f"--screenshot must name a .png file, got {out}")
    if not out.parent.exists():
        raise HeadlessError(f"the folder {out.parent} does not exist")
    if args.train_seconds is not None and not 0 < args.train_seconds <= 3600:
        raise HeadlessError(f"--train-seconds must be between 0 and 3600, got {args.train_seconds:g}")
    if args.scene:  # a bad scene file is refused before any window is built
        from model.io.scenes import load_tour
        load_tour(args.scene, PANEL_NAMES)

    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from explorer.launch import close_window, open_window
    from explorer.runner import default_bundle, load_bundle

    owned = QApplication.instance() is None  # this process is the figure's alone: nothing to put back after
    app = QApplication.instance() or QApplication(sys.argv[:1])
    try:
        bundle = load_bundle(args.checkpoint) if args.checkpoint else default_bundle()
    except (ValueError, OSError) as exc:
        raise HeadlessError(f"cannot load checkpoint {args.checkpoint}: {exc}") from None
    from model.io.run_request import check_request, first_readable
    if args.input is None:  # the default sentence if the model reads it, else its first example it does
        args.input = first_readable(bundle, (DEFAULT_INPUT, *bundle.examples), not args.no_chat) or DEFAULT_INPUT
    heads = check_request(bundle, args.input, args.target, not args.no_chat, args.ablate, args.compare)
    # Figures always use the default layout, and never overwrite the user's saved one.
    state, runner, window = open_window(app, args, heads, synchronous=True, settings=QSettings(),
                                        restore=False, persist=False)
    window.resize(width, height)
    try:
        return _render(app, window, bundle, args, out)
    finally:
        if not owned:  # scale and theme are process-wide: put them back for the app's other windows
            from explorer.presentation import apply_theme
            window.lecture.presentation.leave()  # (each re-styles every widget: ~1 s of a 10-s figure)
            apply_theme(app, "light")
        close_window(app, window)  # (it stops its panels' work)


def _render(app, window, bundle, args, out) -> int:
    from explorer.export import export_panel
    from explorer.launch import apply_run_flags, show_with_flags
    state, errors = window.state, []
    window.runner.failed.connect(errors.append)
    state.set_bundle(bundle)
    window.runner.run(args.input, args.target)
    if errors:
        raise HeadlessError(f"bad input: {errors[0]}")
    show_with_flags(window, args, figure=True)
    problem = apply_run_flags(window, args)
    if problem:
        raise HeadlessError(problem)
    if args.scene and errors:  # (the file was checked by _screenshot before the window was built)
        raise HeadlessError(f"scene {args.scene}: {errors[-1]}")
    front = window.current_panel  # --panel's, presenting's or the scene's
    visible = [panel for name in window.docks if (panel := window.panels.built(name)) is not None and panel.isVisible()]
    for panel in dict.fromkeys(filter(None, (window.panels.get(front), *visible))):  # (`get` builds the front one)
        # panels with work of their own (compare, attribution) finish it first
        waiting = getattr(panel, "wait_until_drawn", None)
        if waiting is not None:
            waiting()
    if args.train_seconds:  # the front panel's own training (the leak lab), else the Training panel's
        trainer = window.panels.get(front)
        trained = (trainer if hasattr(trainer, "train_for") else window.panels["training"]).train_for(args.train_seconds)
        print(f"trained {trained} steps in {'at most ' if front in ('leak', 'induction') else ''}{args.train_seconds:g} s")
    for _ in range(2):  # layout, then pyqtgraph's deferred axis/label updates (the export settles the rest)
        app.processEvents()
    export_panel(window, out, fmt="png")
    frame = state.frame
    shown = f", model {frame.model_label}, output {frame.output_text!r}" if frame is not None else ""
    print(f"wrote {out} ({window.width()}×{window.height()}, panel {front}{shown})")
    return 0
