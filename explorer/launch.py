"""What the window (explorer.app) and the headless figures (explorer.headless) share: the default
input, checks of --size and --panel, the flags applied to a window, and an orderly close."""
from __future__ import annotations

import sys

DEFAULT_INPUT = "attention"


def parse_size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"--size must look like 1280x800, got {text!r}") from None
    if not (200 <= w <= 8000 and 200 <= h <= 8000):
        raise ValueError(f"--size {text}: width and height must be between 200 and 8000 pixels")
    return w, h


# The panels' names, known without importing them (that imports torch and pyqtgraph): start-up
# checks --panel before anything heavy is loaded. tests/test_startup.py keeps it equal to the panels'.
PANEL_NAMES = ("architecture", "step", "attention", "positional", "decoding", "sampling", "kvcache", "heads", "atlas",
               "lens", "attribution", "patching", "compare", "leak", "training", "induction", "modern")


def check_panel(name: str) -> None:
    if name not in PANEL_NAMES:
        raise ValueError(f"unknown panel {name!r}; valid panels: {', '.join(PANEL_NAMES)}")


def fail(message: str) -> int:
    """A refused request: one line on stderr, exit status 2."""
    print(f"transformer-explorer: error: {message}", file=sys.stderr)
    return 2


def open_window(app, args, heads: dict, synchronous: bool = False, **window_options):
    """The application styled, a session with --ablate (as `heads`), --no-chat and --compare, its
    runner and the main window over it: (state, runner, window), nothing run or shown yet."""
    from explorer import style
    from explorer.main_window import MainWindow
    from explorer.runner import Runner
    from explorer.state import SessionState

    style.apply_app_style(app)
    state = SessionState()
    runner = Runner(state, synchronous=synchronous)
    window = MainWindow(state, runner, **window_options)
    state.session.set_interventions(heads)  # (heads the model lacks are dropped when it loads)
    state.session.set_chat(not args.no_chat)
    state.session.set_compare(args.compare)
    return state, runner, window


def show_with_flags(window, args, figure: bool = False) -> None:
    """Show the window with --theme, --panel and --presentation (presenting: the panel asked for,
    else Figure 1); a `figure` keeps its size and its theme is not saved."""
    if args.theme:
        window.lecture.set_theme(args.theme, save=not figure)
    size = window.size()
    window.show()
    if figure:  # (shown in two columns first: a narrow figure gets its one column, then its size back)
        window.resize(size)
    asked = args.panel if args.panel_given else None
    if asked is not None or figure:  # (a figure's docks shared at its size)
        window.focus_panel(args.panel)
    if args.presentation:
        window.lecture.presentation.enter(not figure, asked)


def apply_run_flags(window, args) -> str | None:
    """--scene and --step, once the first model has run; what is wrong with --step, or None."""
    if args.scene:
        window.lecture.deck.open(args.scene)
    state = window.state
    if not args.step or state.select_step_named(args.step):
        return None
    names = state.trace.names() if state.trace is not None else []
    hint = ", ".join(n for n in names if args.step.split(".")[0] in n)[:300] or ", ".join(names[:8])
    return f"no step named {args.step!r} in the trace; e.g. {hint}"


WORKERS_EXIT_WAIT_MS = 5000  # the longest a closing window waits for its panels' workers


def close_window(app, window) -> None:
    """Destroy the window's C++ side now, while the QApplication exists: left for interpreter
    shutdown it can crash the process at exit; this also lets run_app run again in a process."""
    import shiboken6
    from PySide6.QtCore import QEvent, QThreadPool

    window.close()
    # Workers still computing for a panel would emit into the deleted window: let them finish first.
    QThreadPool.globalInstance().waitForDone(WORKERS_EXIT_WAIT_MS)
    if shiboken6.isValid(window):
        shiboken6.delete(window)
    app.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    app.processEvents()
