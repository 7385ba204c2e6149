"""Where the bundled files are: the trained checkpoints, the lecture tour and the icons.

In the source tree they sit in the top-level `assets/` folder, beside `model/` and `explorer/`,
so data is kept apart from code. The wheel ships that folder as `model/assets/` (setup.py maps
the package `model.assets` onto `assets/`): nothing generic named `assets` is put at the top of
site-packages, and `model` stays importable without Qt (the icons are data, not code).

`asset_path` finds the folder in each way the project is used: an installed wheel or sdist
(`model/assets/`, read through importlib.resources), and a source checkout or an editable
install (`model/` is the source folder, so `assets/` is its sibling).
"""
from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def assets_root() -> Path:
    """The folder holding checkpoints/, scenes/ and icons/."""
    packaged = Path(str(files("model"))) / "assets"
    if packaged.is_dir():
        return packaged.resolve()
    return (Path(__file__).resolve().parents[2] / "assets").resolve()


def asset_path(*parts: str) -> Path:
    """A file or folder inside the bundled assets, e.g. `asset_path("scenes", "tour.json")`."""
    return assets_root().joinpath(*parts)
