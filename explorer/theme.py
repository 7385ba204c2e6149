"""Theme as data: one `Palette` per theme, every colour the explorer draws with, by role.

No other module holds a colour literal: they ask for a role (`current().muted`,
`colour("chosen")`), so a new theme is complete by construction. Qt's `QPalette` and the
application stylesheet are generated from the palette; pyqtgraph colours come from it too.
The colour maps are the same in every theme (a map means the same thing in a lit and a dark
room), so they are module constants here, not palette fields.

Components read `current()` when they draw; those that keep colours on built items listen to
`notifier().changed` (emitted by `set_current`) and recolour in place.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QColor, QPalette

from model.io.assets import asset_path

SEQUENTIAL = "viridis"  # probabilities, weights, non-negative activations: one map in every theme
DIVERGING = "CET-D1A"  # blue–white–red: signed values, white is exactly zero

# Data colours that mean the same thing in both themes (series, bars, beams), chosen mid-bright
# so they read on a white and on a near-black canvas alike.
_SERIES_LIGHT = ("#0969da", "#e4572e", "#1a7f37", "#8250df", "#bf8700", "#cf222e", "#1b7c83", "#6e7781")
_SERIES_DARK = ("#58a6ff", "#ff7b54", "#3fb950", "#bc8cff", "#d29922", "#ff7b72", "#39c5cf", "#8b949e")


@dataclass(frozen=True)
class Palette:
    """Every colour of one theme, by role (hex strings: they go into stylesheets and HTML as-is)."""

    name: str
    # text and surfaces
    text: str
    muted: str  # secondary text, axis lines
    disabled_text: str  # inactive controls: ≥ 4.5:1 (read from the back row), fainter than text
    window: str  # the application background
    base: str  # inputs, tables, text fields
    canvas: str  # plot and diagram backgrounds
    panel: str  # dock titles
    button: str
    grid: str
    accent: str  # the current selection (highlighted block, current step)
    accent_text: str  # accent-coloured text (formula, highlighted arrow labels)
    on_accent: str  # text on a selection highlight
    error: str
    success: str
    warning: str
    # the architecture diagram (Figure 1)
    line: str  # block outlines, the ⊕ and ∿ symbols
    arrow: str
    stack_edge: str
    block_text: str
    block_shape_text: str
    hover_fill: str
    blocks: dict = field(hash=False, compare=False)
    # masks and heatmaps
    masked: str = "#000000"  # (defaults only to satisfy dataclass ordering: every palette sets every field)
    mask_hatch: str = "#000000"
    mask_allowed: str = "#000000"
    mask_legend_text: str = "#000000"
    on_bright_cell: str = "#000000"  # a number on a bright colormap cell (the map is theme-independent)
    on_dark_cell: str = "#ffffff"
    selected: str = "#000000"  # outline of the selected head; not a viridis colour
    map_edge: str = "#000000"  # a heatmap's thin outline: viridis' ends (dark purple, yellow) meet the canvas
    # tokens and decoding
    prompt: str = "#000000"
    prompt_fill: str = "#000000"
    prompt_text: str = "#000000"
    bar: str = "#000000"
    bar_edge: str = "#000000"
    attribution_negative: str = "#000000"  # a score that lowers the explained token's probability
    chosen: str = "#000000"  # the token the decoder emitted
    chosen_text: str = "#000000"
    on_chosen: str = "#000000"
    changed: str = "#000000"  # a prediction the mask ablation changed
    current_column: str = "#000000"
    mask_blank: str = "#000000"  # the blank in a masked-LM sentence
    beam_alive: str = "#000000"
    beam_pruned: str = "#000000"
    beam_finished: str = "#000000"
    beam_best: str = "#000000"
    # boxes: a readout, information / warning / error notes, token chips
    readout_bg: str = "#000000"
    readout_text: str = "#000000"
    info_bg: str = "#000000"
    info_text: str = "#000000"
    warning_bg: str = "#000000"
    warning_text: str = "#000000"
    error_bg: str = "#000000"
    error_text: str = "#000000"
    chip_bg: str = "#000000"
    chip_text: str = "#000000"
    source_bg: str = "#000000"
    source_text: str = "#000000"
    token_a: str = "#000000"  # the input bar's token echo: tokens in turn on these two tints (no spaces between)
    token_b: str = "#000000"
    token_unknown: str = "#000000"  # a token the model reads as <unk>, on either tint
    # plotted series
    series: tuple = ()
    loss: str = "#000000"
    accuracy: str = "#000000"
    exact: str = "#000000"
    lr: str = "#000000"
    speed: str = "#000000"
    pe_pos: str = "#000000"
    pe_target: str = "#000000"
    pe_rotated: str = "#000000"
    # the head atlas: one fill per head type (text on it is `text`), the same keys as
    # model.interpret.head_scores.KINDS
    head_kinds: dict = field(default_factory=dict, hash=False, compare=False)

    def roles(self) -> dict[str, str]:
        """Role → colour for every single-colour role (for `str.format_map` in stylesheets)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if isinstance(getattr(self, f.name), str)}

    def q(self, role: str) -> QColor:
        return QColor(getattr(self, role))


LIGHT = Palette(
    name="light", text="#1f2328", muted="#57606a", disabled_text="#656d76", window="#f6f8fa", base="#ffffff",
    canvas="#ffffff", panel="#e7ebf0", button="#eef1f4", grid="#d0d7de", accent="#0969da", accent_text="#0751a8",
    on_accent="#ffffff", error="#cf222e", success="#1a7f37", warning="#9a6700",
    line="#30363d", arrow="#30363d", stack_edge="#8c959f", block_text="#1f2328", block_shape_text="#24292f",
    hover_fill="#eef6ff",
    # the paper's Figure 1 colours, slightly deepened so they survive a washed-out projector
    blocks={"embedding": "#f4c7c3", "positional": "#ffffff", "attention": "#fbd38d", "norm": "#f2ee9b",
            "ffn": "#a9d8f0", "linear": "#c9c3ef", "softmax": "#b7e4b5", "stack": "#eef0f3", "add": "#ffffff"},
    masked="#9aa0a6", mask_hatch="#4a4f55", mask_allowed="#50c878", mask_legend_text="#1f2328",
    on_bright_cell="#000000", on_dark_cell="#ffffff", selected="#e4572e", map_edge="#8c959f",
    prompt="#8250df", prompt_fill="#eadcff", prompt_text="#5d399f", bar="#8fb8e8", bar_edge="#6683a6",
    attribution_negative="#e39a93", chosen="#c2410c", chosen_text="#b24409", on_chosen="#ffffff",
    changed="#ffd8d3", current_column="#dbe9fb",
    mask_blank="#fff1e6", beam_alive="#3b7dd8", beam_pruned="#c3c7cc", beam_finished="#2da44e", beam_best="#e8590c",
    readout_bg="#fff8c5", readout_text="#1f2328", info_bg="#ddf4ff", info_text="#0a3069",
    warning_bg="#fff8c5", warning_text="#6b4e00", error_bg="#ffebe9", error_text="#82071e",
    chip_bg="#eef0f3", chip_text="#1f2328", source_bg="#dbe9fb", source_text="#0a3069",
    token_a="#cfe1fa", token_b="#fbd9b8", token_unknown="#b3261e",
    series=_SERIES_LIGHT, loss="#0969da", accuracy="#0969da", exact="#bc4c00", lr="#8250df", speed="#bc4c00",
    pe_pos="#b0b7bf", pe_target="#0969da", pe_rotated="#e4572e",
    head_kinds={"previous-token": "#a9d8f0", "duplicate-token": "#d8c8f5", "induction": "#f9b872",
                "first-token": "#d0d7de", "self": "#b7e4b5", "mixed": "#ffffff"},
)

DARK = Palette(
    name="dark", text="#f0f3f6", muted="#b0b8c1", disabled_text="#959da7", window="#1b1d21", base="#0d1117",
    canvas="#0d1117", panel="#2d333b", button="#2d333b", grid="#30363d", accent="#58a6ff", accent_text="#79c0ff",
    on_accent="#0d1117", error="#ff7b72", success="#3fb950", warning="#d29922",
    line="#9ea7b3", arrow="#9ea7b3", stack_edge="#6e7681", block_text="#f0f3f6", block_shape_text="#d0d7de",
    hover_fill="#1f2a37",
    blocks={"embedding": "#5c2b29", "positional": "#0d1117", "attention": "#6b4a12", "norm": "#57531a",
            "ffn": "#1d4e6b", "linear": "#40386e", "softmax": "#245229", "stack": "#161b22", "add": "#0d1117"},
    masked="#484f58", mask_hatch="#c9d1d9", mask_allowed="#50c878", mask_legend_text="#f0f3f6",
    on_bright_cell="#000000", on_dark_cell="#ffffff", selected="#ff7b54", map_edge="#6e7681",
    prompt="#bc8cff", prompt_fill="#3c2a66", prompt_text="#d2a8ff", bar="#3b6ea8", bar_edge="#79a6dc",
    attribution_negative="#a8424b", chosen="#f0883e", chosen_text="#ffa657", on_chosen="#0d1117",
    changed="#5d1f1a", current_column="#1c3a5e",
    mask_blank="#4a2a12", beam_alive="#58a6ff", beam_pruned="#6e7681", beam_finished="#3fb950", beam_best="#f0883e",
    readout_bg="#3d3000", readout_text="#f0f3f6", info_bg="#0c2d6b", info_text="#cae8ff",
    warning_bg="#3d2e00", warning_text="#f2cc60", error_bg="#5d0f12", error_text="#ffdcd7",
    chip_bg="#2d333b", chip_text="#f0f3f6", source_bg="#1c3a5e", source_text="#cae8ff",
    token_a="#1f4470", token_b="#5a3a16", token_unknown="#ffa198",
    series=_SERIES_DARK, loss="#58a6ff", accuracy="#58a6ff", exact="#f0883e", lr="#bc8cff", speed="#f0883e",
    pe_pos="#6e7681", pe_target="#58a6ff", pe_rotated="#ff7b54",
    head_kinds={"previous-token": "#1d4e6b", "duplicate-token": "#4a3f80", "induction": "#8a4b08",
                "first-token": "#444c56", "self": "#245229", "mixed": "#0d1117"},
)

PALETTES: dict[str, Palette] = {"light": LIGHT, "dark": DARK}

_current = LIGHT


class _Notifier(QObject):
    changed = Signal(str)  # the new theme's name


_notifier: _Notifier | None = None


def notifier() -> _Notifier:
    """The object whose `changed` signal fires after every theme switch."""
    global _notifier
    if _notifier is None:
        _notifier = _Notifier()
    return _notifier


def current() -> Palette:
    return _current


def set_current(name: str) -> Palette:
    """Make `name` the current palette and tell every listener (no-op signal if unchanged)."""
    global _current
    if name not in PALETTES:
        raise ValueError(f"unknown theme {name!r}; themes: {', '.join(PALETTES)}")
    changed = _current.name != name
    _current = PALETTES[name]
    if changed:
        notifier().changed.emit(name)
    return _current


def colour(role: str) -> QColor:
    """A fresh QColor of `role` in the current palette."""
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


def tick_icon(p: Palette) -> str:
    """The check box tick drawn on the palette's accent (a bundled asset: it works from a wheel)."""
    return asset_path("icons", f"check-{p.name}.svg").as_posix()


def stylesheet(p: Palette, scale: float = 1.0, title_point_size: int = 14) -> str:
    """The application-wide stylesheet of `p` at a font scale.

    Check boxes and checked tool buttons are drawn from the palette: Fusion's own draw a dark
    theme's box in the window's grey on the window (nearly invisible from the back of a room)
    and a pressed "Presentation mode" like a released one."""
    box = round(16 * scale)
    return (f"QDockWidget::title {{ background: {p.panel}; color: {p.text}; padding: 5px; font-weight: bold; }}"
            f"QDockWidget {{ font-size: {round(title_point_size * scale)}pt; }}"
            f"QToolTip {{ font-size: {round(12 * scale)}pt; color: {p.text}; background: {p.base}; }}"
            f"QCheckBox::indicator {{ width: {box}px; height: {box}px; border: 2px solid {p.muted}; "
            f"border-radius: 3px; background: {p.base}; }}"
            f"QCheckBox::indicator:hover {{ border-color: {p.accent}; }}"
            f"QCheckBox::indicator:checked {{ background: {p.accent}; border-color: {p.accent}; "
            f"image: url({tick_icon(p)}); }}"
            f"QCheckBox::indicator:disabled {{ border-color: {p.disabled_text}; background: {p.window}; }}"
            f"QCheckBox::indicator:checked:disabled {{ background: {p.disabled_text}; }}"
            f"QToolButton:checked {{ background: {p.accent}; color: {p.on_accent}; border: 1px solid {p.accent}; "
            f"border-radius: 3px; padding: 3px; }}")


# -- widgets whose own stylesheet uses roles ------------------------------------------------------
SHEET_PROPERTY = "themeSheet"  # dynamic Qt properties (not Python attributes: shiboken-safe)
TEXT_PROPERTY = "themeText"


def set_sheet(widget, template: str) -> None:
    """`widget.setStyleSheet(template)` with `{role}` fields filled from the current palette; the
    template is kept so `refresh_sheets` refills it after a theme switch."""
    widget.setProperty(SHEET_PROPERTY, template)
    widget.setStyleSheet(template.format_map(_current.roles()))


def set_text(label, template: str) -> None:
    """`label.setText(template)` with `{role}` fields filled (rich text with coloured spans)."""
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
