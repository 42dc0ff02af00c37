"""Benchmark-owned references: the paper's recursion for the minimax kernel, verbatim.

Algorithm 1 of Zamanlooy, Diaz and Asoodeh (AISTATS 2025), "Locally private sampling with public
data": one recursion level per item, a fresh dense matrix at every level, O(n^3) time. The
benchmarks time :func:`ldpsample.minimax.minimax_kernel` (closed form) against it.
``tests/oracle.py`` keeps its own copy for the test suite; the benchmarks do not import from
``tests/``.

The published per-user ``brentq`` KL mollifier projection lives in ``bench_mollifier.brentq_kl``.
"""

from __future__ import annotations

import math
import sys

import numpy as np
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
