"""Reference implementations kept verbatim for cross-checks and benchmarks (unused by the library).

Algorithm 1 of Zamanlooy, Diaz and Asoodeh (AISTATS 2025), "Locally private sampling with public
data", as the paper writes it: one recursion level per item, a fresh dense matrix at every level,
O(n^3) time. The test suite checks :func:`ldpsample.minimax.minimax_kernel` (closed form) and
:func:`ldpsample.minimax.apply_minimax` against it, and ``benchmarks/`` times the closed form
against it. It lives in the library, not in ``tests/`` or ``benchmarks/``, because both of those
import it and neither may import the other; nothing in the library imports this module.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from ldpsample._types import FloatArray

__all__ = ["base_case", "recursion_kernel", "recursion_sorted"]


def base_case(alpha: float, epsilon: float) -> FloatArray:
    """Algorithm 1, n = 2 (Proposition 1): ``alpha`` is the smaller prior mass."""
    e = math.exp(epsilon)
    scale = 1.0 / (e * alpha + 1.0 - alpha)
    return scale * np.array(
        [[e * alpha, 1.0 - alpha], [alpha, (e - 1.0) * alpha + 1.0 - alpha]], dtype=float
    )


def recursion_sorted(q: FloatArray, epsilon: float) -> FloatArray:
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


def recursion_kernel(q: FloatArray, epsilon: float) -> FloatArray:
    """Algorithm 1 for ``q`` in any order: sort (stable), recurse, un-permute rows and columns.

    Raises the interpreter's recursion limit for the call (one level per item).
    """
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
