"""Which text a run's model is shown on in other views, and which text comes back after it.

A run of another task may not read the session's text (a reverse model and an English
sentence): it is shown on the run's probe instead, and when the session's own model returns,
the text it had comes back (or, if the user typed one since that this model cannot read, one of
its examples), so no view is ever left empty.
"""
from __future__ import annotations

from model.inference.bundle import InputError


def readable(bundle, text: str) -> bool:
    """Whether `bundle` can read `text` (not empty, not too long, not only unknown symbols)."""
    try:
        bundle.encode_source(text)
    except InputError:
        return False
    return True


def stand_in(bundle, source: str, probe: str) -> str | None:
    """The text to show `bundle` on in place of `source`: None where it reads `source` (or there
    is none), else `probe` if it reads that, else None (nothing better to show)."""
    if not source or readable(bundle, source) or not probe or not readable(bundle, probe):
        return None
    return probe


def given_back(own, source: str, before: tuple[str, str, str] | None) -> tuple[str, str | None, bool] | None:
    """(source, target, said) to show the session's own model `own` on once a run's copy is put
    away, or None to keep `source`. `before` is (source, target, stand-in) from when a stand-in
    replaced the session's text; `said`: the text is one of `own`'s examples, worth a word."""
    if own is None:
        return None
    if before is not None and source == before[2] and readable(own, before[0]):
        return before[0], before[1], False
    if source and not readable(own, source):
        example = next((e for e in own.examples if readable(own, e)), None)
        return None if example is None else (example, None, True)
    return None


__all__ = ["given_back", "readable", "stand_in"]
