"""How far the methods agree: Spearman rank correlations between their scores (scipy)."""
from __future__ import annotations

import numpy as np


def rank_correlations(scores: dict[str, np.ndarray]) -> tuple[list[str], np.ndarray]:
    """(method names, matrix ρ[i, j]) over the methods' scores on the same tokens.

    ρ is NaN where it is undefined: fewer than 2 tokens, or a method whose scores are all
    equal (nothing to rank), rather than a made-up number."""
    names = list(scores)
    n = len(names)
    rho = np.full((n, n), np.nan)
    for i in range(n):
        for j in range(n):
            x, y = np.asarray(scores[names[i]], float), np.asarray(scores[names[j]], float)
            if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
                continue
            rho[i, j] = 1.0 if i == j else _spearman(x, y)
    return names, rho


def top1(values: np.ndarray) -> int:
    """The token a method ranks first: the largest |score| (gradient scores are signed; a
    token that pushes the probability down also mattered)."""
    return int(np.argmax(np.abs(np.asarray(values, float))))


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    from scipy.stats import spearmanr  # imported on first use: scipy.stats takes a second to import
    return float(spearmanr(x, y).statistic)
