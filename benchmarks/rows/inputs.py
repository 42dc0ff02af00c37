"""The deterministic inputs the library rows share: ε, users' distributions and priors drawn
from fixed seeds (so every process of a row, and every run, sees the same arrays).

Imports numpy only.
"""

from __future__ import annotations

import numpy as np

EPSILON = 1.0


def random_users(count: int, n: int, seed: int, alpha: float | None = None) -> np.ndarray:
    """``count`` distributions over ``n`` items: uniform weights normalised, or
    Dirichlet(``alpha``) draws."""
    rng = np.random.default_rng(seed)
    if alpha is not None:
        return rng.dirichlet(np.full(n, alpha), size=count)
    P = rng.random((count, n))
    P /= P.sum(axis=1, keepdims=True)
    return P


def random_prior(n: int, seed: int) -> np.ndarray:
    """A Dirichlet(1) prior over ``n`` items, unsorted."""
    return np.random.default_rng(seed).dirichlet(np.ones(n))  # unsorted
