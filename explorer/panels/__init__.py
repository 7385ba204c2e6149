"""The explorer's panels: one package each (`panels/<name>/`), its panel class in
`panels/<name>/panel.py` and its own helpers beside it. Each panel module defines one
`QWidget` subclass with

    panel_name = "attention"        # used by `--panel NAME` and the dock's objectName
    title = "Attention maps"        # the dock's title
    def __init__(self, state: SessionState, parent=None)

and observes `SessionState` only (panels never call each other). The main window docks them
in the order of `PANEL_MODULES`.
"""
from __future__ import annotations

import importlib

PANEL_MODULES = ("architecture", "stepper", "attention", "positional", "decoding", "heads", "lens",
                 "attribution", "compare", "leak", "induction", "training")


def panel_classes() -> list[type]:
    """Every panel class, in docking order; a module not written yet is skipped, any other
    import error is raised (a broken panel must fail loudly, not vanish)."""
    classes = []
    for name in PANEL_MODULES:
        try:
            module = importlib.import_module(f"{__name__}.{name}.panel")
        except ModuleNotFoundError as exc:
            if exc.name in (f"{__name__}.{name}", f"{__name__}.{name}.panel"):
                continue
            raise
        classes.extend(obj for obj in vars(module).values()
                       if isinstance(obj, type) and getattr(obj, "panel_name", None) and obj.__module__ == module.__name__)
    return classes
