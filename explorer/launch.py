"""What the window (explorer.app) and the headless figures (explorer.headless) share: the default
input, checks of --size and --panel, and an orderly close."""
from __future__ import annotations

DEFAULT_INPUT = "attention"


def parse_size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"--size must look like 1280x800, got {text!r}") from None
    if not (200 <= w <= 8000 and 200 <= h <= 8000):
        raise ValueError(f"--size {text}: width and height must be between 200 and 8000 pixels")
    return w, h


def panel_names() -> list[str]:
    from explorer.panels import panel_classes
    return [cls.panel_name for cls in panel_classes()]


# The panels' names, known without importing them (that imports torch and pyqtgraph): start-up
# checks --panel before anything heavy is loaded. tests/test_app.py keeps it equal to panel_names().
PANEL_NAMES = ("architecture", "step", "attention", "positional", "decoding", "sampling", "kvcache", "heads", "atlas",
               "lens", "attribution", "patching", "compare", "leak", "training", "induction", "modern")


def check_panel(name: str) -> None:
    if name not in PANEL_NAMES:
        raise ValueError(f"unknown panel {name!r}; valid panels: {', '.join(PANEL_NAMES)}")


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
