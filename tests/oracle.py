"""Test helpers: the paper's recursion (from :mod:`ldpsample.reference`) and random priors.

The recursion itself, Algorithm 1 verbatim, lives in :mod:`ldpsample.reference` so that the
tests and ``benchmarks/`` share one copy; ``oracle_kernel`` is its name in the tests.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from ldpsample.reference import base_case, recursion_sorted
from ldpsample.reference import recursion_kernel as oracle_kernel

__all__ = ["base_case", "epsilons", "oracle_kernel", "priors", "recursion_sorted"]

# --- Hypothesis strategies shared by the property tests -------------------------------------

epsilons = st.one_of(
    st.sampled_from([0.0, 1e-9, 20.0]),
    st.floats(0.0, 20.0, allow_nan=False, allow_infinity=False),
)


@st.composite
def priors(draw: st.DrawFn, *, min_n: int = 1, max_n: int = 25, zeros: bool = True) -> np.ndarray:
    """A distribution in any order, with ties (integer weights) and zeros (unless excluded)."""
    n = draw(st.integers(min_n, max_n))
    low = 0 if zeros else 1
    if draw(st.booleans()):
        weights = draw(st.lists(st.integers(low, 5), min_size=n, max_size=n))
    else:
        positive = st.floats(1e-6, 1.0, allow_nan=False)
        element = st.one_of(st.just(0.0), positive) if zeros else positive
        weights = draw(st.lists(element, min_size=n, max_size=n))
    q = np.asarray(weights, dtype=float)
    if q.sum() == 0:
        q[draw(st.integers(0, n - 1))] = 1.0
    q /= q.sum()
    if draw(st.booleans()):
        q = np.sort(q)
    return q
