"""Theme as data: one `Palette` per theme, every colour the explorer draws with, by role (no other
module holds a colour literal), Qt's `QPalette` and the stylesheet generated from it. Items that keep
colours listen to `notifier().changed` and recolour in place."""
from __future__ import annotations

from functools import cache

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QColor, QPalette

from model.io.assets import asset_path

SEQUENTIAL = "viridis"  # probabilities, weights, non-negative activations: one map in every theme
DIVERGING = "CET-D1A"  # blue–white–red: signed values, white is exactly zero
DIVERGING_DARK = "CET-D4"  # blue–black–red: the same on a dark canvas, where a white zero would glare

# Series colours, mid-bright so they read on a white and on a near-black canvas alike.
_SERIES_LIGHT = ("#0969da", "#e4572e", "#1a7f37", "#8250df", "#bf8700", "#cf222e", "#1b7c83", "#6e7781")
_SERIES_DARK = ("#58a6ff", "#ff7b54", "#3fb950", "#bc8cff", "#d29922", "#ff7b72", "#39c5cf", "#8b949e")


# Every single-colour role: (light, dark), side by side so a role is never missing from a theme.
ROLES = {
    # text and surfaces
    "text": ("#1f2328", "#f0f3f6"),
    "muted": ("#57606a", "#b0b8c1"),  # secondary text, axis lines
    "disabled_text": ("#656d76", "#959da7"),  # inactive controls: ≥ 4.5:1 (read from the back row), fainter than text
    "window": ("#f6f8fa", "#1b1d21"),  # the application background
    "base": ("#ffffff", "#0d1117"),  # inputs, tables, text fields
    "canvas": ("#ffffff", "#0d1117"),  # plot and diagram backgrounds
    "panel": ("#e7ebf0", "#2d333b"),  # dock titles
    "button": ("#eef1f4", "#2d333b"),
    "grid": ("#d0d7de", "#30363d"),
    "accent": ("#0969da", "#58a6ff"),  # the current selection (highlighted block, current step)
    "accent_text": ("#0751a8", "#79c0ff"),  # accent-coloured text (formula, highlighted arrow labels)
    "on_accent": ("#ffffff", "#0d1117"),  # text on a selection highlight
    "error": ("#cf222e", "#ff7b72"),
    "success": ("#1a7f37", "#3fb950"),
    "warning": ("#9a6700", "#d29922"),
    # the architecture diagram (Figure 1)
    "line": ("#30363d", "#9ea7b3"),  # block outlines, the ⊕ and ∿ symbols
    "arrow": ("#30363d", "#9ea7b3"),
    "stack_edge": ("#8c959f", "#6e7681"),
    "block_text": ("#1f2328", "#f0f3f6"),
    "block_shape_text": ("#24292f", "#d0d7de"),
    "hover_fill": ("#eef6ff", "#1f2a37"),
    # masks and heatmaps
    "masked": ("#9aa0a6", "#484f58"),
    "mask_hatch": ("#4a4f55", "#c9d1d9"),
    "mask_allowed": ("#50c878", "#50c878"),
    "mask_legend_text": ("#1f2328", "#f0f3f6"),
    "on_bright_cell": ("#000000", "#000000"),  # a number on a bright colormap cell (the map is theme-independent)
    "on_dark_cell": ("#ffffff", "#ffffff"),
    "selected": ("#e4572e", "#ff7b54"),  # outline of the selected head; not a viridis colour
    "map_edge": ("#8c959f", "#6e7681"),  # a heatmap's thin outline: viridis' ends (dark purple, yellow) meet the canvas
    # tokens and decoding
    "prompt": ("#8250df", "#bc8cff"),
    "prompt_fill": ("#eadcff", "#3c2a66"),
    "prompt_text": ("#5d399f", "#d2a8ff"),
    "bar": ("#8fb8e8", "#3b6ea8"),
    "bar_edge": ("#6683a6", "#79a6dc"),
    "attribution_negative": ("#e39a93", "#a8424b"),  # a score that lowers the explained token's probability
    "chosen": ("#c2410c", "#f0883e"),  # the token the decoder emitted
    "chosen_text": ("#b24409", "#ffa657"),
    "on_chosen": ("#ffffff", "#0d1117"),
    "changed": ("#ffd8d3", "#5d1f1a"),  # a prediction the mask ablation changed
    "current_column": ("#dbe9fb", "#1c3a5e"),
    "mask_blank": ("#fff1e6", "#4a2a12"),  # the blank in a masked-LM sentence
    "beam_alive": ("#3b7dd8", "#58a6ff"),
    "beam_pruned": ("#c3c7cc", "#6e7681"),
    "beam_finished": ("#2da44e", "#3fb950"),
    "beam_best": ("#e8590c", "#f0883e"),
    # boxes: a readout, information / warning / error notes, token chips
    "readout_bg": ("#fff8c5", "#3d3000"),
    "readout_text": ("#1f2328", "#f0f3f6"),
    "info_bg": ("#ddf4ff", "#0c2d6b"),
    "info_text": ("#0a3069", "#cae8ff"),
    "warning_bg": ("#fff8c5", "#3d2e00"),
    "warning_text": ("#6b4e00", "#f2cc60"),
    "error_bg": ("#ffebe9", "#5d0f12"),
    "error_text": ("#82071e", "#ffdcd7"),
    "chip_bg": ("#eef0f3", "#2d333b"),
    "chip_text": ("#1f2328", "#f0f3f6"),
    "source_bg": ("#dbe9fb", "#1c3a5e"),
    "source_text": ("#0a3069", "#cae8ff"),
    "token_a": ("#cfe1fa", "#1f4470"),  # the input bar's token echo: tokens in turn on these two tints (no spaces between)
    "token_b": ("#fbd9b8", "#5a3a16"),
    "token_unknown": ("#b3261e", "#ffa198"),  # a token the model reads as <unk>, on either tint
    # plotted series
    "loss": ("#0969da", "#58a6ff"),
    "accuracy": ("#0969da", "#58a6ff"),
    "exact": ("#bc4c00", "#f0883e"),
    "lr": ("#8250df", "#bc8cff"),
    "speed": ("#bc4c00", "#f0883e"),
    "pe_pos": ("#b0b7bf", "#6e7681"),
    "pe_target": ("#0969da", "#58a6ff"),
    "pe_rotated": ("#e4572e", "#ff7b54"),
}
# the paper's Figure 1 colours (light: slightly deepened so they survive a washed-out projector)
BLOCKS = {
    "embedding": ("#f4c7c3", "#5c2b29"),
    "positional": ("#ffffff", "#0d1117"),
    "attention": ("#fbd38d", "#6b4a12"),
    "norm": ("#f2ee9b", "#57531a"),
    "ffn": ("#a9d8f0", "#1d4e6b"),
    "linear": ("#c9c3ef", "#40386e"),
    "softmax": ("#b7e4b5", "#245229"),
    "stack": ("#eef0f3", "#161b22"),
    "add": ("#ffffff", "#0d1117"),
}
# the head atlas: one fill per head type (text on it is `text`), the keys of model.interpret.head_scores.KINDS
HEAD_KINDS = {
    "previous-token": ("#a9d8f0", "#1d4e6b"),
    "duplicate-token": ("#d8c8f5", "#4a3f80"),
    "induction": ("#f9b872", "#8a4b08"),
    "first-token": ("#d0d7de", "#444c56"),
    "self": ("#b7e4b5", "#245229"),
    "mixed": ("#ffffff", "#0d1117"),
}


class Palette:
    """Every colour of one theme, by role, as hex strings: `p.text`, `p.blocks["attention"]`, `p.series[i]`."""

    def __init__(self, name: str, index: int, series: tuple[str, ...]):
        self.name, self.series = name, series
        for role, pair in ROLES.items():
            setattr(self, role, pair[index])
        self.blocks = {role: pair[index] for role, pair in BLOCKS.items()}
        self.head_kinds = {kind: pair[index] for kind, pair in HEAD_KINDS.items()}

    def roles(self) -> dict[str, str]:
        """Role → colour (for `str.format_map` in stylesheets)."""
        return {"name": self.name, **{role: getattr(self, role) for role in ROLES}}

    def q(self, role: str) -> QColor:
        return QColor(getattr(self, role))


LIGHT = Palette("light", 0, _SERIES_LIGHT)
DARK = Palette("dark", 1, _SERIES_DARK)

PALETTES: dict[str, Palette] = {"light": LIGHT, "dark": DARK}

_current = LIGHT


class _Notifier(QObject):
    changed = Signal(str)  # the new theme's name


@cache
def notifier() -> _Notifier:
    """The object whose `changed` signal fires after every theme switch."""
    return _Notifier()


def current() -> Palette:
    return _current


def set_current(name: str) -> Palette:
    """Make `name` the current palette and tell every listener (when it changed)."""
    global _current
    if name not in PALETTES:
        raise ValueError(f"unknown theme {name!r}; themes: {', '.join(PALETTES)}")
    changed = _current.name != name
    _current = PALETTES[name]
    if changed:
        notifier().changed.emit(name)
    return _current


def diverging() -> str:
    """The current theme's diverging map: zero in the canvas' lightness, so only a signed value stands out."""
    return DIVERGING_DARK if _current.name == "dark" else DIVERGING


def colour(role: str) -> QColor:
    return QColor(getattr(_current, role))


def qpalette(p: Palette) -> QPalette:
    """Qt's palette for every widget, generated from `p` (disabled text included)."""
    pal = QPalette()
    for role, value in ((QPalette.Window, p.window), (QPalette.Base, p.base), (QPalette.AlternateBase, p.window),
                        (QPalette.Text, p.text), (QPalette.WindowText, p.text), (QPalette.ButtonText, p.text),
                        (QPalette.Button, p.button), (QPalette.ToolTipBase, p.base), (QPalette.ToolTipText, p.text),
                        (QPalette.PlaceholderText, p.muted), (QPalette.Highlight, p.accent),
                        (QPalette.HighlightedText, p.on_accent), (QPalette.Link, p.accent_text),
                        (QPalette.Mid, p.grid), (QPalette.Light, p.button), (QPalette.Midlight, p.button),
                        (QPalette.Dark, p.stack_edge), (QPalette.Shadow, p.window)):
        pal.setColor(role, QColor(value))
    for role in (QPalette.Text, QPalette.WindowText, QPalette.ButtonText):
        pal.setColor(QPalette.Disabled, role, QColor(p.disabled_text))
    return pal


def stylesheet(p: Palette, scale: float = 1.0) -> str:
    """The application's colour rules of `p` (its fonts: `style.font_sheet`); check boxes and checked
    tool buttons drawn from the palette (Fusion's are nearly invisible in the dark theme)."""
    box = round(16 * scale)
    return (f"QDockWidget::title {{ background: {p.panel}; color: {p.text}; padding: 5px; font-weight: bold; }}"
            f"QToolTip {{ color: {p.text}; background: {p.base}; }}"
            f"QCheckBox::indicator {{ width: {box}px; height: {box}px; border: 2px solid {p.muted}; "
            f"border-radius: 3px; background: {p.base}; }}"
            f"QCheckBox::indicator:hover {{ border-color: {p.accent}; }}"
            f"QCheckBox::indicator:checked {{ background: {p.accent}; border-color: {p.accent}; "
            f"image: url({asset_path('icons', f'check-{p.name}.svg').as_posix()}); }}"
            f"QCheckBox::indicator:disabled {{ border-color: {p.disabled_text}; background: {p.window}; }}"
            f"QCheckBox::indicator:checked:disabled {{ background: {p.disabled_text}; }}"
            f"QToolButton:checked {{ background: {p.accent}; color: {p.on_accent}; border: 1px solid {p.accent}; "
            f"border-radius: 3px; padding: 3px; }}")


# -- widgets whose own stylesheet uses roles ------------------------------------------------------
SHEET_PROPERTY = "themeSheet"  # dynamic Qt properties (not Python attributes: shiboken-safe)
TEXT_PROPERTY = "themeText"


def set_sheet(widget, template: str) -> None:
    """`widget.setStyleSheet(template)`, `{role}` fields filled from the palette (again by `refresh_sheets`)."""
    widget.setProperty(SHEET_PROPERTY, template)
    widget.setStyleSheet(template.format_map(_current.roles()))


def set_text(label, template: str) -> None:
    """`label.setText(template)`, `{role}` fields filled (rich text with coloured spans)."""
    label.setProperty(TEXT_PROPERTY, template)
    label.setText(template.format_map(_current.roles()))


def refresh_sheets(widgets) -> None:
    """Refill every role template of `widgets` from the current palette."""
    roles = _current.roles()
    for widget in widgets:
        template = widget.property(SHEET_PROPERTY)
        if template:
            sheet = template.format_map(roles)
            if widget.styleSheet() != sheet:
                widget.setStyleSheet(sheet)
        template = widget.property(TEXT_PROPERTY)
        if template:
            widget.setText(template.format_map(roles))
