"""Fonts, colours and colormaps every panel shares, for a projector at the back of a room: one visual
language (a block's colour everywhere, one diverging map for signed tensors, one mask hatching)."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication, QSizePolicy
from superqt import QElidingLabel

from explorer import theme as _theme
from explorer.theme import DIVERGING, SEQUENTIAL, Palette, colour, current, set_sheet, set_text  # noqa: F401
from model.inference.prob_text import prob_text  # noqa: F401 - the panels' shared names
from model.nn.step_summary import format_shape, format_value  # noqa: F401

# pyqtgraph's default image order is column-major: a [query, key] map would show transposed.
pg.setConfigOptions(imageAxisOrder="row-major", antialias=True, background=_theme.current().canvas,
                   foreground=_theme.current().text)

BASE_POINT_SIZE = 12  # ≥ 11 pt everywhere: readable from the back of a lecture hall
SMALL_POINT_SIZE = 11
TITLE_POINT_SIZE = 14
MONO_FAMILY = "DejaVu Sans Mono"
SANS_FAMILY = "DejaVu Sans"

# `style.TEXT`, `style.ERROR` …: the current theme's colour of that role, each time.
_LEGACY = {"TEXT": "text", "MUTED": "muted", "ACCENT": "accent", "ERROR": "error", "OK": "success", "WARNING": "warning"}


def __getattr__(name: str):
    if name in _LEGACY:
        return colour(_LEGACY[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_scale = 1.0  # presenting enlarges everything by this factor (`font()` reads it; `presentation.set_scale`)


def scale() -> float:
    """The current font / line-width factor (1.0 normally, larger while presenting)."""
    return _scale


SCALES = (1.0, 3.0)  # the least and the largest scale: normal size, and 36 pt text


def set_scale(factor: float) -> float:
    """The scale in use: `factor`, within `SCALES`; returns it."""
    global _scale
    _scale = max(SCALES[0], min(float(factor), SCALES[1]))
    return _scale


def css_pt(point_size: float = SMALL_POINT_SIZE) -> str:
    """A rich-text size (a pyqtgraph title's "font-size") at the current scale (HTML sizes win over fonts)."""
    return f"{point_size * _scale:.1f}pt"


def font(point_size: int = BASE_POINT_SIZE, bold: bool = False, mono: bool = False) -> QFont:
    f = QFont(MONO_FAMILY if mono else SANS_FAMILY)
    f.setPointSizeF(point_size * _scale)
    f.setBold(bold)
    return f


# -- fonts by role: one table of role → size; presenting multiplies the base (`font_sheet`) ----------
FONT_ROLES = {  # role: (points at scale 1, bold, monospaced)
    "body": (BASE_POINT_SIZE, False, False), "small": (SMALL_POINT_SIZE, False, False),
    "label": (BASE_POINT_SIZE + 1, False, False), "heading": (BASE_POINT_SIZE, True, False),
    "title": (TITLE_POINT_SIZE, False, False), "caption": (TITLE_POINT_SIZE, True, False),
    "mono": (BASE_POINT_SIZE, False, True),
}
ROLE_PROPERTY = "fontRole"  # a dynamic Qt property (not a Python attribute: shiboken-safe)
CLASS_ROLES = {"QToolTip": "body", "QDockWidget": "title"}  # Qt's own widgets, by class


def role_font(role: str) -> QFont:
    """The font of a role (`FONT_ROLES`) at the current scale."""
    if role not in FONT_ROLES:
        raise ValueError(f"unknown font role {role!r}; roles: {', '.join(FONT_ROLES)}")
    size, bold, mono = FONT_ROLES[role]
    return font(size, bold=bold, mono=mono)


def set_font_role(widget, role: str):
    """`widget` in `role`'s font now and, through `font_sheet`, at every later scale; returns it."""
    widget.setFont(role_font(role))
    widget.setProperty(ROLE_PROPERTY, role)
    return widget


def font_sheet(scale: float) -> str:
    """Style-sheet rules sizing every role's widgets (and Qt's tooltips and dock titles) at `scale`.
    Presenting (scale > 1), a widget whose font was set by hand rather than by role is sized as body
    text, so nothing stays at the normal size on a projector."""
    def size(role: str) -> str:
        return f"font-size: {FONT_ROLES[role][0] * scale:.1f}pt;"

    sheet = f"QWidget {{ {size('body')} }}" if scale > 1.0 else ""
    sheet += "".join(f"{cls} {{ {size(role)} }}" for cls, role in CLASS_ROLES.items())
    return sheet + "".join(f'QWidget[{ROLE_PROPERTY}="{role}"] {{ {size(role)} font-weight: {"bold" if bold else "normal"}; '
                           f'font-family: "{MONO_FAMILY if mono else SANS_FAMILY}"; }}'
                           for role, (_points, bold, mono) in FONT_ROLES.items())


def app_sheet(scale: float) -> str:
    """The application's style sheet: the current theme's rules and the font roles at `scale`."""
    return _theme.stylesheet(current(), scale) + font_sheet(scale)


colormap = pg.colormap.get  # a colormap by name (`SEQUENTIAL`, `DIVERGING`, …)


def mask_colormap() -> pg.ColorMap:
    """Two colours for boolean masks: blocked (0) dark grey, allowed (1) bright green."""
    p = current()
    return pg.ColorMap(np.array([0.0, 1.0]), [p.q("mask_hatch").getRgb(), p.q("mask_allowed").getRgb()])


def apply_app_style(app: QApplication) -> None:
    """Big default font and the current theme's palette for the whole application."""
    app.setStyle("Fusion")
    app.setFont(role_font("body"))
    app.setPalette(_theme.qpalette(current()))
    app.setStyleSheet(app_sheet(_scale))


def still_plot(plot: pg.PlotItem) -> pg.PlotItem:
    """A plot shown as a fixed picture: no menu, no autoscale button, no mouse pan or zoom."""
    plot.setMenuEnabled(False)
    plot.hideButtons()
    plot.setMouseEnabled(x=False, y=False)
    return plot


def eliding_line(text: str = "", alignment: Qt.AlignmentFlag = Qt.AlignmentFlag.AlignLeft) -> QElidingLabel:
    """One line of plain text, "…" where its row is too narrow (never widening it); the tooltip whole."""
    label = QElidingLabel()
    label.setTextFormat(Qt.TextFormat.PlainText)  # a model's output "<b>…" is no markup
    label.setAlignment(alignment | Qt.AlignmentFlag.AlignVCenter)
    label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
    label.setText(text)
    label.setToolTip(text)
    return label
