"""Audits of a kernel: its realized privacy, its worst-case utility and prior preservation.

These functions look only at the matrix ``K`` (``K[i, j] = P(output j | input i)``), so they
check any mechanism independently of how it was built.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ldpsample._types import FloatArray
from ldpsample._validation import (
    check_distribution,
    check_distributions,
    check_epsilon,
    check_integer,
)
from ldpsample.baselines import _rr_weights
from ldpsample.divergences import DivergenceLike, point_mass_divergence
from ldpsample.minimax import MinimaxKernel

__all__ = [
    "check_kernel",
    "minimax_realized_epsilon",
    "preserves_prior",
    "randomized_response_realized_epsilon",
    "realized_epsilon",
    "worst_case_divergence",
]


def _as_kernel(K: ArrayLike) -> FloatArray:
    """A row-stochastic 2-D matrix (rows sum to 1 within ``SUM_TOLERANCE``)."""
    arr = check_distributions(K, name="K")
    if arr.ndim != 2:
        raise ValueError(f"K must be a matrix of shape (n_inputs, n_outputs), got {arr.shape}")
    return arr


def _realized_epsilon(K: FloatArray) -> float:
    return _epsilon_of_columns(K.max(axis=0), K.min(axis=0))


def _epsilon_of_columns(column_max: FloatArray, column_min: FloatArray) -> float:
    """``max_j log(column_max_j / column_min_j)`` over the used columns (``column_max_j > 0``);
    ``inf`` when a used column has a zero entry. Shared by the dense and the O(n) audits."""
    used = column_max > 0  # all-zero columns are never released: they constrain nothing
    if not used.any():
        return 0.0
    if (column_min[used] == 0).any():
        return float("inf")
    return float(np.max(np.log(column_max[used]) - np.log(column_min[used])))


def realized_epsilon(K: ArrayLike) -> float:
    """The smallest ε for which ``K`` is ε-LDP: ``max_j log(max_i K[i, j] / min_i K[i, j])``.

    An all-zero column contributes 0 (that output is never released); a column with both a zero
    and a positive entry gives ``inf``.

    Parameters
    ----------
    K
        Row-stochastic matrix of shape ``(n_inputs, n_outputs)``.

    Returns
    -------
    float
    """
    return _realized_epsilon(_as_kernel(K))


def randomized_response_realized_epsilon(n: int, *, epsilon: float) -> float:
    """Realised ε of n-ary randomized response from its two entries, in O(1).

    Every column of :func:`ldpsample.randomized_response` holds the diagonal entry once and the
    off-diagonal entry ``n - 1`` times, the weights :func:`ldpsample.baselines.linear_minimax`
    applies: the dense audit's ``max_j log(max_i K_ij / min_i K_ij)`` is the same expression on
    these two numbers, so this returns exactly what :func:`realized_epsilon` of the dense kernel
    does (tests/test_audit.py), without an n x n matrix.
    """
    eps = check_epsilon(epsilon)
    size = check_integer(n, name="n", minimum=1)
    diagonal, off = _rr_weights(size, eps)
    if size == 1:
        return _epsilon_of_columns(np.array([diagonal]), np.array([diagonal]))
    high, low = max(diagonal, off), min(diagonal, off)
    return _epsilon_of_columns(np.array([high]), np.array([low]))


def _kernel_arrays(kernel: object) -> tuple[FloatArray, FloatArray, FloatArray]:
    """``(q_sorted, c, diagonal_sorted)`` of a :class:`MinimaxKernel`, checked: 1-D float
    arrays of one length ``n >= 1``, finite and non-negative."""
    if not isinstance(kernel, MinimaxKernel):
        raise TypeError(
            "kernel must be a MinimaxKernel (ldpsample.minimax_coefficients), got "
            f"{kernel!r:.200} of type {type(kernel).__name__}"
        )
    arrays = []
    for name in ("q_sorted", "c", "diagonal_sorted"):
        arr = np.asarray(getattr(kernel, name))
        if not np.issubdtype(arr.dtype, np.floating) or arr.ndim != 1 or arr.size == 0:
            raise ValueError(
                f"kernel.{name} must be a non-empty 1-D float array, got dtype {arr.dtype} "
                f"and shape {arr.shape}"
            )
        if not (np.isfinite(arr).all() and arr.min() >= 0):
            bad = int(np.argmax(~(np.isfinite(arr) & (arr >= 0))))
            value = arr[bad].item()
            raise ValueError(
                f"kernel.{name} must be finite and non-negative, got {value!r} at index {bad}"
            )
        arrays.append(arr.astype(np.float64, copy=False))
    q, c, diagonal = arrays
    if not q.shape == c.shape == diagonal.shape:
        raise ValueError(
            "kernel.q_sorted, kernel.c and kernel.diagonal_sorted must have one length, got "
            f"{q.shape}, {c.shape} and {diagonal.shape}"
        )
    return q, c, diagonal


def minimax_realized_epsilon(kernel: MinimaxKernel) -> float:
    """The realised ε of a minimax kernel, from its stored arrays in O(n) time and memory.

    Equal to ``realized_epsilon(K)`` for the kernel ``K`` that :func:`ldpsample.apply_minimax`
    and :mod:`ldpsample.minimax_sparse` apply, without building ``K``: in the kernel's sorted
    order (``docs/minimax.md``, closed form of Algorithm 1), column ``j`` of ``K`` holds

        q_j c_i  (i < j),        K_jj = diagonal_sorted[j],        q_j c_j  (i > j),

    so its largest and smallest entries are ``q_j`` times the largest and smallest of the
    off-diagonal coefficients ``{c_i : i < j} ∪ {c_j if j < n - 1}`` (exclusive running
    maxima and minima of ``c``), compared with the diagonal entry. Nothing is taken on trust:
    not ``kernel.epsilon`` (a kernel whose coefficients were built for 3ε reports 3ε), not the
    monotonicity of ``c`` (the running extremes hold for any ``c``) and not the diagonal (read
    as stored). As in :func:`realized_epsilon`, an all-zero column (an item of prior mass 0) is
    never released and constrains nothing, and a column with a zero and a positive entry gives
    ``inf``. The products and comparisons are the dense matrix's own, so for a kernel from
    :func:`ldpsample.minimax_coefficients` (``c`` non-increasing) the result equals
    ``realized_epsilon(kernel.dense())`` bit for bit.

    Parameters
    ----------
    kernel
        A :class:`ldpsample.MinimaxKernel` (:func:`ldpsample.minimax_coefficients`).

    Returns
    -------
    float
        ``max_j log(max_i K_ij / min_i K_ij)`` over the used columns; 0 for ``n = 1``.

    Raises
    ------
    TypeError
        If ``kernel`` is not a :class:`ldpsample.MinimaxKernel`.
    ValueError
        If its arrays are not finite, non-negative 1-D arrays of one length.
    """
    q, c, diagonal = _kernel_arrays(kernel)
    n = q.shape[0]
    if n == 1:  # K = [[diagonal]]: one entry per column
        return _epsilon_of_columns(diagonal, diagonal)
    # Off-diagonal coefficients of column j: c_i for i < j (exclusive running extremes) and,
    # below the diagonal, c_j itself (rows i > j exist for j < n - 1).
    high = np.empty(n)
    low = np.empty(n)
    high[0] = low[0] = c[0]  # column 0: only rows below it, all q_0 c_0
    np.maximum.accumulate(c[:-1], out=high[1:])
    np.minimum.accumulate(c[:-1], out=low[1:])
    np.maximum(high[:-1], c[:-1], out=high[:-1])
    np.minimum(low[:-1], c[:-1], out=low[:-1])
    column_max = np.maximum(q * high, diagonal)
    column_min = np.minimum(q * low, diagonal)
    return _epsilon_of_columns(column_max, column_min)


def worst_case_divergence(K: ArrayLike, divergence: DivergenceLike = "tv") -> float:
    """``sup_p D_f(p || pK)`` over all distributions ``p`` (Lemma 1).

    ``p -> D_f(p || pK)`` is convex (joint convexity of f-divergences, and ``pK`` is linear in
    ``p``), so its supremum over the simplex is attained at a vertex ``δ_i``; and
    ``D_f(δ_i || K[i, :]) = K_ii f(1 / K_ii) + (1 - K_ii) f(0)`` depends only on the diagonal.
    Hence the result is ``max_i`` of :func:`ldpsample.point_mass_divergence` of ``K_ii``. For the
    minimax kernel it equals :func:`ldpsample.minimax.minimax_risk` (Theorem 1).

    Parameters
    ----------
    K
        Square row-stochastic matrix (outputs are the same items as inputs).
    divergence
        Built-in name or :class:`ldpsample.Divergence`.
    """
    arr = _as_kernel(K)
    if arr.shape[0] != arr.shape[1]:
        raise ValueError(f"K must be square (outputs are the input items), got shape {arr.shape}")
    return float(np.max(point_mass_divergence(np.diagonal(arr), divergence)))


def _check_prior_shape(K: FloatArray, q: FloatArray) -> None:
    if K.shape != (q.shape[0], q.shape[0]):
        raise ValueError(
            f"K must have shape (n, n) = {(q.shape[0], q.shape[0])} for a prior of {q.shape[0]} "
            f"items, got {K.shape}"
        )


def preserves_prior(K: ArrayLike, q: ArrayLike, *, atol: float = 1e-9) -> bool:
    """Whether ``qK = q`` within ``atol`` in every coordinate (the public prior is preserved).

    Raises
    ------
    ValueError
        If ``K`` is not a row-stochastic ``(n, n)`` matrix or ``q`` is not a distribution on
        ``n`` items.
    """
    arr = _as_kernel(K)
    q_arr = check_distribution(q, name="q")
    _check_prior_shape(arr, q_arr)
    return bool(np.max(np.abs(q_arr @ arr - q_arr)) <= atol)


def check_kernel(
    K: ArrayLike, *, epsilon: float, q: ArrayLike | None = None, atol: float = 1e-9
) -> None:
    """Raise ``ValueError`` naming the first property that ``K`` fails; return None otherwise.

    Checked in order: ``K`` is a finite 2-D matrix; no entry is negative (below ``-atol``); every
    row sums to 1 within ``atol``; ``K`` is ε-LDP, i.e. ``realized_epsilon(K) <= ε + atol``; and,
    when ``q`` is given, ``K`` is ``(n, n)`` and ``qK = q`` within ``atol``.

    Parameters
    ----------
    K
        Candidate kernel.
    epsilon
        Privacy budget ε >= 0 it must satisfy.
    q
        Optional public prior it must preserve.
    atol
        Absolute tolerance for all comparisons.
    """
    eps = check_epsilon(epsilon)
    arr = np.asarray(K)
    if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_) or np.iscomplexobj(arr):
        raise TypeError(f"K must be an array of real numbers, got dtype {arr.dtype}")
    arr = arr.astype(np.float64, copy=False)
    if arr.ndim != 2 or arr.size == 0:
        raise ValueError(f"K must be a non-empty 2-D matrix, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError("K has non-finite entries")
    if arr.min() < -atol:
        i, j = np.unravel_index(np.argmin(arr), arr.shape)
        raise ValueError(f"K has a negative entry: K[{i}, {j}] = {arr[i, j]!r}")
    sums = arr.sum(axis=1)
    bad = np.abs(sums - 1.0) > atol
    if bad.any():
        row = int(np.argmax(bad))
        raise ValueError(f"K rows must sum to 1 within {atol:g}: row {row} sums to {sums[row]!r}")
    realized = _realized_epsilon(np.clip(arr, 0.0, None))
    if realized > eps + atol:
        raise ValueError(
            f"K is not epsilon-LDP for epsilon={eps!r}: its realized epsilon is {realized!r}"
        )
    if q is not None:
        q_arr = check_distribution(q, name="q")
        _check_prior_shape(arr, q_arr)
        gap = float(np.max(np.abs(q_arr @ arr - q_arr)))
        if gap > atol:
            raise ValueError(f"K does not preserve the prior: max |qK - q| = {gap!r} > {atol:g}")
