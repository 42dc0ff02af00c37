"""Test-only references: the paper's recursion, verbatim, and random priors for property tests.

Algorithm 1 of Zamanlooy, Diaz and Asoodeh (AISTATS 2025), "Locally private sampling with public
data". It is deliberately naive: one recursion level per item, a fresh dense matrix at every
level, O(n^3) time. It exists to cross-check :func:`ldpsample.minimax.minimax_kernel` (closed form)
and for the benchmark in ``benchmarks/bench_minimax.py``; never import it from the library.
"""

from __future__ import annotations

import math
import sys

import numpy as np
from hypothesis import strategies as st
from numpy.typing import NDArray


def base_case(alpha: float, epsilon: float) -> NDArray[np.float64]:
    """Algorithm 1, n = 2 (Proposition 1): ``alpha`` is the smaller prior mass."""
    e = math.exp(epsilon)
    scale = 1.0 / (e * alpha + 1.0 - alpha)
    return scale * np.array(
        [[e * alpha, 1.0 - alpha], [alpha, (e - 1.0) * alpha + 1.0 - alpha]], dtype=float
    )


def recursion_sorted(q: NDArray[np.float64], epsilon: float) -> NDArray[np.float64]:
    """Algorithm 1 for a prior ``q`` sorted in ascending order."""
    n = q.shape[0]
    if n == 1:
        return np.ones((1, 1))
    if n == 2:
        return base_case(float(q[0]), epsilon)
    e = math.exp(epsilon)
    q1 = float(q[0])
    d = e * q1 + 1.0 - q1
    rest = q[1:]
    q_bar = rest / rest.sum()
    sub = recursion_sorted(q_bar, epsilon)
    K = np.empty((n, n))
    K[0, 0] = e * q1 / d
    K[1:, 0] = q1 / d
    K[0, 1:] = rest / d
    K[1:, 1:] = (1.0 - q1 / d) * sub
    return K


def oracle_kernel(q: NDArray[np.float64], epsilon: float) -> NDArray[np.float64]:
    """Algorithm 1 for ``q`` in any order: sort (stable), recurse, un-permute rows and columns."""
    q = np.asarray(q, dtype=float)
    order = np.argsort(q, kind="stable")
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, q.shape[0] + 1000))
    try:
        K_sorted = recursion_sorted(q[order], epsilon)
    finally:
        sys.setrecursionlimit(limit)
    inverse = np.argsort(order)
    return K_sorted[np.ix_(inverse, inverse)]


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
