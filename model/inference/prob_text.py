"""A probability as a class reads it aloud over its bar."""
from __future__ import annotations


def prob_text(p: float) -> str:
    """One notation for every bar: "0.92", "0.004", "<0.0001"; a broken distribution says "NaN"."""
    if p != p:
        return "NaN"
    if p >= 0.005:
        return f"{p:.2f}"
    if p <= 0:
        return "0"
    return f"{p:.1g}" if p >= 0.0001 else "<0.0001"
