"""The positional panel's legends and list entries, without Qt: what each wave pair is called, its
wavelength, the key under the waves and under the shift plot (HTML, in the colours given)."""
from __future__ import annotations

import numpy as np

from model.interpret.positions import pair_columns, pair_dims, pair_wavelength

WAVES_KEY = "dots: the model's values · lines: the formula between positions · λ = 2π·10000^(2i/d)"
SEP = " &nbsp;&nbsp;&nbsp; "


def pair_entry(d_model: int, i: int, layout: str, learned: bool) -> str:
    """Pair i in the pairs list: its two dimensions, and for the sinusoids its wavelength."""
    a, b = pair_dims(d_model, i, layout)
    return f"{a}, {b}" if learned else f"{a}, {b}   λ = {pair_wavelength(d_model, i):.5g}"


def waves_legend(d_model: int, pairs: list[int], colours: list[str], layout: str, learned: bool,
                 compact: bool, muted: str) -> tuple[str, str]:
    """(legend, tooltip) of the chosen pairs drawn in `colours`: sin solid, cos dashed, each with
    its wavelength; `compact`: the key (what dots and lines are) in the tooltip, not the legend."""
    entries, tips = [], []
    for i, colour in zip(pairs, colours):
        sin_dim, cos_dim = pair_dims(d_model, i, layout)
        if learned:
            entries.append(f"<span style='color:{colour}; white-space:nowrap'>━━ dim {sin_dim} &nbsp;╍╍ dim {cos_dim}</span>")
            continue
        lam = f"{pair_wavelength(d_model, i):.5g}"  # one entry never breaks; "dim": "sin 0" reads as sin(0)
        entries.append(f"<span style='white-space:nowrap'><span style='color:{colour}'><b>━━ sin</b> dim {sin_dim} "
                       f"&nbsp;<b>╍╍ cos</b> dim {cos_dim}</span> λ = {lam}</span>")
        tips.append(f"dims {sin_dim}, {cos_dim}: λ = 2π·10000^({2 * i}/{d_model}) = {lam}")
    if learned:
        return "<b>Learned</b> dimensions: " + SEP.join(entries), ""
    key = "" if compact else f"<br><span style='color:{muted}'>{WAVES_KEY}</span>"
    return SEP.join(entries) + key, "\n".join(tips + ([WAVES_KEY] if compact else []))


def shift_key(colours: tuple[str, str, str], rotates: bool) -> str:
    """The shift plot's key: PE(pos), PE(pos + k) and, where a rotation exists, M_k · PE(pos)."""
    marks = ((colours[0], "━", "PE(pos)"), (colours[1], "━━", "PE(pos + k)"), (colours[2], "✕", "M_k · PE(pos)"))
    return " &nbsp; ".join(f"<span style='white-space:nowrap'><span style='color:{colour}'>{mark}</span> {name}</span>"
                           for colour, mark, name in marks[:3 if rotates else 2])


def grouped_columns(d_model: int, grouped: bool, layout: str) -> np.ndarray:
    """The table's columns in the order the map shows them: every sin dim, then every cos dim
    (`grouped`, for the paper's interleaved layout), else as stored."""
    return np.concatenate(pair_columns(d_model)) if grouped and layout != "halves" else np.arange(d_model)
