"""The explorer's panels, one package each (`panels/<name>/panel.py` holds its class, a QWidget
with `panel_name` for `--panel NAME`, a dock `title` and `__init__(state, parent=None)`); they
observe `SessionState` only and are docked in the order of `PANEL_MODULES`."""
from __future__ import annotations

import importlib

PANEL_MODULES = ("architecture", "stepper", "attention", "positional", "decoding", "sampling", "kvcache", "heads", "atlas",
                 "lens", "attribution", "patching", "compare", "leak", "training", "induction", "modern")


def panel_classes() -> list[type]:
    """Every panel class, in docking order (a broken panel fails loudly, it does not vanish)."""
    classes = []
    for name in PANEL_MODULES:
        module = importlib.import_module(f"{__name__}.{name}.panel")
        classes.extend(obj for obj in vars(module).values()
                       if isinstance(obj, type) and getattr(obj, "panel_name", None) and obj.__module__ == module.__name__)
    return classes
