"""What a decoding view draws and says about a `DecodeRun`, without widgets: one step's maps and
their titles, how its token was chosen, the causal mask's proof (row n_prompt + t of the parallel pass
equals step t, max |Δp|) and what removing the mask changes, the note on unknown symbols.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from model.interpret.decode_run import DecodeRun

EQUAL_ATOL = 1e-5  # float32 rounding between the sequential and the parallel pass stays far below
MAX_DP = "max\u00a0|\u2060Δp\u2060|"  # never broken inside (not "max |" ⏎ "Δp|")
HOW = {"greedy": "argmax", "sample": "sampled", "beam": "beam's best", "target": "target"}


def chosen_how(run: DecodeRun) -> str:
    """How each step's token was chosen, in a word or two."""
    if run.settings.strategy == "target" and run.n_prompt:
        return "given continuation"
    return HOW[run.settings.strategy]


def step_caption(run: DecodeRun, t: int, show=str) -> tuple[tuple[str, ...], str]:
    """The next-token bars' caption at step t (parts a narrow plot may put on lines of their own)
    and their tooltip: how the token was chosen, the token (as `show` writes it) and its probability."""
    step = run.steps[t]
    how, token, p = chosen_how(run), show(run.vocab[step.chosen]), float(step.model_probs[step.chosen])
    note = " (dashed: after T / top-k / top-p)" if run.settings.strategy == "sample" else ""
    return (how, f"{token!r},", f"p = {p:.2f}"), f"Next token at step {t + 1}: {how} {token!r}, p = {p:.3f}{note}"


def head_shown(run: DecodeRun, t: int, layer: int, head: int) -> tuple[int, int]:
    """(layer, head) clamped to the run's decoder (a head picked for a larger model)."""
    shape = run.steps[t].self_attention.shape
    return min(layer, shape[0] - 1), min(head, shape[1] - 1)


@dataclass(frozen=True)
class StepMaps:
    """What step t's maps draw for head (layer, head): its rows' labels in the run's final n × n
    frame (rows not decoded yet stay blank), this step's query row, the line after a prompt, the
    mask in force, the masked self-attention and cross-attention (None without an encoder), and
    each map's title (short, and long for its tooltip)."""

    rows: list[str]
    n: int
    query: int
    separator: int | None
    mask: np.ndarray
    self_attention: np.ndarray
    cross: np.ndarray | None
    titles: dict[str, tuple[str, str]]

    @classmethod
    def of(cls, run: DecodeRun, t: int, layer: int, head: int) -> StepMaps:
        step, n = run.steps[t], run.length
        layer, head = head_shown(run, t, layer, head)
        prefix = run.pieces(step.prefix)
        q, lay, hd = len(prefix), layer + 1, head + 1  # (counted from 1 on screen)
        titles = {"mask": (f"Mask {q}×{q}", f"The causal mask in force at step {t + 1}: {q}×{q}"),
                  "self": (f"Self L{lay} H{hd}", f"Masked self-attention, layer {lay}, head {hd}"),
                  "cross": (f"Cross L{lay} H{hd}", f"Cross-attention, layer {lay}, head {hd}")}
        cross = step.cross_attention[layer, head].numpy() if step.cross_attention is not None else None
        return cls(prefix + [""] * (n - q), n, q - 1, 1 + run.n_prompt if run.n_prompt else None, step.mask.numpy(),
                   step.self_attention[layer, head].numpy(), cross, titles)


def mask_equality(run: DecodeRun, t: int, causal: bool) -> tuple[str, bool]:
    """(sentence, equal): whether row n_prompt + t of the parallel pass (with the mask, or
    without it) computes what decoding step t computed, as max |Δp|."""
    row = run.row(t)
    diff = run.difference(t, causal) if causal or run.unmasked is not None else 0.0
    if causal:
        return f"Row {row} of the parallel pass = step {t + 1}: {MAX_DP} = {diff:.1e}", True
    shown = f"{diff:.2f}" if diff >= 0.01 else f"{diff:.1e}"
    same = diff < EQUAL_ATOL  # e.g. the last row of a one-layer model: it has no future
    return f"Without the mask, row {row} {'=' if same else '≠'} step {t + 1}: {MAX_DP} = {shown}", same


def changed_predictions(run: DecodeRun) -> list[bool]:
    """For each position, whether removing the mask changes its prediction ([] until computed)."""
    if run.unmasked is None:
        return []
    return [a != b for a, b in zip(run.masked.predicted, run.unmasked.predicted)]


def future_note(run: DecodeRun, t: int, layer: int, head: int, causal: bool) -> str:
    """The attention the pass puts on later tokens, and how many predictions removing the mask
    changes (while that pass is still being computed: that it is)."""
    row, step = run.row(t), t + 1
    mass = (run.masked if causal or run.unmasked is None else run.unmasked).future_mass(layer, head).numpy()
    masked = (f"With the mask no row attends a later token ({100 * mass.max():.0f}\u00a0% above the diagonal), "
              f"so row {row} computes exactly what the decoder computed at step {step}.")
    if run.unmasked is None:
        return f"{masked} Running the pass without the mask…"
    changed, n = sum(changed_predictions(run)), len(run.masked.predicted)
    if causal:
        return f"{masked} Without it, {changed} of {n} predictions would change (red)."
    return (f"Row {row} puts {100 * mass[row]:.0f}\u00a0% of its attention on later tokens (all rows: "
            f"{100 * mass.mean():.0f}\u00a0%) — tokens it cannot see while decoding, including the one it "
            f"must predict. {changed} of {n} predictions change (red).")


def table_marks(run: DecodeRun, t: int) -> list[list[str]]:
    """How each cell of the parallel table (rows input, with mask, no mask; a column per position)
    is marked at step t: "changed" (removing the mask changes this prediction), "current" (step t's
    row), "prompt" (an input token given in the prompt) or ""."""
    changes = changed_predictions(run) or [False] * len(run.masked.predicted)
    current = run.row(t) if run.steps else t
    return [["changed" if r == 2 and changed else "current" if c == current
             else "prompt" if r == 0 and 1 <= c <= run.n_prompt else "" for c, changed in enumerate(changes)]
            for r in range(3)]


def folded_prefix(n: int, n_prompt: int, keep_last: int | None) -> tuple[range, int]:
    """The positions of an n-token prefix folded into one mark when only <bos> and the newest
    `keep_last` tokens are shown, and how many of them are the prompt's (counted apart, so the mark
    never calls generated tokens part of the prompt)."""
    hidden = range(1, n - keep_last) if keep_last is not None and keep_last + 1 < n else range(0)
    return hidden, sum(1 <= i <= n_prompt for i in hidden)


def unknown_note(run: DecodeRun) -> str:
    """The symbols of the input the model read as <unk> (the first six), or ""."""
    if not run.unknown:
        return ""
    return f"Unknown symbols read as <unk>: {', '.join(repr(p) for _, p in run.unknown[:6])}."


__all__ = ["EQUAL_ATOL", "MAX_DP", "StepMaps", "changed_predictions", "chosen_how",
           "folded_prefix", "future_note", "head_shown", "mask_equality", "step_caption", "table_marks", "unknown_note"]
