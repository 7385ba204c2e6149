"""Figures without a screen (`--screenshot FILE.png`): the real window offscreen, the forward run
synchronously, a PNG saved; any problem is one line on stderr and a non-zero exit status."""
from __future__ import annotations

import sys
from pathlib import Path


class HeadlessError(Exception):
    """A problem with the request (panel, checkpoint, input, step, file); the message says which."""


def screenshot(args) -> int:
    from explorer.launch import fail
    try:
        return _screenshot(args)
    except HeadlessError as exc:
        return fail(str(exc))
    except Exception as exc:  # noqa: BLE001 - a figure run must end with a message, not a traceback
        return fail(f"unexpected {type(exc).__name__}: {exc}")


def _screenshot(args) -> int:
    from explorer.launch import check_panel, parse_size
    try:
        check_panel(args.panel)
        width, height = parse_size(args.size)
    except ValueError as exc:
        raise HeadlessError(str(exc)) from None
    out = Path(args.screenshot)
    if out.suffix.lower() != ".png":
        raise HeadlessError(f"--screenshot must name a .png file, got {out}")
    if not out.parent.exists():
        raise HeadlessError(f"the folder {out.parent} does not exist")
    if args.train_seconds is not None and not 0 < args.train_seconds <= 3600:
        raise HeadlessError(f"--train-seconds must be between 0 and 3600, got {args.train_seconds:g}")
    if args.scene:  # a bad scene file is refused before any window is built
        from model.io.scenes import SceneError, load_tour
        try:
            load_tour(args.scene)
        except SceneError as exc:
            raise HeadlessError(str(exc)) from None

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
    heads = _check_request(bundle, args)
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
        for name in ("training", "leak", "induction"):
            if window.panels.built(name) is not None:  # (a panel never shown was never built)
                window.panels[name].shutdown()
        close_window(app, window)


def _check_request(bundle, args) -> dict:
    """--input (the first the model reads when not given), --target, --ablate (its heads returned)
    and --compare checked against the model, before a window is built for nothing."""
    from model.inference.bundle import InputError
    from model.interpret.interventions import InterventionError, parse_heads, validate_heads
    if args.input is None:
        args.input = first_readable_input(bundle)
    try:  # the same check the runner makes
        bundle.encode_source(bundle.chat_input(args.input, not args.no_chat))
        if args.target and args.target.strip():
            bundle.encode_target(args.target)
    except InputError as exc:
        raise HeadlessError(f"bad input: {exc}") from None
    try:
        heads = validate_heads(bundle.model, parse_heads(args.ablate)) if args.ablate else {}
    except InterventionError as exc:
        raise HeadlessError(f"--ablate: {exc}") from None
    _check_compare(bundle, args.compare)
    return heads


def _check_compare(bundle, reference: str | None) -> None:
    """--compare: a checkpoint B that loads and has A's architecture, before a window is built."""
    from model.io.checkpoints import UNTRAINED
    if not reference or reference == UNTRAINED:  # (A's own architecture: comparable by construction)
        return
    from explorer.panels.compare.worker import ModelCache
    from explorer.runner import load_bundle
    from model.interpret.comparison import ComparisonError, check_comparable
    try:
        check_comparable(bundle, load_bundle(ModelCache.resolve(reference)))
    except ComparisonError as exc:
        raise HeadlessError(str(exc)) from None
    except (ValueError, OSError) as exc:
        raise HeadlessError(f"cannot load --compare {reference}: {exc}") from None


def first_readable_input(bundle) -> str:
    """Without --input: the default sentence if the model reads it, else its first example it does."""
    from explorer.launch import DEFAULT_INPUT
    from model.inference.bundle import InputError
    for text in (DEFAULT_INPUT, *bundle.examples):
        try:
            bundle.encode_source(text)
        except InputError:
            continue
        return text
    return DEFAULT_INPUT


def _render(app, window, bundle, args, out) -> int:
    from explorer.export import ExportError, export_panel
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
    waiting = getattr(window.panels.get(args.panel), "wait_until_drawn", None)
    if waiting is not None:  # a panel with work of its own (compare, attribution) finishes it first
        waiting()
    if args.train_seconds:  # the front panel's own training (the leak lab), else the Training panel's
        trainer = window.panels.get(args.panel)
        trained = (trainer if hasattr(trainer, "train_for") else window.panels["training"]).train_for(args.train_seconds)
        print(f"trained {trained} steps in {'at most ' if args.panel in ('leak', 'induction') else ''}{args.train_seconds:g} s")
    for _ in range(2):  # layout, then pyqtgraph's deferred axis/label updates (the export settles the rest)
        app.processEvents()
    try:
        export_panel(window, out, fmt="png")
    except ExportError as exc:
        raise HeadlessError(str(exc)) from None
    frame = state.frame
    shown = f", model {frame.model_label}, output {frame.output_text!r}" if frame is not None else ""
    print(f"wrote {out} ({window.width()}×{window.height()}, panel {args.panel}{shown})")
    return 0
