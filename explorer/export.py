"""Pictures for slides: any panel as PNG or SVG (File → Export panel…, `ExportDialog`) laid out
at the size asked for, not upscaled; the forward-pass stepper as PNG frames (a GIF with Pillow)."""
from __future__ import annotations

import contextlib
import importlib.util
import xml.etree.ElementTree as ET
from pathlib import Path

from PySide6.QtCore import QPoint, QRect, QSize
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QLabel,
    QLineEdit,
    QWidget,
)

from explorer.panels.knobs import Knob, make_knobs
from explorer.panels.layouts import row

FORMATS = ("png", "svg")
MIN_SIDE, MAX_SIDE = 100, 8000
FRAME_MS = 700  # how long the GIF shows each step


class ExportError(Exception):
    """An export that could not be written; the message names the file and the reason."""


def _settle(rounds: int = 4) -> None:
    for _ in range(rounds):  # layout, pyqtgraph's deferred updates, paint
        QApplication.processEvents()


@contextlib.contextmanager
def laid_out_at(widget: QWidget, size: QSize | None):
    """Temporarily give `widget` the size asked for (its layout reflows), then put it back."""
    if size is not None and not (MIN_SIDE <= size.width() <= MAX_SIDE and MIN_SIDE <= size.height() <= MAX_SIDE):
        raise ExportError(f"size {size.width()}×{size.height()}: width and height must be between {MIN_SIDE} and "
                          f"{MAX_SIDE} pixels")
    _settle(2)  # pending layout first (e.g. the dock just raised), so it cannot undo the size
    if size is None or size == widget.size():
        yield widget.size()
        return
    old, least, most = widget.size(), widget.minimumSize(), widget.maximumSize()
    widget.setFixedSize(size)  # fixed: a scroll area fitting its panel cannot resize it meanwhile
    _settle()
    try:
        yield widget.size()
    finally:
        widget.setMinimumSize(least)
        widget.setMaximumSize(most)
        widget.resize(old)
        _settle(1)


def _paint(widget: QWidget, device) -> None:
    """The widget as it is laid out now, on its own background, onto `device` (an image or SVG)."""
    painter = QPainter()
    if not painter.begin(device):
        raise ExportError("could not start drawing the picture")
    painter.setRenderHint(QPainter.Antialiasing)
    painter.fillRect(QRect(QPoint(), widget.size()), widget.palette().color(widget.backgroundRole()))
    widget.render(painter, QPoint())
    painter.end()


def _picture(widget: QWidget) -> QImage:
    image = QImage(widget.size(), QImage.Format_ARGB32)
    _paint(widget, image)
    return image


def _export_svg(widget: QWidget, path: Path) -> None:
    """Vector output through Qt's SVG generator (text stays text, lines stay lines)."""
    from PySide6.QtSvg import QSvgGenerator

    gen = QSvgGenerator()
    gen.setFileName(str(path))
    gen.setSize(widget.size())
    gen.setViewBox(QRect(QPoint(), widget.size()))
    gen.setTitle(widget.windowTitle() or "Transformer Explorer")
    gen.setDescription("Exported from Transformer Explorer")
    _paint(widget, gen)


def check_svg(path: str | Path, min_elements: int = 10) -> int:
    """Parse the SVG; raise ExportError unless it is well-formed XML with real content."""
    try:
        root = ET.parse(str(path)).getroot()
    except (ET.ParseError, OSError) as exc:
        raise ExportError(f"{path} is not a valid SVG file: {exc}") from None
    n = sum(1 for _ in root.iter())
    if not root.tag.endswith("svg") or n < min_elements:
        raise ExportError(f"{path}: the SVG is (nearly) empty ({n} elements)")
    return n


def export_panel(widget: QWidget, path: str | Path, size=None, fmt: str | None = None) -> Path:
    """PNG or SVG, by `fmt` or the file's suffix."""
    path = Path(path)
    fmt = (fmt or path.suffix.lstrip(".")).lower()
    if fmt not in FORMATS:
        raise ExportError(f"{path}: choose a .png or .svg file (got {fmt or 'no suffix'!r})")
    if path.suffix.lower() != f".{fmt}":
        path = path.with_suffix(f".{fmt}")
    if not path.parent.is_dir():
        raise ExportError(f"the folder {path.parent} does not exist")
    with laid_out_at(widget, size):
        if fmt == "svg":
            _export_svg(widget, path)
        elif not _picture(widget).save(str(path), "PNG"):
            raise ExportError(f"could not write {path}")
    if fmt == "svg":
        check_svg(path)
    return path


# -- the forward pass as an animation -----------------------------------------------------------------
def pillow_available() -> bool:
    return importlib.util.find_spec("PIL") is not None


def export_steps(state, widget: QWidget, folder: str | Path, size=None, gif: bool = True,
                 last: int | None = None) -> dict:
    """Grab `widget` (the stepper panel) at each recorded step into frame_000.png … and, with
    Pillow and `gif`, steps.gif; the selected step is restored. {"frames": [paths], "gif": path or None}."""
    folder = Path(folder)
    n = state.n_steps()
    if n == 0:
        raise ExportError("nothing to export: run the model first")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ExportError(f"cannot create {folder}: {exc.strerror or exc}") from None
    last = n - 1 if last is None else min(last, n - 1)
    keep = state.step
    frames: list[Path] = []
    images: list[QImage] = []
    with laid_out_at(widget, size):
        try:
            for i in range(last + 1):
                state.select_step(i)
                _settle(2)
                image = _picture(widget)
                path = folder / f"frame_{len(frames):03d}.png"
                if not image.save(str(path), "PNG"):
                    raise ExportError(f"could not write {path}")
                frames.append(path)
                images.append(image)
        finally:
            state.select_step(keep)
    gif_path = _write_gif(images, folder / "steps.gif") if gif and pillow_available() else None
    return {"frames": frames, "gif": gif_path}


def _write_gif(images: list[QImage], path: Path) -> Path:
    from PIL import Image  # optional: only when installed

    frames = []
    for image in images:
        rgba = image.convertToFormat(QImage.Format_RGBA8888)
        frames.append(Image.frombuffer("RGBA", (rgba.width(), rgba.height()), bytes(rgba.constBits()),
                                       "raw", "RGBA", rgba.bytesPerLine(), 1).convert("RGB"))
    frames[0].save(path, save_all=True, append_images=frames[1:], duration=FRAME_MS, loop=0)
    return path


class ExportDialog(QDialog):
    """File → Export panel…: which dock, what size, which format, where."""

    def __init__(self, window, parent=None):
        super().__init__(parent or window)
        self.setWindowTitle("Export a panel")
        sides = (MIN_SIDE, MAX_SIDE, 1)
        make_knobs(self, (Knob("panel", "choice", options=tuple((d.full_title, n) for n, d in window.docks.items())),
                          Knob("width_box", "spin", " px", options=(*sides, 1920)),
                          Knob("height_box", "spin", " px", options=(*sides, 1080)),
                          Knob("format", "choice", on="_suffix", options=(("PNG (bitmap)", "png"), ("SVG (vector)", "svg"))),
                          Knob("browse", "button", "Browse…", on="_browse")))
        self.path = QLineEdit(str(Path.home() / "panel.png"))
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel, accepted=self.accept,
                                   rejected=self.reject)
        form = QFormLayout(self)
        for label, field in (("Panel", self.panel), ("Size", row(self.width_box, QLabel("×"), self.height_box)),
                             ("Format", self.format), ("File", row((self.path, 1), self.browse))):
            form.addRow(label, field)
        form.addRow(buttons)

    def choice(self) -> tuple[str, Path, QSize, str]:
        return (self.panel.currentData(), Path(self.path.text()),
                QSize(self.width_box.value(), self.height_box.value()), self.format.currentData())

    def _suffix(self) -> None:
        self.path.setText(str(Path(self.path.text()).with_suffix("." + self.format.currentData())))

    def _browse(self) -> None:
        fmt = self.format.currentData()
        path, _ = QFileDialog.getSaveFileName(self, "Export to", self.path.text(), f"{fmt.upper()} (*.{fmt})")
        if path:
            self.path.setText(path)
